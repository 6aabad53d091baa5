// A client's pipeline across shards: the replies ready while the next one is still on its way
// from a shard wait one loop turn for it (one write to the client instead of two), and never
// longer: not for a shard that is slow to answer, and not at all for a blocking command.
#include <chrono>
#include <string>

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

TEST_F(ProxyTest, RepliesBeforeAPausedShardsWaitOneTurnNotForTheShard) {
  UpWithProxy({"--timeout", "20s"});
  ASSERT_FALSE(HasFailure());
  const std::string fast_key = KeyOn(shard_port(0), "held:");
  const std::string slow_key = KeyOn(shard_port(1), "held:");
  ASSERT_EQ(TextOf(Proxy({"SET", fast_key, "fast"})), "OK");
  ASSERT_EQ(TextOf(Proxy({"SET", slow_key, "slow"})), "OK");
  const long long keys_before = Keys();
  const long long held_before = ProxyCounter("client_writes_held");
  ASSERT_GE(held_before, 0);

  RawConnection client(proxy_port());
  ASSERT_TRUE(client.connected());
  // Shard 1 answers nobody for 2 s: the pipeline's second reply is due, not coming soon.
  ASSERT_EQ(TextOf(QueryRedis(shard_port(1), {"CLIENT", "PAUSE", "2000", "ALL"})), "OK");
  const auto sent = Clock::now();
  ASSERT_TRUE(client.Send(Command({"GET", fast_key}) + Command({"GET", slow_key})));
  const std::string first = client.ReadUntil(Bulk("fast").size(), 1500ms);
  const auto first_at = Clock::now() - sent;
  EXPECT_EQ(first, Bulk("fast")) << "the ready reply waited for the paused shard ("
                                 << Millis(first_at) << " ms)";
  const std::string second = client.ReadUntil(Bulk("slow").size(), 15s);
  const auto second_at = Clock::now() - sent;
  EXPECT_EQ(second, Bulk("slow"));
  // Else the shard was not paused and this test showed nothing.
  EXPECT_GE(second_at, 1000ms) << "shard 1 answered in " << Millis(second_at) << " ms";
  EXPECT_GT(ProxyCounter("client_writes_held"), held_before)
      << "the ready reply was written without waiting a turn for the one due";
  EXPECT_EQ(Keys(), keys_before);
}

TEST_F(ProxyTest, ABlockingCommandHoldsNoReplyBeforeIt) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  const std::string key = KeyOn(shard_port(0), "held:");
  const std::string list = KeyOn(shard_port(1), "held-list:");
  const long long keys_before = Keys();
  const long long held_before = ProxyCounter("client_writes_held");
  ASSERT_GE(held_before, 0);

  RawConnection client(proxy_port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Command({"SET", key, "v"}) + Command({"BLPOP", list, "0"})));
  EXPECT_EQ(client.ReadUntil(5, 5s), "+OK\r\n");
  EXPECT_EQ(ProxyCounter("client_writes_held"), held_before)
      << "a write waited for a blocked command's reply";
  ASSERT_EQ(IntegerOf(Proxy({"RPUSH", list, "x"})), 1);
  const std::string popped = "*2\r\n" + Bulk(list) + Bulk("x");
  EXPECT_EQ(client.ReadUntil(popped.size(), 10s), popped);
  EXPECT_EQ(Keys(), keys_before + 1) << "the SET's key, the list popped empty";
}

}  // namespace
}  // namespace shardctl::integration
