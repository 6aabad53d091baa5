// Scaling a running plan (launcher/model/plan_scale.h) on fixture hosts: new shards keep the
// placement rules of `up`, old shards keep everything they had, and what does not fit is refused
// naming the fix.
#include "launcher/model/plan_scale.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/unit/plan_fixtures.h"

namespace shardctl::launcher {
namespace {

using plan_fixtures::Host;
using plan_fixtures::MustPlan;
using plan_fixtures::SpecOf;

Plan Grow(const std::string& host, const plan_fixtures::Flags& flags, int primaries) {
  const Plan running = MustPlan(host, flags);
  auto grown = ExtendPlan(Host(host), SpecOf(flags), running, primaries);
  EXPECT_TRUE(grown.ok()) << grown.error().message();
  return grown.ok() ? *grown : Plan{};
}

TEST(ExtendPlanTest, KeepsTheRunningShardsAndAppendsNewIndices) {
  const plan_fixtures::Flags flags = {{"shards", "8"}, {"replicas", "1"}};
  const Plan running = MustPlan("single-node-64vcpu", flags);
  const Plan grown = Grow("single-node-64vcpu", flags, 12);
  ASSERT_EQ(grown.shards.size(), 24u);
  for (size_t i = 0; i < running.shards.size(); ++i) EXPECT_EQ(grown.shards[i], running.shards[i]);
  // New primary 16 with replica 17, then 18 with 19 ...
  for (int index = 16; index < 24; index += 2) {
    const ShardPlan* primary = FindShard(grown, index);
    const ShardPlan* replica = FindShard(grown, index + 1);
    ASSERT_NE(primary, nullptr);
    ASSERT_NE(replica, nullptr);
    EXPECT_EQ(primary->role, Role::kPrimary);
    EXPECT_TRUE(primary->slots.empty()) << "new primaries get slots from the mover";
    EXPECT_EQ(replica->role, Role::kReplica);
    EXPECT_EQ(replica->primary, index);
    EXPECT_EQ(primary->port - primary->index, running.shards[0].port - running.shards[0].index);
    EXPECT_EQ(primary->maxmemory, running.shards[0].maxmemory);
  }
  EXPECT_EQ(PlannedPrimaries(grown).size(), 12u);
}

TEST(ExtendPlanTest, NewShardsTakeFreePhysicalCoresFirst) {
  const Plan grown = Grow("two-socket-smt", {{"shards", "8"}}, 16);
  std::map<int, int> per_core;
  for (const auto& shard : grown.shards) {
    ++per_core[PhysicalCoreOf(Host("two-socket-smt"), shard.cpus.front())];
  }
  for (const auto& [core, shards] : per_core) EXPECT_EQ(shards, 1) << "core " << core;
}

TEST(ExtendPlanTest, KeepsNumaNodesEvenAndReplicasOffTheirPrimarysNode) {
  const Plan grown = Grow("two-socket-smt", {{"shards", "4"}, {"replicas", "1"}}, 8);
  std::map<int, int> per_node;
  for (const auto& shard : grown.shards) ++per_node[shard.numa_node];
  ASSERT_EQ(per_node.size(), 2u);
  EXPECT_LE(std::abs(per_node[0] - per_node[1]), 1);
  for (const auto& shard : grown.shards) {
    if (shard.role != Role::kReplica) continue;
    EXPECT_NE(shard.numa_node, FindShard(grown, *shard.primary)->numa_node)
        << "replica " << shard.index;
  }
}

TEST(ExtendPlanTest, SharesCpusWithAWarningWhenTheHostIsFull) {
  const Plan grown = Grow("laptop-2cpu", {{"shards", "2"}}, 4);
  ASSERT_EQ(grown.shards.size(), 4u);
  std::map<int, int> per_cpu;
  for (const auto& shard : grown.shards) ++per_cpu[shard.cpus.front()];
  for (const auto& [cpu, shards] : per_cpu) EXPECT_EQ(shards, 2) << "cpu " << cpu;
  ASSERT_FALSE(grown.warnings.empty());
  EXPECT_NE(grown.warnings[0].find("share"), std::string::npos);
}

TEST(ExtendPlanTest, RefusesWhatDoesNotFitNamingTheFix) {
  const plan_fixtures::Flags flags = {{"shards", "2"}, {"shard-memory", "1gb"}};
  const Plan running = MustPlan("laptop-2cpu", flags);
  const Spec spec = SpecOf(flags);
  for (const auto& [primaries, fix] : std::vector<std::pair<int, std::string>>{
           {2, "ask for more"}, {1001, "more than the 1000"}, {64, "scale to fewer shards"}}) {
    auto grown = ExtendPlan(Host("laptop-2cpu"), spec, running, primaries);
    ASSERT_FALSE(grown.ok()) << primaries;
    EXPECT_NE(grown.error().message().find(fix), std::string::npos) << grown.error().message();
  }
  Plan high = running;
  // Bus ports far below the client ports, so only the 65535 limit can refuse.
  for (auto& shard : high.shards) shard.port += 65000 - 7000, shard.bus_port = shard.port - 40000;
  auto past = ExtendPlan(Host("laptop-2cpu"), spec, high, 600);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message().find("65535"), std::string::npos) << past.error().message();
}

TEST(ShrinkPlanTest, RemovesTheNewestPrimariesWithTheirReplicas) {
  const Plan grown = Grow("single-node-64vcpu", {{"shards", "4"}, {"replicas", "1"}}, 6);
  auto shrunk = ShrinkPlan(grown, 4);
  ASSERT_TRUE(shrunk.ok()) << shrunk.error().message();
  EXPECT_EQ(shrunk->removed_groups, (std::vector<int>{8, 10}));
  EXPECT_EQ(std::set<int>(shrunk->removed.begin(), shrunk->removed.end()),
            (std::set<int>{8, 9, 10, 11}));
  EXPECT_EQ(shrunk->plan.shards.size(), 8u);
  // Below what `up` made: primary 3 goes with its replica 7, leaving a gap in the indices.
  auto smaller = ShrinkPlan(shrunk->plan, 3);
  ASSERT_TRUE(smaller.ok());
  EXPECT_EQ(smaller->removed_groups, std::vector<int>{3});
  EXPECT_EQ(std::set<int>(smaller->removed.begin(), smaller->removed.end()), (std::set<int>{3, 7}));
  EXPECT_EQ(FindShard(smaller->plan, 3), nullptr);
  EXPECT_NE(FindShard(smaller->plan, 4), nullptr);
}

TEST(ShrinkPlanTest, RefusesNothingToRemoveOrNoPrimaryLeft) {
  const Plan running = MustPlan("single-node-64vcpu", {{"shards", "4"}});
  for (int primaries : {0, 4, 5}) {
    auto shrunk = ShrinkPlan(running, primaries);
    ASSERT_FALSE(shrunk.ok()) << primaries;
    EXPECT_NE(shrunk.error().message().find("ask for 1 to 3"), std::string::npos);
  }
}

}  // namespace
}  // namespace shardctl::launcher
