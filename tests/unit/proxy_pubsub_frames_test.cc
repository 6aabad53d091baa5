// The pub/sub frames the proxy writes itself, byte for byte as redis-server 7.0.15 writes them
// (captured with a raw socket in RESP2 and after HELLO 3).
#include <gtest/gtest.h>

#include "proxy/merge/pubsub_frames.h"

namespace shardctl::proxy {
namespace {

TEST(PubSubFramesTest, SubscriptionRepliesMatchRedis) {
  EXPECT_EQ(SubscriptionReply("subscribe", "a", 1, 2),
            "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(SubscriptionReply("subscribe", "a", 1, 3),
            ">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(SubscriptionReply("unsubscribe", std::nullopt, 0, 2),
            "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
  EXPECT_EQ(SubscriptionReply("unsubscribe", std::nullopt, 0, 3),
            ">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
  EXPECT_EQ(SubscriptionReply("sunsubscribe", "s", 0, 2),
            "*3\r\n$12\r\nsunsubscribe\r\n$1\r\ns\r\n:0\r\n");
}

TEST(PubSubFramesTest, SubscribedPingIsAnArrayInResp2) {
  EXPECT_EQ(SubscribedPong(""), "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  EXPECT_EQ(SubscribedPong("x"), "*2\r\n$4\r\npong\r\n$1\r\nx\r\n");
}

TEST(PubSubFramesTest, MessagesKeepTheirElementsInEitherProtocol) {
  const std::string push = ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
  EXPECT_EQ(MessageForProtocol(push, 3), push);
  EXPECT_EQ(MessageForProtocol(push, 2), "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n");
}

TEST(PubSubFramesTest, GlobMatchAsRedisMatchesPatterns) {
  struct Case {
    std::string_view pattern, text;
    bool match;
  };
  const Case cases[] = {{"*", "__keyspace@0__:foo", true},
                        {"__key*@*__:*", "__keyevent@0__:set", true},
                        {"h?llo", "hello", true},
                        {"h?llo", "hllo", false},
                        {"h[ae]llo", "hallo", true},
                        {"h[^e]llo", "hello", false},
                        {"h[a-c]llo", "hbllo", true},
                        {"h\\*llo", "h*llo", true},
                        {"h\\*llo", "hello", false},
                        {"foo*", "bar", false},
                        {"a*b*c", "a-b-b-c", true},
                        {"a*b*c", "a-b-b-d", false},
                        {"", "", true}};
  for (const Case& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.text), c.match) << c.pattern << " / " << c.text;
  }
}

TEST(PubSubFramesTest, KeyspaceNamesAndTheirMessages) {
  EXPECT_TRUE(IsKeyspaceChannel("__keyevent@0__:expired"));
  EXPECT_FALSE(IsKeyspaceChannel("news"));
  EXPECT_TRUE(MayMatchKeyspace("*", /*pattern=*/true));
  EXPECT_TRUE(MayMatchKeyspace("__key*", true));
  EXPECT_TRUE(MayMatchKeyspace("__keyspace@0__:*", true));
  EXPECT_FALSE(MayMatchKeyspace("news*", true));
  EXPECT_FALSE(MayMatchKeyspace("*", /*pattern=*/false));  // a channel named "*"
  EXPECT_TRUE(MayMatchKeyspace("__keyspace@0__:foo", false));
  EXPECT_EQ(MessagePush("*", "__keyspace@0__:foo", "set"),
            ">4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyspace@0__:foo\r\n$3\r\nset\r\n");
  EXPECT_EQ(MessagePush("", "c", "x"), ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
