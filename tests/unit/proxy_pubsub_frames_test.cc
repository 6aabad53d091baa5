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

}  // namespace
}  // namespace shardctl::proxy
