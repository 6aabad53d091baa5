// common/text.h: trimming, and the shell quoting of the commands our hints print.
#include <gtest/gtest.h>

#include "common/text.h"

namespace shardctl::common {
namespace {

TEST(TrimSpaceTest, DropsSpaceAtBothEnds) {
  EXPECT_EQ(TrimSpace("  7.0.15\r\n"), "7.0.15");
  EXPECT_EQ(TrimSpace("\t \n"), "");
  EXPECT_EQ(TrimSpace("a b"), "a b");
}

// A printed hint is copied into a shell: a state dir with spaces or quotes must stay one word.
TEST(ShellQuoteTest, QuotesOnlyWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(ShellQuote("/var/lib/shardctl"), "/var/lib/shardctl");
  EXPECT_EQ(ShellQuote("main-1"), "main-1");
  EXPECT_EQ(ShellQuote("/tmp/my state"), "'/tmp/my state'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
}

// An error quoting a byte from the wire stays one printable line.
TEST(PrintableByteTest, EscapesWhatIsNotPrintableAscii) {
  EXPECT_EQ(PrintableByte('+'), "+");
  EXPECT_EQ(PrintableByte('\r'), "\\x0d");
  EXPECT_EQ(PrintableByte('\0'), "\\x00");
  EXPECT_EQ(PrintableByte('\x7f'), "\\x7f");
  EXPECT_EQ(PrintableByte('\xff'), "\\xff");
}

}  // namespace
}  // namespace shardctl::common
