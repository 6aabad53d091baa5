// Blocking commands through shardproxy: they run over a connection pinned to their client, so a
// blocked BLPOP never stalls other clients' commands for the same shard, and the pinned
// connection goes away with its client.
#include <hiredis/hiredis.h>

#include <future>
#include <thread>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using Clock = std::chrono::steady_clock;

class ProxyBlockingTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    // One proxy thread: every client shares the same shard connections.
    auto up = Up(2, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-threads", "1"});
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
  }

  int ProxyPort() const { return base_port() + 45; }

  // Clients on the shards blocked in `command`, per CLIENT LIST.
  int BlockedOnShards(const std::string& command) {
    int blocked = 0;
    for (int shard = 0; shard < 2; ++shard) {
      auto list = QueryRedis(base_port() + shard, {"CLIENT", "LIST"});
      if (!list) continue;
      for (const auto& line : SplitLines(list->text)) {
        if (line.find("cmd=" + command) != std::string::npos &&
            line.find("flags=b") != std::string::npos) {
          ++blocked;
        }
      }
    }
    return blocked;
  }
};

// BLPOP on its own connection, from another thread; returns the reply.
std::future<RedisReply> BlpopAsync(int port, const std::string& key, const std::string& timeout) {
  return std::async(std::launch::async, [=] {
    redisContext* context = redisConnect("127.0.0.1", port);
    RedisReply result;
    if (context && !context->err) {
      auto* reply = static_cast<redisReply*>(
          redisCommand(context, "BLPOP %s %s", key.c_str(), timeout.c_str()));
      if (reply) {
        result = ConvertRedisReply(reply);
        freeReplyObject(reply);
      }
    }
    if (context) redisFree(context);
    return result;
  });
}

TEST_F(ProxyBlockingTest, ABlockedClientNeitherStallsOthersNorMissesItsPush) {
  auto blocked = BlpopAsync(ProxyPort(), "{q}jobs", "10");
  ASSERT_TRUE(WaitUntil([&] { return BlockedOnShards("blpop") == 1; }, 5s))
      << "the BLPOP never reached a shard";
  // Others keep being served by the same shard while it blocks, quickly.
  for (int i = 0; i < 20; ++i) {
    const auto started = Clock::now();
    auto reply = QueryRedis(ProxyPort(), {"SET", "{q}other", std::to_string(i)});
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->text, "OK");
    EXPECT_LT(Clock::now() - started, 1s) << "a shared connection stalled behind BLPOP";
  }
  auto pushed = QueryRedis(ProxyPort(), {"RPUSH", "{q}jobs", "job-1"});
  ASSERT_TRUE(pushed);
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready);
  RedisReply popped = blocked.get();
  ASSERT_EQ(popped.elements.size(), 2u) << popped.text;
  EXPECT_EQ(popped.elements[0].text, "{q}jobs");
  EXPECT_EQ(popped.elements[1].text, "job-1");
}

TEST_F(ProxyBlockingTest, ATimeoutEndsWithNilAndCrossSlotKeysAreRefused) {
  const auto started = Clock::now();
  auto timed_out = BlpopAsync(ProxyPort(), "{q}empty", "1");
  ASSERT_EQ(timed_out.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(timed_out.get().kind, RedisReply::Kind::kNil);
  EXPECT_GE(Clock::now() - started, 900ms);
  auto cross = QueryRedis(ProxyPort(), {"BLPOP", "a", "b", "1"});
  ASSERT_TRUE(cross);
  EXPECT_EQ(cross->text.rfind("CROSSSLOT", 0), 0u) << cross->text;
  auto moved = QueryRedis(ProxyPort(), {"LPUSH", "{q}src", "x"});
  ASSERT_TRUE(moved);
  auto blmove = QueryRedis(ProxyPort(), {"BLMOVE", "{q}src", "{q}dst", "LEFT", "RIGHT", "1"});
  ASSERT_TRUE(blmove);
  EXPECT_EQ(blmove->text, "x");
}

TEST_F(ProxyBlockingTest, TheClientGoingAwayUnblocksTheShard) {
  redisContext* context = redisConnect("127.0.0.1", ProxyPort());
  ASSERT_TRUE(context && !context->err);
  ASSERT_EQ(redisAppendCommand(context, "BLPOP {q}never 30"), REDIS_OK);
  int done = 0;
  ASSERT_EQ(redisBufferWrite(context, &done), REDIS_OK);
  ASSERT_TRUE(WaitUntil([&] { return BlockedOnShards("blpop") == 1; }, 5s));
  redisFree(context);
  EXPECT_TRUE(WaitUntil([&] { return BlockedOnShards("blpop") == 0; }, 5s))
      << "the pinned connection outlived its client";
}

}  // namespace
}  // namespace shardctl::integration
