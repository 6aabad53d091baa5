// Whether slot moves fit in their targets' memory (launcher/cluster/move_room.h), on tables of
// what INFO memory, DBSIZE and COUNTKEYSINSLOT would say. No sockets.
#include "launcher/cluster/move_room.h"

#include <gtest/gtest.h>

namespace shardctl::launcher {
namespace {

constexpr uint64_t kMb = 1024 * 1024;

PrimaryMemory Shard(int index, uint64_t used, uint64_t maxmemory, uint64_t bytes_per_key) {
  return {.name = "shard " + std::to_string(index),
          .used = used,
          .maxmemory = maxmemory,
          .bytes_per_key = bytes_per_key};
}

SlotMove Move(int source, int target) {
  return {.source = source, .target = target, .ranges = {{0, 99}}};
}

TEST(MoveRoomTest, MovesThatStayUnderNinetyPercentFit) {
  // 4 MB used + 4,000 keys of 600 B (2.3 MB) = 6.3 MB of 8 MB: 79%.
  const std::vector<PrimaryMemory> memory = {Shard(0, 4 * kMb, 8 * kMb, 600),
                                             Shard(1, 4 * kMb, 8 * kMb, 600)};
  EXPECT_EQ(WhyMovesDoNotFit(memory, {Move(1, 0)}, {4000}), std::nullopt);
}

TEST(MoveRoomTest, TheFirstTargetPastNinetyPercentIsNamedWithItsNumbers) {
  // Two sources drain into shard 0: 4 MB + 2 x 4,000 keys of 600 B = 8.6 MB of 8 MB.
  const std::vector<PrimaryMemory> memory = {Shard(0, 4 * kMb, 8 * kMb, 600),
                                             Shard(1, 4 * kMb, 8 * kMb, 600),
                                             Shard(2, 4 * kMb, 8 * kMb, 600)};
  auto why = WhyMovesDoNotFit(memory, {Move(1, 0), Move(2, 0)}, {4000, 4000});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind("shard 0 would use about 8.6mb", 0), 0u) << *why;
  EXPECT_NE(why->find("receive 8000 keys"), std::string::npos) << *why;
  EXPECT_NE(why->find("maxmemory 8mb"), std::string::npos) << *why;
  EXPECT_NE(why->find("nothing was moved"), std::string::npos) << *why;
}

TEST(MoveRoomTest, IncomingKeysCostWhatTheyCostOnTheirSource) {
  // Shard 1's keys are big (5 KB each): 1,000 of them are 4.8 MB, too many for shard 0's room.
  const std::vector<PrimaryMemory> memory = {Shard(0, 3 * kMb, 8 * kMb, 100),
                                             Shard(1, 6 * kMb, 64 * kMb, 5000)};
  EXPECT_TRUE(WhyMovesDoNotFit(memory, {Move(1, 0)}, {1000}).has_value());
  EXPECT_EQ(WhyMovesDoNotFit(memory, {Move(0, 1)}, {1000}), std::nullopt);
}

TEST(MoveRoomTest, NoCapOrNoIncomingKeysAlwaysFits) {
  const std::vector<PrimaryMemory> memory = {Shard(0, 100 * kMb, 0, 600),  // maxmemory 0: no cap
                                             Shard(1, 7900 * 1024, 8 * kMb, 600)};
  EXPECT_EQ(WhyMovesDoNotFit(memory, {Move(1, 0)}, {1'000'000}), std::nullopt);
  // Shard 1 is nearly full, but empty slots cost it nothing.
  EXPECT_EQ(WhyMovesDoNotFit(memory, {Move(0, 1)}, {0}), std::nullopt);
  EXPECT_EQ(WhyMovesDoNotFit(memory, {}, {}), std::nullopt);
}

SlotMove OpenSlot(int slot, int source, int target) {
  return {.source = source, .target = target, .ranges = {{slot, slot}}};
}

TEST(MoveRoomTest, FinishingAnOpenMoveMayFillItsTargetUpTo95Percent) {
  // Shard 1 uses 7 MB of 8 MB; shard 0 still holds the slot's keys of 100 KB each.
  const std::vector<PrimaryMemory> memory = {Shard(0, 3 * kMb, 8 * kMb, 100 * 1024),
                                             Shard(1, 7 * kMb, 8 * kMb, 600)};
  // 6 keys: 7.6 MB (95% is 7.6 MB): past 90%, not past 95%: finished.
  EXPECT_EQ(WhyOpenMovesCannotFinish(memory, {OpenSlot(100, 0, 1)}, {6}), std::nullopt);
  EXPECT_TRUE(WhyMovesDoNotFit(memory, {OpenSlot(100, 0, 1)}, {6}).has_value())
      << "a planned move keeps the 10% margin";
  auto why = WhyOpenMovesCannotFinish(memory, {OpenSlot(100, 0, 1), OpenSlot(101, 0, 1)}, {6, 6});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind("the move of slots 100-101 from shard 0 into shard 1 was left half done", 0),
            0u)
      << *why;
  EXPECT_NE(why->find("shard 1 would use about 8.2mb after finishing it"), std::string::npos)
      << *why;
  EXPECT_NE(why->find("over 95% of its maxmemory 8mb"), std::string::npos) << *why;
  EXPECT_NE(why->find("free memory on shard 1"), std::string::npos) << *why;
  why = WhyOpenMovesCannotFinish(memory, {OpenSlot(100, 0, 1)}, {12});
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind("the move of slot 100 from", 0), 0u) << *why;
}

TEST(MoveRoomTest, EverySourceOfAFullTargetIsNamedOnce) {
  std::vector<PrimaryMemory> memory;
  for (int i = 0; i <= 10; ++i) memory.push_back(Shard(i, 7 * kMb, 8 * kMb, 100 * 1024));
  auto why = WhyOpenMovesCannotFinish(
      memory, {OpenSlot(5, 1, 0), OpenSlot(6, 10, 0), OpenSlot(7, 1, 0)}, {10, 10, 10});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("slots 5-7 from shard 1, shard 10 into shard 0"), std::string::npos) << *why;
}

}  // namespace
}  // namespace shardctl::launcher
