// A client's replies as Redis would write them: the ready ones at once, whatever another shard
// is doing; and every one it is owed when it half-closes its socket after its last request
// (`nc -N`, a script's shutdown(SHUT_WR)), but not a wait for a blocked command.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using Clock = std::chrono::steady_clock;

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

std::string Bulk(const std::string& value) {
  return "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

long long Millis(Clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

TEST_F(ProxyTest, ReadyRepliesDoNotWaitForAPausedShard) {
  UpWithProxy({"--timeout", "20s"});
  ASSERT_FALSE(HasFailure());
  const std::string fast_key = KeyOn(shard_port(0), "ready:");
  const std::string slow_key = KeyOn(shard_port(1), "ready:");
  ASSERT_EQ(TextOf(Proxy({"SET", fast_key, "fast"})), "OK");
  ASSERT_EQ(TextOf(Proxy({"SET", slow_key, "slow"})), "OK");
  const long long keys_before = Keys();

  // The median of a few tries: one slow loop turn on a busy machine says nothing, a reply kept
  // back until the other shard answers (or until a periodic tick) shows in every try.
  std::vector<long long> first_ms;
  for (int attempt = 0; attempt < 5; ++attempt) {
    RawConnection client(proxy_port());
    ASSERT_TRUE(client.connected());
    ASSERT_EQ(TextOf(QueryRedis(shard_port(1), {"CLIENT", "PAUSE", "400", "ALL"})), "OK");
    const auto sent = Clock::now();
    ASSERT_TRUE(client.Send(Command({"GET", fast_key}) + Command({"GET", slow_key})));
    EXPECT_EQ(client.ReadUntil(Bulk("fast").size(), 2s), Bulk("fast"));
    first_ms.push_back(Millis(Clock::now() - sent));
    EXPECT_EQ(client.ReadUntil(Bulk("slow").size(), 15s), Bulk("slow"));
    // Else the shard was not paused and this try showed nothing.
    EXPECT_GE(Millis(Clock::now() - sent), 200) << "shard 1 answered while paused";
  }
  std::sort(first_ms.begin(), first_ms.end());
  EXPECT_LT(first_ms[first_ms.size() / 2], 25)
      << "the ready reply waited: " << ::testing::PrintToString(first_ms) << " ms";
  EXPECT_EQ(Keys(), keys_before);
}

// A pipeline across the shards, bigger than --max-pending (the rest is read after replies
// drain), then EOF: every reply comes, then the proxy closes.
TEST_F(ProxyTest, AHalfClosedClientGetsEveryReplyItIsOwed) {
  UpWithProxy({"--max-pending", "4"});
  ASSERT_FALSE(HasFailure());
  const long long keys_before = Keys();
  std::string pipeline, expected;
  for (int shard = 0; shard < 3; ++shard) {
    for (int i = 0; i < 3; ++i) {
      const std::string key = KeyOn(shard_port(shard), "half:" + std::to_string(i) + ":");
      pipeline += Command({"SET", key, "v" + std::to_string(i)}) + Command({"GET", key});
      expected += "+OK\r\n" + Bulk("v" + std::to_string(i));
    }
  }
  pipeline += "PING\r\n";  // inline, as `printf 'PING\r\n' | nc -N` sends it
  expected += "+PONG\r\n";
  for (int attempt = 0; attempt < 3; ++attempt) {
    RawConnection client(proxy_port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.Send(pipeline));
    ASSERT_TRUE(client.ShutdownWrite());
    bool closed = false;
    EXPECT_EQ(client.ReadUntilClosed(10s, &closed), expected) << "attempt " << attempt;
    EXPECT_TRUE(closed) << "the proxy kept a half-closed client open after its last reply";
  }
  EXPECT_EQ(Keys(), keys_before + 9);
  EXPECT_EQ(TextOf(Proxy({"PING"})), "PONG");
}

// A blocked command is not waited for: as Redis frees a blocked client whose peer closed, the
// connection closes at once and the shard stops blocking for it.
TEST_F(ProxyTest, AHalfClosedClientBlockedOnAListIsClosedAtOnce) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  const std::string list = KeyOn(shard_port(1), "half-list:");
  const long long keys_before = Keys();
  auto blocked_on_shard = [&] {
    auto info = QueryRedis(shard_port(1), {"INFO", "clients"});
    return info && info->text.find("\r\nblocked_clients:1\r\n") != std::string::npos;
  };
  RawConnection client(proxy_port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Command({"BLPOP", list, "0"})));
  // The BLPOP has reached the shard before the EOF does.
  ASSERT_TRUE(WaitUntil(blocked_on_shard, 10s, 20ms));
  ASSERT_TRUE(client.ShutdownWrite());
  bool closed = false;
  EXPECT_EQ(client.ReadUntilClosed(5s, &closed), "");
  EXPECT_TRUE(closed) << "a half-closed client stayed open behind its BLPOP";
  EXPECT_TRUE(WaitUntil([&] { return !blocked_on_shard(); }, 10s, 20ms));
  // Nobody pops what comes next: the shard no longer blocks for the gone client.
  ASSERT_EQ(IntegerOf(Proxy({"RPUSH", list, "x"})), 1);
  EXPECT_EQ(IntegerOf(Proxy({"LLEN", list})), 1);
  EXPECT_EQ(Keys(), keys_before + 1);
}

}  // namespace
}  // namespace shardctl::integration
