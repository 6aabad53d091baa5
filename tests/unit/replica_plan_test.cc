// Placement with --replicas (launcher/plan.h): shape of the plan, anti-affinity between a primary
// and its replicas (other physical core, other NUMA node), degenerate hosts, limits, memory and
// ports over every process, on the fixture topologies in tests/fixtures/sysfs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/slots.h"
#include "launcher/model/plan.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"
#include "tests/unit/plan_fixtures.h"

namespace shardctl::launcher {
namespace {

using plan_fixtures::Flags;
using plan_fixtures::Host;
using plan_fixtures::MustPlan;
using plan_fixtures::PlanError;
using plan_fixtures::PlanOn;
using plan_fixtures::SpecOf;

constexpr uint64_t kGiB = uint64_t{1} << 30;

const std::vector<const char*> kAllHosts = {"single-node-64vcpu", "two-socket-smt", "four-node",
                                            "laptop-2cpu",        "no-numa-4cpu",   "hotadd-vm"};
const std::vector<const char*> kMultiNodeHosts = {"two-socket-smt", "four-node"};

Flags ReplicaFlags(int shards, int replicas) {
  return {{"shards", std::to_string(shards)}, {"replicas", std::to_string(replicas)}};
}

// The physical core of a CPU, named by its first hardware thread.
int CoreOf(const Topology& topology, int cpu) {
  const Cpu* found = topology.FindCpu(cpu);
  EXPECT_NE(found, nullptr) << "cpu " << cpu << " is not online";
  return found && !found->siblings.empty() ? found->siblings.front() : cpu;
}

bool HasWarningContaining(const Plan& plan, const std::string& text) {
  return std::any_of(plan.warnings.begin(), plan.warnings.end(), [&](const std::string& warning) {
    return warning.find(text) != std::string::npos;
  });
}

bool MentionsSharedCore(const Plan& plan) {
  return HasWarningContaining(plan, "shares a core with its primary");
}

// The replicas of each primary, in replica order (index p + N*1, p + N*2, ...).
std::vector<std::vector<const ShardPlan*>> ReplicasByPrimary(const Plan& plan, int primaries) {
  std::vector<std::vector<const ShardPlan*>> replicas(primaries);
  for (const auto& shard : plan.shards) {
    if (shard.role == Role::kReplica && shard.primary && *shard.primary < primaries) {
      replicas[*shard.primary].push_back(&shard);
    }
  }
  return replicas;
}

// The shape every replicated plan has, whatever the host: N primaries first, owning the even
// split; then replica r of primary p at index p + N*r; every process on one online CPU of the
// node its memory is bound to; ports base + index.
void ExpectReplicatedShape(const Topology& topology, const Plan& plan, int primaries,
                           int replicas) {
  ASSERT_EQ(plan.shards.size(), static_cast<size_t>(primaries * (1 + replicas)));
  auto ranges = common::SplitSlotsEvenly(primaries);
  for (size_t i = 0; i < plan.shards.size(); ++i) {
    const ShardPlan& shard = plan.shards[i];
    const int index = static_cast<int>(i);
    SCOPED_TRACE("shard " + std::to_string(i));
    EXPECT_EQ(shard.index, index);
    EXPECT_EQ(shard.port, kDefaultBasePort + index);
    EXPECT_EQ(shard.bus_port, kDefaultBasePort + kBusPortOffset + index);
    ASSERT_EQ(shard.cpus.size(), 1u);
    const Cpu* cpu = topology.FindCpu(shard.cpus[0]);
    ASSERT_NE(cpu, nullptr) << "on offline cpu " << shard.cpus[0];
    EXPECT_EQ(cpu->node, shard.numa_node);
    if (index < primaries) {
      EXPECT_EQ(shard.role, Role::kPrimary);
      EXPECT_FALSE(shard.primary.has_value());
      ASSERT_EQ(shard.slots.size(), 1u);
      EXPECT_EQ(shard.slots[0], ranges[i]);
    } else {
      EXPECT_EQ(shard.role, Role::kReplica);
      ASSERT_TRUE(shard.primary.has_value());
      EXPECT_EQ(*shard.primary, index % primaries);
      EXPECT_TRUE(shard.slots.empty());
    }
  }
}

// Replicas sharing a physical core with their primary, as "replica i of primary p" lines.
std::vector<std::string> SharedCores(const Topology& topology, const Plan& plan) {
  std::vector<std::string> shared;
  for (const auto& shard : plan.shards) {
    if (shard.role != Role::kReplica) continue;
    const ShardPlan& primary = plan.shards[*shard.primary];
    if (CoreOf(topology, shard.cpus[0]) == CoreOf(topology, primary.cpus[0])) {
      shared.push_back("replica " + std::to_string(shard.index) + " of primary " +
                       std::to_string(primary.index));
    }
  }
  return shared;
}

// ---------------------------------------------------------------------------------------------
// Shape: roles, indices, slots, ports, on every fixture.

struct ShapeCase {
  const char* host;
  int shards;
  int replicas;
};

class ReplicaShapeTest : public testing::TestWithParam<ShapeCase> {};

TEST_P(ReplicaShapeTest, PrimariesFirstThenReplicaRofPAtPPlusNTimesR) {
  const ShapeCase& c = GetParam();
  Plan plan = MustPlan(c.host, ReplicaFlags(c.shards, c.replicas));
  ExpectReplicatedShape(Host(c.host), plan, c.shards, c.replicas);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ReplicaShapeTest,
    testing::Values(ShapeCase{"single-node-64vcpu", 3, 1}, ShapeCase{"single-node-64vcpu", 16, 1},
                    ShapeCase{"single-node-64vcpu", 10, 2}, ShapeCase{"single-node-64vcpu", 5, 5},
                    ShapeCase{"single-node-64vcpu", 40, 1}, ShapeCase{"two-socket-smt", 1, 1},
                    ShapeCase{"two-socket-smt", 8, 1}, ShapeCase{"two-socket-smt", 7, 3},
                    ShapeCase{"four-node", 4, 2}, ShapeCase{"four-node", 6, 1},
                    ShapeCase{"four-node", 13, 2}, ShapeCase{"laptop-2cpu", 3, 1},
                    ShapeCase{"laptop-2cpu", 1, 5}, ShapeCase{"no-numa-4cpu", 2, 1},
                    ShapeCase{"hotadd-vm", 1, 1}),
    [](const testing::TestParamInfo<ShapeCase>& case_info) {
      std::string name = std::string(case_info.param.host) + "_" +
                         std::to_string(case_info.param.shards) + "x" +
                         std::to_string(1 + case_info.param.replicas);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(ReplicaShapeTest, EveryFixtureAndCountKeepsTheShape) {
  for (const char* host : kAllHosts) {
    for (int replicas = 1; replicas <= kMaxReplicas; ++replicas) {
      for (int shards : {1, 2, 3, 5, 8, 17, 33}) {
        SCOPED_TRACE(std::string(host) + " --shards " + std::to_string(shards) + " --replicas " +
                     std::to_string(replicas));
        Plan plan = MustPlan(host, ReplicaFlags(shards, replicas));
        ExpectReplicatedShape(Host(host), plan, shards, replicas);
        // The warning about a shared core is there exactly when a replica shares its primary's.
        EXPECT_EQ(MentionsSharedCore(plan), !SharedCores(Host(host), plan).empty());
      }
    }
  }
}

TEST(ReplicaShapeTest, ZeroReplicasIsThePlanWithoutReplicas) {
  for (const char* host : kAllHosts) {
    SCOPED_TRACE(host);
    Plan without = MustPlan(host, {{"shards", "6"}});
    Plan with_zero = MustPlan(host, ReplicaFlags(6, 0));
    EXPECT_EQ(without.shards, with_zero.shards);
    EXPECT_EQ(without.warnings, with_zero.warnings);
  }
}

// ---------------------------------------------------------------------------------------------
// Anti-affinity: another physical core, another NUMA node.

TEST(ReplicaAntiAffinityTest, ReplicaNeverSharesACoreWithItsPrimaryWhenCoresSuffice) {
  // Keeping a replica off its primary's core needs two usable cores, which every fixture has; with
  // one replica per primary that holds however many processes share each CPU.
  for (const char* host : kAllHosts) {
    const int cpus = static_cast<int>(Host(host).cpus.size());
    for (int shards = 1; shards <= cpus; ++shards) {
      SCOPED_TRACE(std::string(host) + " --shards " + std::to_string(shards) + " --replicas 1");
      Plan plan = MustPlan(host, ReplicaFlags(shards, 1));
      ASSERT_GE(plan.usable_cores, 2);
      EXPECT_EQ(SharedCores(Host(host), plan), std::vector<std::string>{});
      EXPECT_FALSE(MentionsSharedCore(plan));
    }
  }
}

struct CoreCase {
  const char* host;
  int shards;
  int replicas;
};

class ReplicaCoreTest : public testing::TestWithParam<CoreCase> {};

// Here every process fits on a core of its own, so a replica and all its siblings can keep off
// the cores of their primary and of each other.
TEST_P(ReplicaCoreTest, PrimaryAndItsReplicasAreOnDistinctCores) {
  const CoreCase& c = GetParam();
  const Topology& host = Host(c.host);
  Plan plan = MustPlan(c.host, ReplicaFlags(c.shards, c.replicas));
  ASSERT_LE(c.shards * (1 + c.replicas), plan.usable_cores);
  auto replicas = ReplicasByPrimary(plan, c.shards);
  for (int p = 0; p < c.shards; ++p) {
    std::set<int> cores = {CoreOf(host, plan.shards[p].cpus[0])};
    for (const ShardPlan* replica : replicas[p]) cores.insert(CoreOf(host, replica->cpus[0]));
    EXPECT_EQ(cores.size(), static_cast<size_t>(1 + c.replicas)) << "primary " << p;
  }
  EXPECT_FALSE(MentionsSharedCore(plan));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ReplicaCoreTest,
    testing::Values(CoreCase{"single-node-64vcpu", 16, 1}, CoreCase{"single-node-64vcpu", 10, 2},
                    CoreCase{"single-node-64vcpu", 8, 3}, CoreCase{"single-node-64vcpu", 5, 5},
                    CoreCase{"two-socket-smt", 16, 1}, CoreCase{"two-socket-smt", 10, 2},
                    CoreCase{"four-node", 16, 1}, CoreCase{"four-node", 8, 3},
                    CoreCase{"no-numa-4cpu", 1, 1}, CoreCase{"laptop-2cpu", 1, 1}),
    [](const testing::TestParamInfo<CoreCase>& case_info) {
      std::string name = std::string(case_info.param.host) + "_" +
                         std::to_string(case_info.param.shards) + "x" +
                         std::to_string(1 + case_info.param.replicas);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(ReplicaAntiAffinityTest, SingleNodeReplicasTakeUnusedCoresBeforeSiblingThreads) {
  // 16 primaries + 16 replicas = 32 processes on 32 cores: no SMT sibling (cpu >= 32) is used.
  const Topology& host = Host("single-node-64vcpu");
  Plan plan = MustPlan("single-node-64vcpu", ReplicaFlags(16, 1));
  std::set<int> cores;
  for (const auto& shard : plan.shards) {
    EXPECT_LT(shard.cpus[0], 32) << "shard " << shard.index;
    cores.insert(CoreOf(host, shard.cpus[0]));
  }
  EXPECT_EQ(cores.size(), 32u);
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(ReplicaAntiAffinityTest, FullHostNeverPairsAPrimaryWithItsOwnReplicaOnACore) {
  // 32 primaries + 32 replicas fill all 64 threads: every core holds two processes, but never a
  // primary together with its own replica (its SMT sibling would halve the replica's headroom
  // exactly when the primary is busiest, and one core failure would take both).
  const Topology& host = Host("single-node-64vcpu");
  Plan plan = MustPlan("single-node-64vcpu", ReplicaFlags(32, 1));
  std::map<int, int> per_core;
  for (const auto& shard : plan.shards) per_core[CoreOf(host, shard.cpus[0])]++;
  EXPECT_EQ(per_core.size(), 32u);
  for (const auto& [core, count] : per_core) EXPECT_EQ(count, 2) << "core " << core;
  EXPECT_EQ(SharedCores(host, plan), std::vector<std::string>{});
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(ReplicaAntiAffinityTest, OneReplicaIsOnAnotherNodeThanItsPrimaryOnMultiNodeHosts) {
  for (const char* host : kMultiNodeHosts) {
    for (int shards = 1; shards <= 64; ++shards) {
      SCOPED_TRACE(std::string(host) + " --shards " + std::to_string(shards) + " --replicas 1");
      Plan plan = MustPlan(host, ReplicaFlags(shards, 1));
      ASSERT_EQ(plan.shards.size(), static_cast<size_t>(2 * shards));
      for (int i = shards; i < 2 * shards; ++i) {
        const ShardPlan& replica = plan.shards[i];
        EXPECT_NE(replica.numa_node, plan.shards[*replica.primary].numa_node)
            << "replica " << i << " of primary " << *replica.primary;
      }
    }
  }
}

TEST(ReplicaAntiAffinityTest, EvenPrimaryCountsOnTwoSocketsKeepEveryReplicaOffItsPrimarysNode) {
  // With an even primary count each node holds half the primaries and exactly the seats the
  // other half's replicas need, however many replicas each primary has (up to the most allowed,
  // where the replicas already on the other node must not push the last one back home).
  for (int replicas = 1; replicas <= kMaxReplicas; ++replicas) {
    for (int shards = 2; shards <= 40; shards += 2) {
      SCOPED_TRACE("two-socket-smt --shards " + std::to_string(shards) + " --replicas " +
                   std::to_string(replicas));
      Plan plan = MustPlan("two-socket-smt", ReplicaFlags(shards, replicas));
      for (const auto& shard : plan.shards) {
        if (shard.role != Role::kReplica) continue;
        EXPECT_NE(shard.numa_node, plan.shards[*shard.primary].numa_node)
            << "replica " << shard.index << " of primary " << *shard.primary;
      }
    }
  }
}

TEST(ReplicaAntiAffinityTest, TwoReplicasOnFourNodesUseThreeDistinctNodes) {
  for (int shards = 1; shards <= 40; ++shards) {
    SCOPED_TRACE("four-node --shards " + std::to_string(shards) + " --replicas 2");
    Plan plan = MustPlan("four-node", ReplicaFlags(shards, 2));
    auto replicas = ReplicasByPrimary(plan, shards);
    for (int p = 0; p < shards; ++p) {
      ASSERT_EQ(replicas[p].size(), 2u) << "primary " << p;
      std::set<int> nodes = {plan.shards[p].numa_node, replicas[p][0]->numa_node,
                             replicas[p][1]->numa_node};
      EXPECT_EQ(nodes.size(), 3u) << "primary " << p << " on node " << plan.shards[p].numa_node
                                  << ", replicas on " << replicas[p][0]->numa_node << " and "
                                  << replicas[p][1]->numa_node;
    }
  }
}

TEST(ReplicaAntiAffinityTest, ThreeReplicasOnFourNodesUseEveryNode) {
  for (int shards : {1, 2, 4, 8}) {
    SCOPED_TRACE("four-node --shards " + std::to_string(shards) + " --replicas 3");
    Plan plan = MustPlan("four-node", ReplicaFlags(shards, 3));
    auto replicas = ReplicasByPrimary(plan, shards);
    for (int p = 0; p < shards; ++p) {
      std::set<int> nodes = {plan.shards[p].numa_node};
      for (const ShardPlan* replica : replicas[p]) nodes.insert(replica->numa_node);
      EXPECT_EQ(nodes.size(), 4u) << "primary " << p;
    }
  }
}

TEST(ReplicaAntiAffinityTest, NoNodeHoldsOnlyReplicas) {
  // A node of replicas only would serve no writes until another node failed, while the other
  // nodes carried every primary's load. Once there are as many primaries as nodes, each node that
  // holds processes holds a primary.
  for (const char* host : kMultiNodeHosts) {
    const size_t node_count = Host(host).nodes.size();
    for (int replicas = 1; replicas <= 3; ++replicas) {
      for (int shards = static_cast<int>(node_count); shards <= 40; ++shards) {
        SCOPED_TRACE(std::string(host) + " --shards " + std::to_string(shards) + " --replicas " +
                     std::to_string(replicas));
        Plan plan = MustPlan(host, ReplicaFlags(shards, replicas));
        std::map<int, int> primaries_on;
        std::set<int> used;
        for (const auto& shard : plan.shards) {
          used.insert(shard.numa_node);
          if (shard.role == Role::kPrimary) primaries_on[shard.numa_node]++;
        }
        for (int node : used) EXPECT_GT(primaries_on[node], 0) << "node " << node;
      }
    }
  }
}

TEST(ReplicaAntiAffinityTest, PrimariesSpreadOverNodesLikeAPlanWithoutReplicas) {
  for (const char* host : kMultiNodeHosts) {
    for (int shards : {2, 4, 7, 16}) {
      SCOPED_TRACE(std::string(host) + " --shards " + std::to_string(shards));
      Plan plain = MustPlan(host, {{"shards", std::to_string(shards)}});
      Plan replicated = MustPlan(host, ReplicaFlags(shards, 1));
      std::map<int, int> plain_nodes;
      std::map<int, int> replicated_nodes;
      for (const auto& shard : plain.shards) plain_nodes[shard.numa_node]++;
      for (int p = 0; p < shards; ++p) replicated_nodes[replicated.shards[p].numa_node]++;
      EXPECT_EQ(plain_nodes, replicated_nodes);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Degenerate hosts.

TEST(ReplicaDegenerateTest, LaptopThreePrimariesOneReplicaEachUseTheOtherCpu) {
  Plan plan = MustPlan("laptop-2cpu", ReplicaFlags(3, 1));
  ExpectReplicatedShape(Host("laptop-2cpu"), plan, 3, 1);
  for (int i = 3; i < 6; ++i) {
    const ShardPlan& replica = plan.shards[i];
    EXPECT_NE(replica.cpus, plan.shards[*replica.primary].cpus) << "replica " << i;
  }
  EXPECT_FALSE(MentionsSharedCore(plan));
  // Six processes on two CPUs is still worth a warning.
  EXPECT_TRUE(HasWarningContaining(plan, "6 shards share 2 CPU(s)"))
      << ::testing::PrintToString(plan.warnings);
}

TEST(ReplicaDegenerateTest, OneUsableCpuWarnsThatTheReplicaSharesItsPrimarysCore) {
  Plan plan = MustPlan("laptop-2cpu", {{"cpus", "0"}, {"replicas", "1"}});
  ASSERT_EQ(plan.shards.size(), 2u);
  EXPECT_EQ(plan.shards[0].cpus, std::vector<int>{0});
  EXPECT_EQ(plan.shards[1].cpus, std::vector<int>{0});
  EXPECT_EQ(plan.shards[1].role, Role::kReplica);
  EXPECT_TRUE(HasWarningContaining(plan, "replica 1 shares a core with its primary 0"))
      << ::testing::PrintToString(plan.warnings);
}

TEST(ReplicaDegenerateTest, OneUsableCoreWarnsOncePerReplica) {
  // no-numa-4cpu: cpus 0 and 2 are one core.
  Plan plan = MustPlan("no-numa-4cpu", {{"cpus", "0,2"}, {"shards", "2"}, {"replicas", "2"}});
  ASSERT_EQ(plan.shards.size(), 6u);
  int shared_warnings = 0;
  for (const auto& warning : plan.warnings) {
    shared_warnings += warning.find("shares a core with its primary") != std::string::npos;
  }
  EXPECT_EQ(shared_warnings, 4);
}

// ---------------------------------------------------------------------------------------------
// The default primary count and the limits.

struct DefaultCountCase {
  const char* host;
  int replicas;
  int primaries;
};

class ReplicaDefaultCountTest : public testing::TestWithParam<DefaultCountCase> {};

TEST_P(ReplicaDefaultCountTest, UsableCoresOverOnePlusReplicas) {
  const DefaultCountCase& c = GetParam();
  Plan plan = MustPlan(c.host, {{"replicas", std::to_string(c.replicas)}});
  EXPECT_EQ(plan.shards.size(), static_cast<size_t>(c.primaries * (1 + c.replicas)));
  int primaries = static_cast<int>(
      std::count_if(plan.shards.begin(), plan.shards.end(),
                    [](const ShardPlan& shard) { return shard.role == Role::kPrimary; }));
  EXPECT_EQ(primaries, c.primaries);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ReplicaDefaultCountTest,
    testing::Values(DefaultCountCase{"single-node-64vcpu", 0, 32},
                    DefaultCountCase{"single-node-64vcpu", 1, 16},
                    DefaultCountCase{"single-node-64vcpu", 3, 8},
                    DefaultCountCase{"single-node-64vcpu", 5, 5},  // 32 / 6, rounded down
                    DefaultCountCase{"two-socket-smt", 1, 16}, DefaultCountCase{"four-node", 2, 10},
                    DefaultCountCase{"no-numa-4cpu", 1, 1}, DefaultCountCase{"laptop-2cpu", 1, 1},
                    DefaultCountCase{"laptop-2cpu", 5, 1}),  // never fewer than one primary
    [](const testing::TestParamInfo<DefaultCountCase>& case_info) {
      std::string name =
          std::string(case_info.param.host) + "_r" + std::to_string(case_info.param.replicas);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

struct ReplicaFlagErrorCase {
  const char* value;
  const char* mentions;
};

class ReplicaFlagErrorTest : public testing::TestWithParam<ReplicaFlagErrorCase> {};

TEST_P(ReplicaFlagErrorTest, BuildSpecRefuses) {
  auto spec = BuildSpec({{"replicas", GetParam().value, "--replicas"}});
  ASSERT_FALSE(spec.ok()) << "--replicas " << GetParam().value;
  const std::string& message = spec.error().message();
  EXPECT_EQ(message.rfind("--replicas: ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().mentions), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Values, ReplicaFlagErrorTest,
                         testing::Values(ReplicaFlagErrorCase{"6", "between 0 and 5"},
                                         ReplicaFlagErrorCase{"-1", "between 0 and 5"},
                                         ReplicaFlagErrorCase{"100", "between 0 and 5"},
                                         ReplicaFlagErrorCase{"one", "not a whole number"},
                                         ReplicaFlagErrorCase{"1.5", "not a whole number"},
                                         ReplicaFlagErrorCase{"", "not a whole number"}),
                         [](const testing::TestParamInfo<ReplicaFlagErrorCase>& case_info) {
                           return std::to_string(case_info.index);
                         });

TEST(ReplicaLimitTest, BuildSpecAcceptsZeroToFive) {
  for (int replicas = 0; replicas <= kMaxReplicas; ++replicas) {
    EXPECT_EQ(SpecOf({{"replicas", std::to_string(replicas)}}).replicas, replicas);
  }
  EXPECT_EQ(kMaxReplicas, 5);
  EXPECT_EQ(Spec{}.replicas, 0);
}

struct TooManyCase {
  int shards;
  int replicas;
  const char* total;
};

class ReplicaTooManyTest : public testing::TestWithParam<TooManyCase> {};

TEST_P(ReplicaTooManyTest, MakePlanRefusesAndNamesReplicas) {
  const TooManyCase& c = GetParam();
  std::string message = PlanError("single-node-64vcpu", ReplicaFlags(c.shards, c.replicas));
  EXPECT_EQ(message.rfind("--replicas: ", 0), 0u) << message;
  EXPECT_NE(message.find(c.total), std::string::npos) << message;
  EXPECT_NE(message.find("1000"), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Counts, ReplicaTooManyTest,
                         testing::Values(TooManyCase{501, 1, "= 1002 processes"},
                                         TooManyCase{334, 2, "= 1002 processes"},
                                         TooManyCase{200, 5, "= 1200 processes"},
                                         TooManyCase{1000, 1, "= 2000 processes"}));

TEST(ReplicaLimitTest, ExactlyAThousandProcessesIsAllowed) {
  for (const auto& [shards, replicas] : std::vector<std::pair<int, int>>{{500, 1}, {200, 4}}) {
    SCOPED_TRACE(std::to_string(shards) + " x " + std::to_string(1 + replicas));
    Plan plan = MustPlan("single-node-64vcpu", ReplicaFlags(shards, replicas));
    EXPECT_EQ(plan.shards.size(), 1000u);
    EXPECT_EQ(plan.shards.back().port, kDefaultBasePort + 999);
  }
}

// ---------------------------------------------------------------------------------------------
// Ports and memory count every process.

TEST(ReplicaPlanPortsTest, PortsCoverEveryProcessWithoutGaps) {
  Plan plan = MustPlan(
      "four-node",
      {{"shards", "6"}, {"replicas", "2"}, {"base-port", "30000"}, {"bus-base-port", "40000"}});
  ASSERT_EQ(plan.shards.size(), 18u);
  std::set<int> ports;
  std::set<int> bus_ports;
  for (const auto& shard : plan.shards) {
    EXPECT_EQ(shard.port, 30000 + shard.index);
    EXPECT_EQ(shard.bus_port, 40000 + shard.index);
    ports.insert(shard.port);
    bus_ports.insert(shard.bus_port);
  }
  EXPECT_EQ(ports.size(), 18u);
  EXPECT_EQ(bus_ports.size(), 18u);
}

TEST(ReplicaPlanPortsTest, PortRangeCheckCountsReplicas) {
  // 4 primaries fit below 65535 from 65530, 8 processes do not.
  EXPECT_TRUE(PlanOn("single-node-64vcpu",
                     {{"shards", "4"}, {"base-port", "65530"}, {"bus-base-port", "20000"}})
                  .ok());
  std::string message = PlanError(
      "single-node-64vcpu",
      {{"shards", "4"}, {"replicas", "1"}, {"base-port", "65530"}, {"bus-base-port", "20000"}});
  EXPECT_NE(message.find("8 shards from port 65530 run past 65535"), std::string::npos) << message;
  EXPECT_NE(message.find("--base-port 65528"), std::string::npos) << message;
}

struct MemoryCase {
  const char* host;
  Flags flags;
  size_t processes;
  uint64_t each;
};

class ReplicaMemoryTest : public testing::TestWithParam<MemoryCase> {};

TEST_P(ReplicaMemoryTest, DividedOverAllProcesses) {
  const MemoryCase& c = GetParam();
  Plan plan = MustPlan(c.host, c.flags);
  ASSERT_EQ(plan.shards.size(), c.processes);
  for (const auto& shard : plan.shards) {
    EXPECT_EQ(shard.maxmemory, c.each)
        << "shard " << shard.index << " (" << RoleName(shard.role) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Flags, ReplicaMemoryTest,
    testing::Values(MemoryCase{"single-node-64vcpu",
                               {{"memory", "8gb"}, {"shards", "2"}, {"replicas", "1"}},
                               4,
                               2 * kGiB},
                    MemoryCase{"four-node",
                               {{"memory", "12gb"}, {"shards", "2"}, {"replicas", "2"}},
                               6,
                               2 * kGiB},
                    MemoryCase{"two-socket-smt",
                               {{"shard-memory", "1gb"}, {"shards", "3"}, {"replicas", "1"}},
                               6,
                               kGiB},
                    // Default: half the used nodes' memory (4 x 64 GiB) over 32 processes = 4 GiB.
                    MemoryCase{"four-node", {{"shards", "16"}, {"replicas", "1"}}, 32, 4 * kGiB}));

TEST(ReplicaMemoryTest, MaxShardMemoryErrorCountsReplicas) {
  // 100gb over 2 primaries would be 50gb each (above the 25gb cap); over 4 processes it is 25gb.
  EXPECT_TRUE(
      PlanOn("single-node-64vcpu", {{"memory", "100gb"}, {"shards", "2"}, {"replicas", "1"}}).ok());
  std::string message =
      PlanError("single-node-64vcpu", {{"memory", "200gb"}, {"shards", "2"}, {"replicas", "1"}});
  EXPECT_NE(message.find("over 4 shards"), std::string::npos) << message;
}

// ---------------------------------------------------------------------------------------------
// Determinism, JSON and diffs.

TEST(ReplicaDeterminismTest, SameInputGivesTheSamePlan) {
  for (const char* host : kAllHosts) {
    for (int replicas = 1; replicas <= 3; ++replicas) {
      SCOPED_TRACE(std::string(host) + " --replicas " + std::to_string(replicas));
      Flags flags = ReplicaFlags(7, replicas);
      Plan first = MustPlan(host, flags);
      Plan second = MustPlan(host, flags);
      EXPECT_EQ(first.shards, second.shards);
      EXPECT_EQ(first.warnings, second.warnings);
      EXPECT_TRUE(DiffPlans(first, second).empty());
    }
  }
}

TEST(ReplicaDeterminismTest, JsonRoundTripKeepsRolesPrimariesAndSlots) {
  Plan plan = MustPlan("four-node", ReplicaFlags(5, 2));
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->shards, plan.shards);
  EXPECT_TRUE(DiffPlans(plan, *back).empty());
}

TEST(ReplicaDiffTest, ReportsARoleAndPrimaryChange) {
  Plan running = MustPlan("single-node-64vcpu", ReplicaFlags(2, 1));
  Plan requested = running;
  // Shard 2 (replica of 0) asked to be a primary, shard 0 asked to follow it.
  requested.shards[2].role = Role::kPrimary;
  requested.shards[2].primary.reset();
  requested.shards[0].role = Role::kReplica;
  requested.shards[0].primary = 2;
  auto diff = DiffPlans(running, requested);
  std::vector<std::string> expected = {
      "shard 0 role: primary -> replica",
      "shard 0 primary: - -> 2",
      "shard 2 role: replica -> primary",
      "shard 2 primary: 0 -> -",
  };
  EXPECT_EQ(diff, expected);
}

TEST(ReplicaDiffTest, AddingReplicasChangesTheProcessCount) {
  Plan running = MustPlan("single-node-64vcpu", {{"shards", "4"}});
  Plan requested = MustPlan("single-node-64vcpu", ReplicaFlags(4, 1));
  auto diff = DiffPlans(running, requested);
  ASSERT_EQ(diff.size(), 1u) << ::testing::PrintToString(diff);
  EXPECT_EQ(diff[0], "shards: 4 -> 8");
}

TEST(ReplicaDiffTest, ReplicasFollowingAnotherPrimaryIsADifference) {
  Plan running = MustPlan("single-node-64vcpu", ReplicaFlags(3, 1));
  Plan requested = running;
  requested.shards[4].primary = 2;
  auto diff = DiffPlans(running, requested);
  EXPECT_EQ(diff, std::vector<std::string>{"shard 4 primary: 1 -> 2"});
}

}  // namespace
}  // namespace shardctl::launcher
