#include "common/request_text.h"

#include <gtest/gtest.h>

namespace shardctl::common {
namespace {

constexpr int64_t kLimit = 512 * 1024 * 1024;

std::string ErrorOf(std::string_view bytes) {
  auto problem = ExamineBadRequest(bytes, kLimit);
  return problem ? problem->error : "<none>";
}

// The texts Redis' networking.c gives (and its tests/unit/protocol.tcl matches).
TEST(RequestTextTest, NamesRequestErrorsInRedisWords) {
  EXPECT_EQ(ErrorOf("*3000000000\r\n"), "Protocol error: invalid multibulk length");
  EXPECT_EQ(ErrorOf("*x\r\n"), "Protocol error: invalid multibulk length");
  EXPECT_EQ(ErrorOf("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n"),
            "Protocol error: expected '$', got 'f'");
  EXPECT_EQ(ErrorOf("*1\r\nfoo\r\n"), "Protocol error: expected '$', got 'f'");
  EXPECT_EQ(ErrorOf("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$-10\r\n"),
            "Protocol error: invalid bulk length");
  EXPECT_EQ(ErrorOf("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2000000000\r\n"),
            "Protocol error: invalid bulk length");
  EXPECT_EQ(ErrorOf("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$blabla\r\n"),
            "Protocol error: invalid bulk length");
}

TEST(RequestTextTest, EmptyAndNegativeHeadersAreSkipped) {
  for (std::string_view header : {"*-10\r\n", "*0\r\n", "*-1\r\n"}) {
    auto problem = ExamineBadRequest(std::string(header) + "*1\r\n$4\r\nPING\r\n", kLimit);
    ASSERT_TRUE(problem) << header;
    EXPECT_EQ(problem->skip, header.size());
    EXPECT_EQ(problem->error, "");
  }
}

TEST(RequestTextTest, LeavesWellFormedOrIncompleteBytesToTheScanner) {
  for (std::string_view bytes : {"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "*2\r\n$3\r\nGET\r\n", "*2",
                                 "*2\r\n$3\r\nGE", "$3\r\nfoo\r\n", ""}) {
    EXPECT_FALSE(ExamineBadRequest(bytes, kLimit)) << bytes;
  }
}

TEST(RequestTextTest, SplitsQuotedInlineArgumentsAsRedis) {
  using Words = std::vector<std::string>;
  auto split = [](std::string_view line) {
    auto words = SplitQuotedArgs(line);
    return words ? *words : Words{"<error>"};
  };
  EXPECT_EQ(split("set \"a b\" 'c d'"), (Words{"set", "a b", "c d"}));
  EXPECT_EQ(split("  set k\t\"\\x41\\n\\\"\"  "), (Words{"set", "k", "A\n\""}));
  EXPECT_EQ(split("set 'it\\'s' x\"y z\""), (Words{"set", "it's", "xy z"}));
  EXPECT_EQ(split("echo \"\""), (Words{"echo", ""}));
  EXPECT_EQ(split(""), Words{});
  for (std::string_view bad :
       {"set \"\"\"test-key\"\"\" v", "set \"open", "set 'open", "set \"a\"b"}) {
    auto words = SplitQuotedArgs(bad);
    ASSERT_FALSE(words) << bad;
    EXPECT_EQ(words.error().message(), "Protocol error: unbalanced quotes in request");
  }
}

}  // namespace
}  // namespace shardctl::common
