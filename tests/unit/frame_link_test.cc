// The reply parts the key copy reads from frames (launcher/cluster/frame_link.h): TTLs, errors,
// nils and bulk lengths, as the bytes Redis sends.
#include "launcher/cluster/frame_link.h"

#include <gtest/gtest.h>

#include <string>

namespace shardctl::launcher {
namespace {

TEST(FrameLinkTest, IntegersAreReadOnlyFromIntegerFrames) {
  EXPECT_EQ(FrameInteger(":3600000\r\n"), 3600000);
  EXPECT_EQ(FrameInteger(":-2\r\n"), -2);
  EXPECT_EQ(FrameInteger(":-1\r\n"), -1);
  EXPECT_FALSE(FrameInteger("$1\r\n5\r\n"));
  EXPECT_FALSE(FrameInteger("-ERR x\r\n"));
  EXPECT_FALSE(FrameInteger(":\r\n"));
}

TEST(FrameLinkTest, ErrorsNilsAndBulkLengths) {
  EXPECT_TRUE(IsErrorFrame("-WRONGTYPE Operation against a key\r\n"));
  EXPECT_EQ(ErrorText("-WRONGTYPE Operation against a key\r\n"),
            "WRONGTYPE Operation against a key");
  EXPECT_FALSE(IsErrorFrame("+OK\r\n"));
  EXPECT_TRUE(IsNilFrame("$-1\r\n"));
  EXPECT_FALSE(IsNilFrame("$0\r\n\r\n"));
  EXPECT_EQ(BulkLength("$0\r\n\r\n"), 0u);
  EXPECT_EQ(BulkLength("$5\r\na\r\nbc\r\n"), 5u);  // binary safe: CRLF inside
  const std::string big = "$100000\r\n" + std::string(100000, 'x') + "\r\n";
  EXPECT_EQ(BulkLength(big), 100000u);
}

}  // namespace
}  // namespace shardctl::launcher
