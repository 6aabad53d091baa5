// PlanLoadBalance: slots move by measured load; a slot hotter than a primary's fair share stays,
// named, on a primary of its own.
#include "launcher/cluster/load_balance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace shardctl::launcher {
namespace {

using common::SlotRange;

std::vector<SlotOwner> EvenOwners(int count) {
  std::vector<SlotOwner> owners;
  int i = 0;
  for (const auto& range : common::SplitSlotsEvenly(count)) {
    owners.push_back({.id = "n" + std::to_string(i), .shard = i, .slots = {range}});
    ++i;
  }
  return owners;
}

double Mean(const std::vector<double>& loads) {
  return std::accumulate(loads.begin(), loads.end(), 0.0) / static_cast<double>(loads.size());
}

TEST(LoadBalanceTest, AnEvenLoadMovesNothing) {
  const auto plan = PlanLoadBalance(EvenOwners(4), std::vector<double>(16384, 10.0), 0.15);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_TRUE(plan->moves.empty());
  EXPECT_TRUE(plan->hot.empty());
  EXPECT_EQ(plan->before, plan->after);
}

TEST(LoadBalanceTest, AHeavierPrimaryGivesSlotsUntilEveryoneIsNearTheMean) {
  const auto owners = EvenOwners(4);
  std::vector<double> load(16384, 10.0);
  for (int slot = 0; slot <= 4095; ++slot) load[slot] = 30.0;  // primary 0 does 3x the work
  const auto plan = PlanLoadBalance(owners, load, 0.15);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_TRUE(plan->hot.empty());
  ASSERT_FALSE(plan->moves.empty());
  for (const auto& move : plan->moves) EXPECT_EQ(move.source, 0);
  EXPECT_NEAR(plan->before[0] / Mean(plan->before), 2.0, 0.01);
  const double mean = Mean(plan->after);
  for (double after : plan->after) EXPECT_NEAR(after / mean, 1.0, 0.15);
}

TEST(LoadBalanceTest, ASlotHotterThanAFairShareStaysAloneAndIsNamed) {
  const auto owners = EvenOwners(4);
  std::vector<double> load(16384, 1.0);
  load[5000] = 40000;  // on primary 1 (4096-8191): more than the 14,096 a primary should carry
  const auto plan = PlanLoadBalance(owners, load, 0.15);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->hot.size(), 1u);
  EXPECT_EQ(plan->hot[0].slot, 5000);
  EXPECT_EQ(plan->hot[0].owner, 1);
  EXPECT_GT(plan->hot[0].share, 2.0);
  // Primary 1 keeps slot 5000 only, receives nothing; the others share the rest evenly.
  int given = 0;
  for (const auto& move : plan->moves) {
    EXPECT_NE(move.target, 1);
    if (move.source != 1) continue;
    for (const auto& range : move.ranges) {
      EXPECT_FALSE(range.first <= 5000 && 5000 <= range.last);
      given += range.size();
    }
  }
  EXPECT_EQ(given, 4095);
  EXPECT_DOUBLE_EQ(plan->after[1], 40000);
  const double rest = (plan->after[0] + plan->after[2] + plan->after[3]) / 3;
  for (int i : {0, 2, 3}) EXPECT_NEAR(plan->after[i] / rest, 1.0, 0.15) << i;
}

// Two slots each hotter than a fair share, on two of three primaries: both stay, hottest named
// first, and the third primary takes every other slot.
TEST(LoadBalanceTest, TwoHotSlotsLeaveTheRestToTheThirdPrimary) {
  const auto owners = EvenOwners(3);
  std::vector<double> load(16384, 0.0);
  load[10] = 400;    // primary 0
  load[9000] = 450;  // primary 1
  load[15000] = 10;  // primary 2
  const auto plan = PlanLoadBalance(owners, load, 0.15);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_EQ(plan->hot.size(), 2u);
  EXPECT_EQ(plan->hot[0].slot, 9000);
  EXPECT_EQ(plan->hot[1].slot, 10);
  int taken = 0;
  for (const auto& move : plan->moves) {
    EXPECT_EQ(move.target, 2);
    taken += move.SlotCount();
  }
  EXPECT_EQ(taken, 16384 - owners[2].slots[0].size() - 2);  // all but the hot two and its own
  EXPECT_EQ(plan->after, (std::vector<double>{400, 450, 10}));
}

TEST(LoadBalanceTest, NoLoadMeasuredIsAnErrorSayingWhatToDo) {
  const auto plan = PlanLoadBalance(EvenOwners(3), std::vector<double>(16384, 0.0), 0.15);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message().find("--window"), std::string::npos);
  EXPECT_FALSE(PlanLoadBalance(EvenOwners(3), {1.0, 2.0}, 0.15).ok());
}

}  // namespace
}  // namespace shardctl::launcher
