#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/reply_tree.h"

namespace shardctl::common {
namespace {

TEST(DecodeReplyTest, Scalars) {
  auto simple = DecodeReply("+OK\r\n");
  ASSERT_TRUE(simple);
  EXPECT_EQ(simple->type, '+');
  EXPECT_EQ(simple->text, "OK");
  auto integer = DecodeReply(":-42\r\n");
  ASSERT_TRUE(integer);
  EXPECT_EQ(integer->integer, -42);
  auto bulk = DecodeReply("$5\r\na\r\nbc\r\n");  // binary safe: CRLF inside
  ASSERT_TRUE(bulk);
  EXPECT_EQ(bulk->text, "a\r\nbc");
}

TEST(DecodeReplyTest, NullsOfBothProtocolsAreUnderscore) {
  for (std::string_view frame : {"$-1\r\n", "*-1\r\n", "_\r\n"}) {
    auto node = DecodeReply(frame);
    ASSERT_TRUE(node) << frame;
    EXPECT_EQ(node->type, '_') << frame;
  }
}

TEST(DecodeReplyTest, MapsHoldKeysAndValues) {
  auto map = DecodeReply("%2\r\n+a\r\n:1\r\n+b\r\n*1\r\n#t\r\n");
  ASSERT_TRUE(map) << map.error().message();
  EXPECT_EQ(map->type, '%');
  ASSERT_EQ(map->elements.size(), 4u);
  EXPECT_EQ(map->elements[3].elements[0].text, "t");
}

TEST(DecodeReplyTest, AttributesAreSkipped) {
  auto node = DecodeReply("|1\r\n+ttl\r\n:3\r\n*1\r\n:7\r\n");
  ASSERT_TRUE(node) << node.error().message();
  EXPECT_EQ(node->type, '*');
  EXPECT_EQ(node->elements[0].integer, 7);
}

TEST(DecodeReplyTest, EveryTruncationIsAnError) {
  const std::string frame = "*2\r\n$3\r\nfoo\r\n%1\r\n+k\r\n:1\r\n";
  ASSERT_TRUE(DecodeReply(frame));
  for (size_t n = 0; n < frame.size(); ++n) {
    EXPECT_FALSE(DecodeReply(std::string_view(frame).substr(0, n))) << n;
  }
  EXPECT_FALSE(DecodeReply(frame + "+x\r\n"));
}

}  // namespace
}  // namespace shardctl::common
