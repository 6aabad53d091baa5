// A client's pipeline across shards: the replies that are ready go to the client at once, as
// Redis writes a reply in the loop turn that made it, whatever another shard is doing.
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

}  // namespace
}  // namespace shardctl::integration
