// How often the supervisor pings its shards: rounds spread out as shards grow (its idle CPU is
// mostly these PINGs), within what noticing a hung shard in time allows.
#include <gtest/gtest.h>

#include <chrono>

#include "launcher/supervisor/health_checker.h"

namespace shardctl::launcher {
namespace {

using std::chrono::milliseconds;

struct IntervalCase {
  size_t shards;
  milliseconds health_timeout;
  milliseconds interval;
};

const IntervalCase kIntervalCases[] = {
    {1, milliseconds(3000), milliseconds(250)},     // few shards: the fastest rate
    {10, milliseconds(3000), milliseconds(250)},    // 10 x 25 ms = 250 ms
    {16, milliseconds(3000), milliseconds(400)},    // 25 ms per shard
    {40, milliseconds(3000), milliseconds(1000)},   // 40 PINGs a second in all
    {240, milliseconds(3000), milliseconds(1000)},  // capped at a third of the health timeout
    {240, milliseconds(30000), milliseconds(6000)},
    {40, milliseconds(600), milliseconds(250)},  // a short timeout never goes faster than 250 ms
};

TEST(HealthPingIntervalTest, GrowsWithShardsWithinTheHealthTimeout) {
  for (const auto& test : kIntervalCases) {
    SCOPED_TRACE(std::to_string(test.shards) + " shards, timeout " +
                 std::to_string(test.health_timeout.count()) + " ms");
    EXPECT_EQ(HealthPingInterval(test.shards, test.health_timeout), test.interval);
  }
}

}  // namespace
}  // namespace shardctl::launcher
