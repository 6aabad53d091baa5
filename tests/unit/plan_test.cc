// Placement rules (launcher/plan.h) on the fixture topologies in tests/fixtures/sysfs.
#include "launcher/model/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/cpu_list.h"
#include "common/slots.h"
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

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kTiB = uint64_t{1} << 40;

std::map<int, int> ShardsPerNode(const Plan& plan) {
  std::map<int, int> counts;
  for (const auto& shard : plan.shards) counts[shard.numa_node]++;
  return counts;
}

std::map<int, int> ShardsPerCpu(const Plan& plan) {
  std::map<int, int> counts;
  for (const auto& shard : plan.shards) {
    for (int cpu : shard.cpus) counts[cpu]++;
  }
  return counts;
}

// (package, core) of every CPU the plan uses, one entry per shard.
std::vector<std::pair<int, int>> CoresUsed(const Topology& topology, const Plan& plan) {
  std::vector<std::pair<int, int>> cores;
  for (const auto& shard : plan.shards) {
    for (int id : shard.cpus) {
      const Cpu* cpu = topology.FindCpu(id);
      EXPECT_NE(cpu, nullptr) << "cpu " << id << " is not online";
      if (cpu) cores.push_back({cpu->package_id, cpu->core_id});
    }
  }
  return cores;
}

std::vector<int> Cpus(const char* list) { return common::ParseCpuList(list).value(); }

// A made-up single-node host with lots of memory, for memory rules no fixture host reaches.
Topology BigHost(int cpus, uint64_t memory) {
  Topology topology;
  NumaNode node{.id = 0, .cpus = {}, .memory_bytes = memory};
  for (int id = 0; id < cpus; ++id) {
    topology.cpus.push_back(
        {.id = id, .core_id = id, .package_id = 0, .node = 0, .siblings = {id}});
    node.cpus.push_back(id);
  }
  topology.nodes.push_back(node);
  topology.total_memory_bytes = memory;
  return topology;
}

// ---------------------------------------------------------------------------------------------
// Every plan must keep these, whatever the host and flags.

void ExpectWellFormed(const Topology& topology, const Plan& plan) {
  for (size_t i = 0; i < plan.shards.size(); ++i) {
    const ShardPlan& shard = plan.shards[i];
    EXPECT_EQ(shard.index, static_cast<int>(i));
    ASSERT_EQ(shard.cpus.size(), 1u) << "shard " << i;
    const Cpu* cpu = topology.FindCpu(shard.cpus[0]);
    ASSERT_NE(cpu, nullptr) << "shard " << i << " on offline cpu " << shard.cpus[0];
    EXPECT_EQ(cpu->node, shard.numa_node) << "shard " << i << ": memory bound to another node";
    EXPECT_EQ(shard.role, Role::kPrimary);
    EXPECT_FALSE(shard.primary.has_value());
  }
}

// ---------------------------------------------------------------------------------------------
// NUMA spread and interleaving.

struct SpreadCase {
  const char* host;
  int shards;
  std::vector<int> sorted_counts;  // shards per node, sorted, over all nodes of the host
};

class PlanSpreadTest : public testing::TestWithParam<SpreadCase> {};

TEST_P(PlanSpreadTest, SpreadsEvenlyOverNodes) {
  const SpreadCase& c = GetParam();
  Plan plan = MustPlan(c.host, {{"shards", std::to_string(c.shards)}});
  ASSERT_EQ(plan.shards.size(), static_cast<size_t>(c.shards));
  ExpectWellFormed(Host(c.host), plan);
  std::vector<int> counts;
  auto per_node = ShardsPerNode(plan);
  for (const auto& node : Host(c.host).nodes) counts.push_back(per_node[node.id]);
  std::sort(counts.begin(), counts.end(), std::greater<>());
  EXPECT_EQ(counts, c.sorted_counts);
}

TEST_P(PlanSpreadTest, InterleavesNodesByIndex) {
  const SpreadCase& c = GetParam();
  Plan plan = MustPlan(c.host, {{"shards", std::to_string(c.shards)}});
  const size_t nodes = Host(c.host).nodes.size();
  // Any window of consecutive indices as long as the node count touches distinct nodes while
  // every node still has shards left to place: the first `nodes` shards all differ.
  std::set<int> first;
  for (size_t i = 0; i < std::min(nodes, plan.shards.size()); ++i) {
    first.insert(plan.shards[i].numa_node);
  }
  EXPECT_EQ(first.size(), std::min(nodes, plan.shards.size()));
  // No node gets two shards in a row while another node still has shards to take.
  auto remaining = ShardsPerNode(plan);
  for (size_t i = 0; i + 1 < plan.shards.size(); ++i) {
    remaining[plan.shards[i].numa_node]--;
    int others_left = 0;
    for (const auto& [node, left] : remaining) {
      if (node != plan.shards[i].numa_node) others_left += left;
    }
    if (others_left > 0) {
      EXPECT_NE(plan.shards[i].numa_node, plan.shards[i + 1].numa_node)
          << "shards " << i << ", " << i + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlanSpreadTest,
    testing::Values(
        SpreadCase{"two-socket-smt", 8, {4, 4}}, SpreadCase{"two-socket-smt", 1, {1, 0}},
        SpreadCase{"two-socket-smt", 7, {4, 3}}, SpreadCase{"two-socket-smt", 32, {16, 16}},
        SpreadCase{"two-socket-smt", 64, {32, 32}}, SpreadCase{"two-socket-smt", 65, {33, 32}},
        SpreadCase{"four-node", 4, {1, 1, 1, 1}}, SpreadCase{"four-node", 6, {2, 2, 1, 1}},
        SpreadCase{"four-node", 3, {1, 1, 1, 0}}, SpreadCase{"four-node", 13, {4, 3, 3, 3}},
        SpreadCase{"four-node", 32, {8, 8, 8, 8}}, SpreadCase{"four-node", 100, {25, 25, 25, 25}},
        SpreadCase{"single-node-64vcpu", 40, {40}}, SpreadCase{"laptop-2cpu", 3, {3}}),
    [](const testing::TestParamInfo<SpreadCase>& case_info) {
      std::string name =
          std::string(case_info.param.host) + "_" + std::to_string(case_info.param.shards);
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(PlanSpreadTest, NodeCountsDifferByAtMostOneForEveryShardCount) {
  for (const char* host : {"two-socket-smt", "four-node"}) {
    for (int shards = 1; shards <= 130; ++shards) {
      SCOPED_TRACE(std::string(host) + " with " + std::to_string(shards) + " shards");
      Plan plan = MustPlan(host, {{"shards", std::to_string(shards)}});
      auto per_node = ShardsPerNode(plan);
      int most = 0;
      int least = shards;
      for (const auto& node : Host(host).nodes) {
        most = std::max(most, per_node[node.id]);
        least = std::min(least, per_node[node.id]);
      }
      EXPECT_LE(most - least, 1);
    }
  }
}

TEST(PlanSpreadTest, UnalikeNodesGetShardsInProportionToUsableCores) {
  // node0 keeps 4 cores (0-3 plus siblings), node1 keeps all 16: 20 shards split 4 + 16.
  Plan plan = MustPlan("two-socket-smt", {{"cpus", "0-3,32-35,16-31,48-63"}, {"shards", "20"}});
  EXPECT_EQ(plan.usable_cores, 20);
  auto per_node = ShardsPerNode(plan);
  EXPECT_EQ(per_node[0], 4);
  EXPECT_EQ(per_node[1], 16);
  EXPECT_TRUE(plan.warnings.empty());
}

// ---------------------------------------------------------------------------------------------
// One shard per physical core before any SMT sibling.

TEST(PlanCoresTest, ThirtyTwoShardsUseThirtyTwoCoresAndNoSibling) {
  const Topology& host = Host("single-node-64vcpu");
  Plan plan = MustPlan("single-node-64vcpu", {{"shards", "32"}});
  ExpectWellFormed(host, plan);
  auto cores = CoresUsed(host, plan);
  EXPECT_EQ(std::set(cores.begin(), cores.end()).size(), 32u);
  for (const auto& shard : plan.shards) EXPECT_LT(shard.cpus[0], 32) << "shard " << shard.index;
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(PlanCoresTest, FortyShardsUseEveryCoreAndEightSiblings) {
  const Topology& host = Host("single-node-64vcpu");
  Plan plan = MustPlan("single-node-64vcpu", {{"shards", "40"}});
  ExpectWellFormed(host, plan);
  auto cores = CoresUsed(host, plan);
  EXPECT_EQ(std::set(cores.begin(), cores.end()).size(), 32u);
  auto per_cpu = ShardsPerCpu(plan);
  EXPECT_EQ(per_cpu.size(), 40u) << "every shard has a CPU of its own";
  int siblings = 0;
  for (const auto& [cpu, count] : per_cpu) {
    EXPECT_EQ(count, 1) << "cpu " << cpu;
    if (cpu >= 32) ++siblings;
  }
  EXPECT_EQ(siblings, 8);
  std::map<std::pair<int, int>, int> per_core;
  for (const auto& core : cores) per_core[core]++;
  for (const auto& [core, count] : per_core) EXPECT_LE(count, 2);
  EXPECT_TRUE(plan.warnings.empty());
}

struct CoreCase {
  const char* host;
  int shards;
};

class PlanDistinctCoresTest : public testing::TestWithParam<CoreCase> {};

// Up to the core count, every shard gets a core of its own; up to the CPU count, a CPU of its own.
TEST_P(PlanDistinctCoresTest, NoCoreSharedBeforeEveryCoreIsUsed) {
  const auto& [host_name, shards] = GetParam();
  const Topology& host = Host(host_name);
  Plan plan = MustPlan(host_name, {{"shards", std::to_string(shards)}});
  ExpectWellFormed(host, plan);
  auto cores = CoresUsed(host, plan);
  std::set<std::pair<int, int>> distinct(cores.begin(), cores.end());
  const int core_count = host.PhysicalCoreCount();
  EXPECT_EQ(distinct.size(), static_cast<size_t>(std::min(shards, core_count)));
  auto per_cpu = ShardsPerCpu(plan);
  EXPECT_EQ(per_cpu.size(), std::min<size_t>(shards, host.cpus.size()));
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlanDistinctCoresTest,
    testing::Values(CoreCase{"single-node-64vcpu", 1}, CoreCase{"single-node-64vcpu", 31},
                    CoreCase{"single-node-64vcpu", 33}, CoreCase{"single-node-64vcpu", 64},
                    CoreCase{"two-socket-smt", 8}, CoreCase{"two-socket-smt", 32},
                    CoreCase{"two-socket-smt", 48}, CoreCase{"four-node", 6},
                    CoreCase{"four-node", 32}, CoreCase{"four-node", 40},
                    CoreCase{"no-numa-4cpu", 2}, CoreCase{"no-numa-4cpu", 4},
                    CoreCase{"laptop-2cpu", 2}));

// ---------------------------------------------------------------------------------------------
// Reserved CPUs, --cpus, offline CPUs.

struct CpuFlagCase {
  const char* host;
  Flags flags;
  const char* allowed;  // every shard's CPU must be in this list
  int usable_cpus;
  int usable_cores;
};

class PlanCpuFlagsTest : public testing::TestWithParam<CpuFlagCase> {};

TEST_P(PlanCpuFlagsTest, UsesOnlyAllowedCpus) {
  const CpuFlagCase& c = GetParam();
  auto plan = PlanOn(c.host, c.flags);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ExpectWellFormed(Host(c.host), *plan);
  auto allowed = Cpus(c.allowed);
  for (const auto& shard : plan->shards) {
    for (int cpu : shard.cpus) {
      EXPECT_TRUE(std::binary_search(allowed.begin(), allowed.end(), cpu))
          << "shard " << shard.index << " on cpu " << cpu;
    }
  }
  EXPECT_EQ(plan->usable_cpus, c.usable_cpus);
  EXPECT_EQ(plan->usable_cores, c.usable_cores);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlanCpuFlagsTest,
    testing::Values(
        CpuFlagCase{"single-node-64vcpu", {{"reserve-cpus", "0-1"}}, "2-63", 62, 32},
        CpuFlagCase{
            "single-node-64vcpu", {{"reserve-cpus", "0-1"}, {"shards", "64"}}, "2-63", 62, 32},
        CpuFlagCase{"single-node-64vcpu", {{"reserve-cpus", "0-1,32-33"}}, "2-31,34-63", 60, 30},
        CpuFlagCase{"single-node-64vcpu", {{"cpus", "8-15"}}, "8-15", 8, 8},
        CpuFlagCase{"single-node-64vcpu", {{"cpus", "8-15,40-47"}}, "8-15,40-47", 16, 8},
        CpuFlagCase{"single-node-64vcpu",
                    {{"cpus", "8-15"}, {"reserve-cpus", "8"}, {"shards", "20"}},
                    "9-15",
                    7,
                    7},
        CpuFlagCase{"two-socket-smt", {{"reserve-cpus", "0,16"}}, "1-15,17-63", 62, 32},
        CpuFlagCase{"two-socket-smt", {{"cpus", "16-31"}}, "16-31", 16, 16},
        CpuFlagCase{"four-node", {{"cpus", "0-7,32-39"}, {"shards", "16"}}, "0-7,32-39", 16, 8},
        CpuFlagCase{"laptop-2cpu", {{"reserve-cpus", "0"}, {"shards", "3"}}, "1", 1, 1}),
    [](const testing::TestParamInfo<CpuFlagCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(PlanCpuFlagsTest, CpusOnOneNodeKeepAllShardsOnThatNode) {
  Plan plan = MustPlan("two-socket-smt", {{"cpus", "16-31"}, {"shards", "8"}});
  for (const auto& shard : plan.shards) EXPECT_EQ(shard.numa_node, 1);
}

struct CpuErrorCase {
  const char* host;
  Flags flags;
  std::vector<std::string> mentions;
};

class PlanCpuErrorTest : public testing::TestWithParam<CpuErrorCase> {};

TEST_P(PlanCpuErrorTest, Refuses) {
  const CpuErrorCase& c = GetParam();
  std::string message = PlanError(c.host, c.flags);
  for (const auto& text : c.mentions) {
    EXPECT_NE(message.find(text), std::string::npos) << "\"" << text << "\" not in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlanCpuErrorTest,
    testing::Values(
        // cpu64 exists in sysfs but is offline.
        CpuErrorCase{"single-node-64vcpu", {{"cpus", "60-64"}}, {"--cpus", "64", "online"}},
        CpuErrorCase{"single-node-64vcpu", {{"cpus", "0-3,70"}}, {"--cpus", "70", "online"}},
        CpuErrorCase{"single-node-64vcpu", {{"cpus", "64,70"}}, {"--cpus", "64,70"}},
        CpuErrorCase{"laptop-2cpu", {{"cpus", "0-3"}}, {"--cpus", "2-3"}},
        CpuErrorCase{"single-node-64vcpu", {{"reserve-cpus", "64"}}, {"--reserve-cpus", "64"}},
        CpuErrorCase{"single-node-64vcpu", {{"reserve-cpus", "0-63"}}, {"--reserve-cpus"}},
        CpuErrorCase{"laptop-2cpu", {{"reserve-cpus", "0-1"}}, {"--reserve-cpus", "reserve"}},
        CpuErrorCase{
            "four-node", {{"cpus", "0-3"}, {"reserve-cpus", "0-3"}}, {"--reserve-cpus", "0-3"}}),
    [](const testing::TestParamInfo<CpuErrorCase>& case_info) {
      return std::to_string(case_info.index);
    });

// ---------------------------------------------------------------------------------------------
// More shards than CPUs.

TEST(PlanSharingTest, FortyShardsOnTwoCpusShareEvenlyWithAWarning) {
  Plan plan = MustPlan("laptop-2cpu", {{"shards", "40"}});
  ASSERT_EQ(plan.shards.size(), 40u);
  ExpectWellFormed(Host("laptop-2cpu"), plan);
  auto per_cpu = ShardsPerCpu(plan);
  EXPECT_EQ(per_cpu, (std::map<int, int>{{0, 20}, {1, 20}}));
  ASSERT_FALSE(plan.warnings.empty());
  std::string warnings;
  for (const auto& warning : plan.warnings) warnings += warning + "\n";
  EXPECT_NE(warnings.find("share"), std::string::npos) << warnings;
}

TEST(PlanSharingTest, CountsPerCpuDifferByAtMostOne) {
  for (const char* host : {"laptop-2cpu", "no-numa-4cpu", "two-socket-smt", "four-node"}) {
    const int cpus = static_cast<int>(Host(host).cpus.size());
    for (int shards : {cpus + 1, cpus + 3, 2 * cpus, 3 * cpus - 1}) {
      SCOPED_TRACE(std::string(host) + " with " + std::to_string(shards) + " shards");
      Plan plan = MustPlan(host, {{"shards", std::to_string(shards)}});
      auto per_cpu = ShardsPerCpu(plan);
      EXPECT_EQ(per_cpu.size(), static_cast<size_t>(cpus)) << "every CPU is used";
      int most = 0;
      int least = shards;
      for (const auto& [cpu, count] : per_cpu) {
        most = std::max(most, count);
        least = std::min(least, count);
      }
      EXPECT_LE(most - least, 1);
      EXPECT_FALSE(plan.warnings.empty());
    }
  }
}

TEST(PlanSharingTest, NoWarningWhenEveryShardHasItsOwnCpu) {
  for (const char* host : {"laptop-2cpu", "no-numa-4cpu", "single-node-64vcpu", "four-node"}) {
    const int cpus = static_cast<int>(Host(host).cpus.size());
    Plan plan = MustPlan(host, {{"shards", std::to_string(cpus)}});
    EXPECT_TRUE(plan.warnings.empty()) << host << ": " << plan.warnings.front();
  }
}

// ---------------------------------------------------------------------------------------------
// Default shard count.

struct DefaultCountCase {
  const char* host;
  Flags flags;
  int shards;
};

class PlanDefaultCountTest : public testing::TestWithParam<DefaultCountCase> {};

TEST_P(PlanDefaultCountTest, OnePerUsablePhysicalCore) {
  const DefaultCountCase& c = GetParam();
  Plan plan = MustPlan(c.host, c.flags);
  EXPECT_EQ(plan.shards.size(), static_cast<size_t>(c.shards));
  EXPECT_EQ(plan.usable_cores, c.shards);
  EXPECT_TRUE(plan.warnings.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PlanDefaultCountTest,
    testing::Values(DefaultCountCase{"single-node-64vcpu", {}, 32},
                    DefaultCountCase{"two-socket-smt", {}, 32},
                    DefaultCountCase{"four-node", {}, 32}, DefaultCountCase{"laptop-2cpu", {}, 2},
                    DefaultCountCase{"no-numa-4cpu", {}, 2}, DefaultCountCase{"hotadd-vm", {}, 2},
                    // Reserving one thread of a core leaves its sibling: still 32 cores.
                    DefaultCountCase{"single-node-64vcpu", {{"reserve-cpus", "0-1"}}, 32},
                    DefaultCountCase{"single-node-64vcpu", {{"reserve-cpus", "0-1,32-33"}}, 30},
                    DefaultCountCase{"single-node-64vcpu", {{"cpus", "0-7"}}, 8},
                    DefaultCountCase{"single-node-64vcpu", {{"cpus", "0-3,32-35"}}, 4},
                    DefaultCountCase{"four-node", {{"cpus", "0-7,32-39"}}, 8}),
    [](const testing::TestParamInfo<DefaultCountCase>& case_info) {
      return std::to_string(case_info.index);
    });

// ---------------------------------------------------------------------------------------------
// Ports.

struct PortCase {
  Flags flags;
  int base;
  int bus;
};

class PlanPortsTest : public testing::TestWithParam<PortCase> {};

TEST_P(PlanPortsTest, ShardIGetsBasePlusI) {
  const PortCase& c = GetParam();
  auto plan = PlanOn("four-node", c.flags);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  for (const auto& shard : plan->shards) {
    EXPECT_EQ(shard.port, c.base + shard.index);
    EXPECT_EQ(shard.bus_port, c.bus + shard.index);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ports, PlanPortsTest,
    testing::Values(PortCase{{{"shards", "8"}}, 7000, 17000},
                    PortCase{{{"shards", "8"}, {"base-port", "30000"}}, 30000, 40000},
                    PortCase{{{"shards", "8"}, {"bus-base-port", "20000"}}, 7000, 20000},
                    PortCase{{{"base-port", "1"}, {"shards", "3"}}, 1, 10001},
                    // The last possible ranges: 55528-55535 and 65528-65535.
                    PortCase{{{"shards", "8"}, {"base-port", "55528"}}, 55528, 65528},
                    PortCase{{{"shards", "8"}, {"base-port", "65528"}, {"bus-base-port", "40000"}},
                             65528,
                             40000},
                    // Adjacent but not overlapping.
                    PortCase{{{"shards", "8"}, {"bus-base-port", "6992"}}, 7000, 6992},
                    PortCase{{{"shards", "8"}, {"bus-base-port", "7008"}}, 7000, 7008}),
    [](const testing::TestParamInfo<PortCase>& case_info) {
      return std::to_string(case_info.index);
    });

struct PortErrorCase {
  Flags flags;
  std::vector<std::string> mentions;
  const char* follow;  // the flag whose suggested value alone must fix the ports; "" for none
};

class PlanPortErrorTest : public testing::TestWithParam<PortErrorCase> {};

TEST_P(PlanPortErrorTest, RefusesAndSuggestsAFixThatFits) {
  const PortErrorCase& c = GetParam();
  std::string message = PlanError("four-node", c.flags);
  for (const auto& text : c.mentions) {
    EXPECT_NE(message.find(text), std::string::npos) << "\"" << text << "\" not in: " << message;
  }
  if (std::string(c.follow).empty()) return;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(message, match, std::regex(std::string(c.follow) + " (\\d+)")))
      << "no " << c.follow << " suggestion in: " << message;
  Flags fixed = c.flags;
  fixed.push_back({std::string(c.follow).substr(2), match[1].str()});
  auto plan = PlanOn("four-node", fixed);
  EXPECT_TRUE(plan.ok()) << "following \"" << match[0] << "\" from \"" << message
                         << "\" still fails: " << plan.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Ports, PlanPortErrorTest,
    testing::Values(
        // Client ports past 65535, and with them the default bus range.
        PortErrorCase{
            {{"shards", "8"}, {"base-port", "65530"}}, {"--base-port", "65535"}, "--base-port"},
        // Client ports past 65535 with a bus range that fits.
        PortErrorCase{{{"shards", "8"}, {"base-port", "65530"}, {"bus-base-port", "20000"}},
                      {"--base-port", "65535"},
                      "--base-port"},
        // --tls-also-plain's plain ports (base + 20000) pass 65535.
        PortErrorCase{{{"shards", "8"},
                       {"base-port", "50000"},
                       {"tls-cert", "s.crt"},
                       {"tls-key", "s.key"},
                       {"tls-ca", "ca.crt"},
                       {"tls-also-plain", "true"}},
                      {"--plain-base-port", "70000"},
                      "--plain-base-port"},
        // Only the default bus range (base + 10000) passes 65535.
        PortErrorCase{{{"shards", "8"}, {"base-port", "60000"}},
                      {"--bus-base-port", "65535"},
                      "--bus-base-port"},
        PortErrorCase{{{"shards", "8"}, {"base-port", "55529"}},
                      {"--bus-base-port", "65535"},
                      "--bus-base-port"},
        // An explicit bus range past 65535.
        PortErrorCase{{{"shards", "8"}, {"bus-base-port", "65530"}},
                      {"--bus-base-port", "65535"},
                      "--bus-base-port"},
        // Overlapping ranges, from either side.
        PortErrorCase{{{"shards", "8"}, {"bus-base-port", "7004"}}, {"overlap", "7000-7007"}, ""},
        PortErrorCase{{{"shards", "8"}, {"bus-base-port", "6993"}}, {"overlap", "6993-7000"}, ""},
        PortErrorCase{{{"shards", "8"}, {"bus-base-port", "7000"}}, {"overlap"}, ""}),
    [](const testing::TestParamInfo<PortErrorCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(PlanPortErrorTest, EveryLineOfAPortErrorNamesAFlag) {
  std::string message = PlanError("four-node", {{"shards", "8"}, {"base-port", "65530"}});
  std::istringstream lines(message);
  std::string line;
  while (std::getline(lines, line)) EXPECT_EQ(line.rfind("--", 0), 0u) << line;
}

// ---------------------------------------------------------------------------------------------
// Memory.

struct MemoryCase {
  const char* host;
  Flags flags;
  uint64_t per_shard;
};

class PlanMemoryTest : public testing::TestWithParam<MemoryCase> {};

TEST_P(PlanMemoryTest, GivesEachShardItsShare) {
  const MemoryCase& c = GetParam();
  Plan plan = MustPlan(c.host, c.flags);
  ASSERT_FALSE(plan.shards.empty());
  for (const auto& shard : plan.shards) EXPECT_EQ(shard.maxmemory, c.per_shard);
}

INSTANTIATE_TEST_SUITE_P(
    Memory, PlanMemoryTest,
    testing::Values(
        MemoryCase{"single-node-64vcpu", {{"shards", "8"}, {"shard-memory", "2gb"}}, 2 * kGiB},
        MemoryCase{"single-node-64vcpu", {{"shards", "8"}, {"memory", "16gb"}}, 2 * kGiB},
        MemoryCase{"single-node-64vcpu", {{"shards", "3"}, {"memory", "3000mb"}}, 1000 * kMiB},
        // Uneven totals round down.
        MemoryCase{"single-node-64vcpu", {{"shards", "3"}, {"memory", "31mb"}}, 31 * kMiB / 3},
        // Exactly at the cap is fine.
        MemoryCase{"single-node-64vcpu", {{"shards", "8"}, {"memory", "200gb"}}, 25 * kGiB},
        MemoryCase{"single-node-64vcpu", {{"shards", "4"}, {"shard-memory", "25gb"}}, 25 * kGiB},
        MemoryCase{"single-node-64vcpu",
                   {{"shards", "4"}, {"shard-memory", "30gb"}, {"max-shard-memory", "32gb"}},
                   30 * kGiB},
        // Default: half of the used nodes' memory, split, capped at 25gb.
        MemoryCase{"laptop-2cpu", {{"shards", "2"}}, 4 * kGiB},
        MemoryCase{"laptop-2cpu", {{"shards", "40"}}, 16 * kGiB / 2 / 40 & ~(kMiB - 1)},
        MemoryCase{"single-node-64vcpu", {{"shards", "2"}}, 25 * kGiB},
        MemoryCase{"four-node", {{"shards", "32"}}, 4 * kGiB},
        MemoryCase{"hotadd-vm", {}, 6 * kGiB}),
    [](const testing::TestParamInfo<MemoryCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(PlanMemoryTest, DefaultIsPositiveAtMostTheCapAndFitsEveryNode) {
  for (const char* host : {"single-node-64vcpu", "two-socket-smt", "four-node", "laptop-2cpu",
                           "no-numa-4cpu", "hotadd-vm"}) {
    for (int shards : {1, 2, 3, 7, 32, 64, 100, 1000}) {
      SCOPED_TRACE(std::string(host) + " with " + std::to_string(shards) + " shards");
      Plan plan = MustPlan(host, {{"shards", std::to_string(shards)}});
      std::map<int, uint64_t> per_node;
      for (const auto& shard : plan.shards) {
        EXPECT_GT(shard.maxmemory, 0u);
        EXPECT_GE(shard.maxmemory, kMinShardMemory);
        EXPECT_LE(shard.maxmemory, kDefaultMaxShardMemory);
        per_node[shard.numa_node] += shard.maxmemory;
      }
      for (const auto& node : Host(host).nodes) {
        EXPECT_LE(per_node[node.id], node.memory_bytes) << "node " << node.id;
      }
    }
  }
}

TEST(PlanMemoryTest, DefaultFollowsALowerMaxShardMemory) {
  Plan plan = MustPlan("single-node-64vcpu", {{"shards", "4"}, {"max-shard-memory", "1gb"}});
  for (const auto& shard : plan.shards) EXPECT_EQ(shard.maxmemory, kGiB);
}

struct MemoryErrorCase {
  const char* why;
  const Topology* host;
  Flags flags;
  std::vector<std::string> mentions;
};

class PlanMemoryErrorTest : public testing::TestWithParam<MemoryErrorCase> {};

TEST_P(PlanMemoryErrorTest, Refuses) {
  const MemoryErrorCase& c = GetParam();
  auto plan = PlanOn(*c.host, c.flags);
  ASSERT_FALSE(plan.ok()) << c.why;
  for (const auto& text : c.mentions) {
    EXPECT_NE(plan.error().message().find(text), std::string::npos)
        << c.why << ": \"" << text << "\" not in: " << plan.error().message();
  }
}

const Topology kTwoTiBHost = BigHost(64, 2 * kTiB);

INSTANTIATE_TEST_SUITE_P(
    Memory, PlanMemoryErrorTest,
    testing::Values(
        MemoryErrorCase{"shard-memory above the default cap",
                        &Host("single-node-64vcpu"),
                        {{"shards", "4"}, {"shard-memory", "30gb"}},
                        {"--shard-memory", "--max-shard-memory", "25gb"}},
        MemoryErrorCase{"shard-memory above a lowered cap",
                        &Host("single-node-64vcpu"),
                        {{"shards", "4"}, {"shard-memory", "2gb"}, {"max-shard-memory", "1gb"}},
                        {"--shard-memory", "--max-shard-memory"}},
        MemoryErrorCase{"memory above the host's",
                        &Host("single-node-64vcpu"),
                        {{"shards", "32"}, {"memory", "300gb"}},
                        {"--memory", "300gb", "256gb"}},
        MemoryErrorCase{"memory above the host's, 4 nodes",
                        &Host("four-node"),
                        {{"shards", "32"}, {"memory", "257gb"}},
                        {"--memory"}},
        MemoryErrorCase{"1tb over 10 shards needs 41 shards of at most 25gb",
                        &kTwoTiBHost,
                        {{"shards", "10"}, {"memory", "1tb"}},
                        {"--memory", "--max-shard-memory", "--shards 41"}},
        MemoryErrorCase{"200gb over 4 shards needs 8",
                        &Host("single-node-64vcpu"),
                        {{"shards", "4"}, {"memory", "200gb"}},
                        {"--shards 8"}},
        MemoryErrorCase{"a node holds less than its shards need (memory)",
                        &Host("four-node"),
                        {{"shards", "10"}, {"memory", "250gb"}},
                        {"NUMA node", "64gb"}},
        MemoryErrorCase{"a node holds less than its shards need (shard-memory)",
                        &Host("four-node"),
                        {{"shards", "32"}, {"shard-memory", "20gb"}},
                        {"NUMA node"}},
        MemoryErrorCase{"a node holds less than its shards need (2 nodes)",
                        &Host("two-socket-smt"),
                        {{"shards", "3"}, {"memory", "380gb"}, {"max-shard-memory", "200gb"}},
                        {"NUMA node 0"}},
        MemoryErrorCase{"under 8mb per shard (memory)",
                        &Host("laptop-2cpu"),
                        {{"shards", "2"}, {"memory", "1mb"}},
                        {"minimum", "8mb", "an empty shard uses"}},
        MemoryErrorCase{"under 8mb per shard (shard-memory)",
                        &Host("laptop-2cpu"),
                        {{"shards", "2"}, {"shard-memory", "7mb"}},
                        {"minimum", "8mb"}},
        MemoryErrorCase{"under 8mb per shard (many shards)",
                        &Host("laptop-2cpu"),
                        {{"shards", "1000"}, {"memory", "512mb"}},
                        {"minimum"}}),
    [](const testing::TestParamInfo<MemoryErrorCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(PlanMemoryTest, FollowingTheSuggestedShardCountWorks) {
  auto plan = PlanOn(kTwoTiBHost, {{"shards", "41"}, {"memory", "1tb"}});
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  for (const auto& shard : plan->shards) EXPECT_LE(shard.maxmemory, 25 * kGiB);
  auto fewer = PlanOn(kTwoTiBHost, {{"shards", "40"}, {"memory", "1tb"}});
  EXPECT_FALSE(fewer.ok());
}

// Given by --memory or --shard-memory, a shard gets at least 8 MB (an empty one uses 1.6-2.6 MB);
// the default, half the host's memory, only 1 MB (the fixture hosts have a few MB).
TEST(PlanMemoryTest, ExactlyTheMinimumPerShardIsEnough) {
  Plan plan = MustPlan("laptop-2cpu", {{"shards", "2"}, {"memory", "16mb"}});
  for (const auto& shard : plan.shards) EXPECT_EQ(shard.maxmemory, kMinGivenShardMemory);
  plan = MustPlan("laptop-2cpu", {{"shards", "2"}, {"shard-memory", "8mb"}});
  for (const auto& shard : plan.shards) EXPECT_EQ(shard.maxmemory, kMinGivenShardMemory);
}

// ---------------------------------------------------------------------------------------------
// Several problems at once.

TEST(PlanErrorsTest, PortAndMemoryProblemsAreReportedTogether) {
  std::string message =
      PlanError("four-node", {{"shards", "8"}, {"base-port", "65530"}, {"memory", "1tb"}});
  EXPECT_NE(message.find("--base-port"), std::string::npos) << message;
  EXPECT_NE(message.find("--memory"), std::string::npos) << message;
}

// ---------------------------------------------------------------------------------------------
// Slots.

TEST(PlanSlotsTest, PrimariesOwnTheEvenSplitInIndexOrder) {
  for (int shards : {1, 2, 3, 5, 7, 8, 16, 32, 40, 100, 1000}) {
    SCOPED_TRACE(std::to_string(shards) + " shards");
    Plan plan = MustPlan("four-node", {{"shards", std::to_string(shards)}});
    auto expected = common::SplitSlotsEvenly(shards);
    ASSERT_EQ(plan.shards.size(), expected.size());
    int next = 0;
    for (size_t i = 0; i < plan.shards.size(); ++i) {
      ASSERT_EQ(plan.shards[i].slots.size(), 1u) << "shard " << i;
      EXPECT_EQ(plan.shards[i].slots[0], expected[i]) << "shard " << i;
      EXPECT_EQ(plan.shards[i].slots[0].first, next) << "shard " << i;
      next = plan.shards[i].slots[0].last + 1;
    }
    EXPECT_EQ(next, common::kSlotCount);
  }
}

// ---------------------------------------------------------------------------------------------
// Determinism and diffs.

TEST(PlanDeterminismTest, SameInputGivesTheSamePlan) {
  const std::vector<std::pair<const char*, Flags>> cases = {
      {"single-node-64vcpu", {}},
      {"two-socket-smt", {{"shards", "13"}, {"reserve-cpus", "0,16"}}},
      {"four-node", {{"shards", "100"}, {"memory", "100gb"}}},
      {"laptop-2cpu", {{"shards", "40"}}},
  };
  for (const auto& [host, flags] : cases) {
    SCOPED_TRACE(host);
    Plan first = MustPlan(host, flags);
    Plan second = MustPlan(host, flags);
    auto topology = ReadTopology(std::string(SHARDCTL_FIXTURES_DIR) + "/sysfs/" + host);
    ASSERT_TRUE(topology.ok());
    auto third = MakePlan(*topology, SpecOf(flags));
    ASSERT_TRUE(third.ok());
    EXPECT_EQ(first.shards, second.shards);
    EXPECT_EQ(first.shards, third->shards);
    EXPECT_EQ(first.warnings, third->warnings);
    EXPECT_EQ(PlanToJson(first), PlanToJson(*third));
    EXPECT_TRUE(DiffPlans(first, *third).empty());
  }
}

TEST(PlanDiffTest, IdenticalPlansHaveNoDifferences) {
  Plan plan = MustPlan("two-socket-smt", {{"shards", "8"}});
  EXPECT_TRUE(DiffPlans(plan, plan).empty());
}

struct DiffCase {
  const char* why;
  Flags running;
  Flags requested;
  std::vector<std::string> lines;  // every one must be in the diff
  size_t count;                    // how many lines the diff has
};

class PlanDiffTest : public testing::TestWithParam<DiffCase> {};

TEST_P(PlanDiffTest, ListsEachDifference) {
  const DiffCase& c = GetParam();
  Plan running = MustPlan("two-socket-smt", c.running);
  Plan requested = MustPlan("two-socket-smt", c.requested);
  auto diff = DiffPlans(running, requested);
  std::string all;
  for (const auto& line : diff) all += line + "\n";
  for (const auto& line : c.lines) {
    EXPECT_NE(std::find(diff.begin(), diff.end(), line), diff.end())
        << c.why << ": \"" << line << "\" not in:\n"
        << all;
  }
  EXPECT_EQ(diff.size(), c.count) << c.why << ":\n" << all;
}

INSTANTIATE_TEST_SUITE_P(
    Diffs, PlanDiffTest,
    testing::Values(
        DiffCase{"shard count", {{"shards", "4"}}, {{"shards", "8"}}, {"shards: 4 -> 8"}, 1},
        DiffCase{"engine",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"engine", "valkey"}},
                 {"engine: redis -> valkey"},
                 1},
        DiffCase{"bind",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"bind", "0.0.0.0"}, {"allow-no-auth", "true"}},
                 {"bind: 127.0.0.1 -> 0.0.0.0"},
                 1},
        DiffCase{"announce",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"announce", "cache-1.example.com"}},
                 {"announce: - -> cache-1.example.com"},
                 1},
        DiffCase{"join",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"join", "127.0.0.1:8000"}},
                 {"join: - -> 127.0.0.1:8000"},
                 1},
        DiffCase{"cluster name",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"cluster-name", "prod"}},
                 {"cluster-name: default -> prod"},
                 1},
        DiffCase{"policy",
                 {{"shards", "4"}},
                 {{"shards", "4"}, {"maxmemory-policy", "allkeys-lru"}},
                 {"maxmemory-policy: noeviction -> allkeys-lru"},
                 1},
        DiffCase{"base port",
                 {{"shards", "2"}},
                 {{"shards", "2"}, {"base-port", "8000"}},
                 {"shard 0 port: 7000 -> 8000", "shard 1 port: 7001 -> 8001",
                  "shard 0 bus port: 17000 -> 18000", "shard 1 bus port: 17001 -> 18001"},
                 4},
        DiffCase{"bus port only",
                 {{"shards", "2"}},
                 {{"shards", "2"}, {"bus-base-port", "20000"}},
                 {"shard 0 bus port: 17000 -> 20000", "shard 1 bus port: 17001 -> 20001"},
                 2},
        DiffCase{"maxmemory",
                 {{"shards", "2"}, {"shard-memory", "1gb"}},
                 {{"shards", "2"}, {"shard-memory", "2gb"}},
                 {"shard 0 maxmemory: 1073741824 -> 2147483648",
                  "shard 1 maxmemory: 1073741824 -> 2147483648"},
                 2},
        DiffCase{"cpus and nodes",
                 {{"shards", "2"}},
                 {{"shards", "2"}, {"cpus", "16-31"}},
                 {"shard 0 cpus: 0 -> 16", "shard 0 numa node: 0 -> 1", "shard 1 cpus: 16 -> 17"},
                 3}),
    [](const testing::TestParamInfo<DiffCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(PlanJoinTest, JoiningPrimariesOwnNoSlotsUntilTheyTakeTheirShare) {
  Plan plan = MustPlan("two-socket-smt", {{"shards", "3"},
                                          {"replicas", "1"},
                                          {"join", "10.0.0.1:7000"},
                                          {"bind", "10.0.0.2"},
                                          {"password-file", "pass"}});
  EXPECT_EQ(plan.join, "10.0.0.1:7000");
  ASSERT_EQ(plan.shards.size(), 6u);
  for (const auto& shard : plan.shards) EXPECT_TRUE(shard.slots.empty()) << shard.index;
  EXPECT_EQ(plan.cluster_name, "default")
      << "the deployment name, when --cluster-name is not given";
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->join, "10.0.0.1:7000");
  EXPECT_EQ(back->cluster_name, "default");
}

TEST(PlanJoinTest, AnIpv6SeedIsKeptInBrackets) {
  Plan plan = MustPlan("two-socket-smt",
                       {{"shards", "1"}, {"join", "[fd00::1]:7000"}, {"cluster-name", "prod"}});
  EXPECT_EQ(plan.join, "[fd00::1]:7000");
  EXPECT_EQ(plan.cluster_name, "prod");
}

TEST(IsOurNodeTest, OurPortsAtOurAddressOnly) {
  Plan plan = MustPlan("two-socket-smt",
                       {{"shards", "2"}, {"bind", "10.0.0.2"}, {"password-file", "pass"}});
  EXPECT_EQ(AddressInCluster(plan), "10.0.0.2");
  EXPECT_TRUE(IsOurNode(plan, "10.0.0.2", 7000));
  EXPECT_TRUE(IsOurNode(plan, "10.0.0.2", 7001));
  EXPECT_FALSE(IsOurNode(plan, "10.0.0.2", 7002)) << "not one of our ports";
  EXPECT_FALSE(IsOurNode(plan, "10.0.0.1", 7000)) << "another host's shard on the same port";
  EXPECT_TRUE(IsOurNode(plan, "", 7000)) << "a line without a host yet (the node itself)";
}

TEST(IsOurNodeTest, TheAnnouncedIpIsOursAndAWildcardBindMatchesByPort) {
  Plan announced = MustPlan(
      "two-socket-smt",
      {{"shards", "1"}, {"bind", "0.0.0.0"}, {"announce", "192.0.2.7"}, {"allow-no-auth", "true"}});
  EXPECT_EQ(AddressInCluster(announced), "192.0.2.7");
  EXPECT_TRUE(IsOurNode(announced, "192.0.2.7", 7000));
  EXPECT_FALSE(IsOurNode(announced, "192.0.2.8", 7000));
  Plan wildcard =
      MustPlan("two-socket-smt", {{"shards", "1"}, {"bind", "0.0.0.0"}, {"allow-no-auth", "true"}});
  EXPECT_EQ(AddressInCluster(wildcard), "");
  EXPECT_TRUE(IsOurNode(wildcard, "192.0.2.8", 7000));
  Plan named = MustPlan("two-socket-smt", {{"shards", "1"},
                                           {"bind", "10.0.0.3"},
                                           {"announce", "cache-3.example.com"},
                                           {"password-file", "pass"}});
  EXPECT_EQ(AddressInCluster(named), "10.0.0.3") << "a host name is announced beside the IP";
}

}  // namespace
}  // namespace shardctl::launcher
