// The pure rebalancing rules (launcher/cluster/slot_balance.h): who gives which slots to whom when
// scaling out, scaling in, evening slots or keys, and explicit moves.
#include "launcher/cluster/slot_balance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace shardctl::launcher {
namespace {

using common::SlotRange;

// Owners as `up` makes them: `count` primaries with the even split, then `fresh` with nothing.
std::vector<SlotOwner> Owners(int count, int fresh = 0) {
  std::vector<SlotOwner> owners;
  const auto split = common::SplitSlotsEvenly(count);
  for (int i = 0; i < count + fresh; ++i) {
    SlotOwner owner{.id = "node" + std::to_string(i), .shard = i, .slots = {}, .drain = false};
    if (i < count) owner.slots = {split[i]};
    owners.push_back(owner);
  }
  return owners;
}

// The owners after applying `moves`.
std::vector<double> LoadsAfter(std::vector<SlotOwner> owners, const std::vector<SlotMove>& moves,
                               const std::vector<double>& weights = {}) {
  std::vector<double> loads = OwnerLoads(owners, weights);
  for (const auto& move : moves) {
    for (const auto& range : move.ranges) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        const double weight = weights.empty() ? 1.0 : weights[slot];
        loads[move.source] -= weight;
        loads[move.target] += weight;
      }
    }
  }
  return loads;
}

int TotalMoved(const std::vector<SlotMove>& moves) {
  int total = 0;
  for (const auto& move : moves) total += move.SlotCount();
  return total;
}

TEST(PlanBalanceTest, ScaleOutFrom3To6MovesHalfTheSlotsInFewRanges) {
  auto moves = PlanBalance({.owners = Owners(3, 3), .slot_weights = {}, .threshold = 0});
  ASSERT_TRUE(moves.ok()) << moves.error().message();
  const auto loads = LoadsAfter(Owners(3, 3), *moves);
  for (double load : loads) EXPECT_NEAR(load, 16384.0 / 6, 1.0);
  // The remainder slots stay on the old primaries: 2731 + 2730 + 2730 move.
  EXPECT_EQ(TotalMoved(*moves), 8191) << "only what must move moves";
  for (const auto& move : *moves) {
    EXPECT_LT(move.source, 3);
    EXPECT_GE(move.target, 3);
    EXPECT_LE(move.ranges.size(), 2u) << "contiguous ranges";
  }
}

TEST(PlanBalanceTest, ScaleInDrainsEverySlotOntoTheRestEvenly) {
  auto owners = Owners(6);
  owners[4].drain = owners[5].drain = true;
  auto moves = PlanBalance({.owners = owners, .slot_weights = {}, .threshold = 0.02});
  ASSERT_TRUE(moves.ok()) << moves.error().message();
  const auto loads = LoadsAfter(owners, *moves);
  EXPECT_EQ(loads[4], 0);
  EXPECT_EQ(loads[5], 0);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(loads[i], 4096, 1) << i;
  for (const auto& move : *moves) EXPECT_FALSE(owners[move.target].drain);
}

TEST(PlanBalanceTest, BalancedWithinTheThresholdMovesNothing) {
  auto owners = Owners(4);
  // 100 slots from 0 to 1: 2.4% off for node 0 and 1.
  owners[0].slots = {{0, 3995}};
  owners[1].slots = {{3996, 8191}};
  auto within = PlanBalance({.owners = owners, .slot_weights = {}, .threshold = 0.03});
  ASSERT_TRUE(within.ok());
  EXPECT_TRUE(within->empty());
  auto beyond = PlanBalance({.owners = owners, .slot_weights = {}, .threshold = 0.02});
  ASSERT_TRUE(beyond.ok());
  ASSERT_EQ(beyond->size(), 1u);
  EXPECT_EQ((*beyond)[0].source, 1);
  EXPECT_EQ((*beyond)[0].target, 0);
  EXPECT_EQ((*beyond)[0].SlotCount(), 100);
  auto exact = PlanBalance({.owners = Owners(4), .slot_weights = {}, .threshold = 0});
  ASSERT_TRUE(exact.ok());
  EXPECT_TRUE(exact->empty()) << "the even split is balanced";
}

TEST(PlanBalanceTest, ByKeysEvensKeysNotSlots) {
  // Node 0's slots hold 3x the keys of the others'.
  std::vector<double> keys(16384, 10.0);
  for (int slot = 0; slot <= 5460; ++slot) keys[slot] = 30.0;
  auto owners = Owners(3);
  auto moves = PlanBalance({.owners = owners, .slot_weights = keys, .threshold = 0.02});
  ASSERT_TRUE(moves.ok()) << moves.error().message();
  ASSERT_FALSE(moves->empty());
  const auto loads = LoadsAfter(owners, *moves, keys);
  const double total = std::accumulate(keys.begin(), keys.end(), 0.0);
  for (double load : loads) EXPECT_NEAR(load, total / 3, total * 0.01);
  for (const auto& move : *moves) EXPECT_EQ(move.source, 0);
}

TEST(PlanBalanceTest, EmptySlotsStillSpreadWhenWeighingKeys) {
  auto moves = PlanBalance(
      {.owners = Owners(2, 2), .slot_weights = std::vector<double>(16384, 0.0), .threshold = 0});
  ASSERT_TRUE(moves.ok());
  for (double load : LoadsAfter(Owners(2, 2), *moves)) EXPECT_NEAR(load, 4096, 2);
}

TEST(PlanBalanceTest, RefusesUnownedSlotsAndDrainingEverything) {
  auto owners = Owners(3);
  owners[2].slots = {{10923, 16000}};
  auto unowned = PlanBalance({.owners = owners, .slot_weights = {}, .threshold = 0});
  ASSERT_FALSE(unowned.ok());
  EXPECT_EQ(unowned.error().message(),
            "slots 16001-16383 have no live owner: the primary that serves them did not answer "
            "(see shardctl status: wait for it, restart it, or let its replica take over, then "
            "run this again); nothing was moved");
  EXPECT_EQ(unowned.error().message().find("redis-cli --cluster fix"), std::string::npos)
      << "that fix would hand a live shard's slots away";
  auto all = Owners(2);
  all[0].drain = all[1].drain = true;
  auto none_left = PlanBalance({.owners = all, .slot_weights = {}, .threshold = 0});
  ASSERT_FALSE(none_left.ok());
  EXPECT_NE(none_left.error().message().find("keep at least one"), std::string::npos);
}

TEST(SlotRangesTest, ParsesListsAndRefusesBadOrOverlappingRanges) {
  auto ranges = common::ParseSlotRanges("100-200,7,16383");
  ASSERT_TRUE(ranges.ok());
  EXPECT_EQ(*ranges, (std::vector<SlotRange>{{100, 200}, {7, 7}, {16383, 16383}}));
  EXPECT_EQ(common::FormatSlotRanges(*ranges), "100-200,7,16383");
  for (const char* bad : {"", "200-100", "16384", "1-x", "-5", "1,,2"}) {
    EXPECT_FALSE(common::ParseSlotRanges(bad).ok()) << bad;
  }
  auto overlap = common::ParseSlotRanges("100-200,150-160");
  ASSERT_FALSE(overlap.ok());
  EXPECT_EQ(overlap.error().message(),
            "slot ranges 100-200 and 150-160 overlap (name each slot once)");
}

TEST(ExplicitMoveTest, SplitsByOwnerAndSkipsWhatTheTargetHas) {
  const auto owners = Owners(3);  // 0-5460, 5461-10922, 10923-16383
  auto moves = PlanExplicitMove(owners, {{5400, 5500}, {16000, 16001}}, 1);
  ASSERT_TRUE(moves.ok()) << moves.error().message();
  ASSERT_EQ(moves->size(), 2u);
  EXPECT_EQ((*moves)[0], (SlotMove{.source = 0, .target = 1, .ranges = {{5400, 5460}}}));
  EXPECT_EQ((*moves)[1], (SlotMove{.source = 2, .target = 1, .ranges = {{16000, 16001}}}));
  auto again = PlanExplicitMove(owners, {{5461, 5470}}, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty()) << "moving slots where they are is a no-op";
}

TEST(BalanceByTest, NamesRoundTripAndUnknownIsRefused) {
  for (BalanceBy by : {BalanceBy::kSlots, BalanceBy::kKeys, BalanceBy::kMemory}) {
    auto parsed = ParseBalanceBy(BalanceByName(by));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, by);
  }
  EXPECT_FALSE(ParseBalanceBy("cpu").ok());
}

}  // namespace
}  // namespace shardctl::launcher
