// CLUSTER SLOT-STATS replies as the control client flattens them, and the per-slot load made of
// them: the slot's own execution CPU plus its byte share of the rest of its process' CPU.
#include "launcher/cluster/slot_stats.h"

#include <gtest/gtest.h>

namespace shardctl::launcher {
namespace {

TEST(SlotStatsTest, ParsesSlotsAndTheirFieldsInAnyOrder) {
  const std::string reply =
      "12182\nkey-count\n1\ncpu-usec\n43\nnetwork-bytes-in\n93\nnetwork-bytes-out\n15\n"
      "0\ncpu-usec\n7\nkey-count\n0\n"
      "5\nkey-count\n2\n";
  auto stats = ParseSlotStats(reply);
  ASSERT_TRUE(stats.ok()) << stats.error().message();
  ASSERT_EQ(stats->size(), 3u);
  EXPECT_EQ(stats->at(12182),
            (SlotStat{.keys = 1, .cpu_usec = 43, .bytes_in = 93, .bytes_out = 15}));
  EXPECT_EQ(stats->at(0), (SlotStat{.keys = 0, .cpu_usec = 7}));
  EXPECT_EQ(stats->at(5).keys, 2u);
  EXPECT_TRUE(ParseSlotStats("").ok());
  EXPECT_FALSE(ParseSlotStats("16384\nkey-count\n1\n").ok());
  EXPECT_FALSE(ParseSlotStats("key-count\n1\n").ok());
}

LoadSample Sample(double process, const std::vector<std::pair<int, SlotStat>>& slots) {
  LoadSample sample{.slots = std::vector<SlotStat>(16384), .process_cpu_usec = {process}};
  for (const auto& [slot, stat] : slots) sample.slots[static_cast<size_t>(slot)] = stat;
  return sample;
}

TEST(SlotStatsTest, TheProcessCpuBeyondExecutionFollowsTheBytes) {
  const std::vector<SlotOwner> owners = {{.id = "a", .shard = 0, .slots = {{0, 9}}}};
  const LoadSample before =
      Sample(1000, {{1, {.cpu_usec = 100, .bytes_in = 0}}, {2, {.cpu_usec = 50, .bytes_in = 0}}});
  // In the window: slot 1 executed 100 µs on 100 bytes, slot 2 50 µs on 300 bytes; the process
  // used 1,150 µs, so 1,000 µs went to I/O: a quarter to slot 1, three quarters to slot 2.
  const LoadSample after = Sample(2150, {{1, {.cpu_usec = 200, .bytes_in = 60, .bytes_out = 40}},
                                         {2, {.cpu_usec = 100, .bytes_in = 300}}});
  const auto loads = SlotLoads(before, after, owners);
  ASSERT_EQ(loads.size(), 16384u);
  EXPECT_DOUBLE_EQ(loads[1], 100 + 250);
  EXPECT_DOUBLE_EQ(loads[2], 50 + 750);
  EXPECT_DOUBLE_EQ(loads[3], 0);
  // Slots another owner lists are that owner's: with none listed, nothing is counted.
  EXPECT_DOUBLE_EQ(SlotLoads(before, after, {{.id = "b", .shard = 1, .slots = {{100, 200}}}})[1],
                   0);
}

TEST(SlotStatsTest, WithoutBytesOrSpareCpuOnlyExecutionCounts) {
  const std::vector<SlotOwner> owners = {{.id = "a", .shard = 0, .slots = {{0, 16383}}}};
  const LoadSample before = Sample(500, {{7, {.cpu_usec = 10}}});
  // The process counter moved less than the slots' execution (its resolution): no I/O share.
  const LoadSample after = Sample(520, {{7, {.cpu_usec = 40, .bytes_in = 10}}});
  EXPECT_DOUBLE_EQ(SlotLoads(before, after, owners)[7], 30);
  // A counter that went back (the node restarted in the window) counts as nothing, not negative.
  const LoadSample restarted = Sample(0, {{7, {.cpu_usec = 5}}});
  EXPECT_DOUBLE_EQ(SlotLoads(before, restarted, owners)[7], 0);
}

}  // namespace
}  // namespace shardctl::launcher
