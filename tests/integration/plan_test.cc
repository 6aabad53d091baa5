// `shardctl plan` against a copy of a bigger host's /sys: the real binary, no processes started.
#include <map>
#include <set>
#include <utility>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class PlanTest : public ShardctlTest {};

std::string TopologyFile(const fs::path& root, int cpu, const std::string& file) {
  auto lines = SplitLines(ReadFileText(root / "devices/system/cpu" / ("cpu" + std::to_string(cpu)) /
                                       "topology" / file));
  return lines.empty() ? "?" : lines[0];
}

TEST_F(PlanTest, TwoSocketSmtHostGetsFourShardsPerNodeOnDistinctCores) {
  const fs::path root = FixturesDir() / "sysfs" / "two-socket-smt";
  auto result = Shardctl({"plan", "--sysfs-root", root.string(), "--shards", "8", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  json plan = json::parse(result.out, nullptr, false);
  ASSERT_TRUE(plan.is_object()) << result.Describe();
  ASSERT_EQ(plan["shards"].size(), 8u) << plan.dump(2);

  std::map<int, int> shards_per_node;
  std::set<std::pair<std::string, std::string>> cores;  // (package, core id)
  for (const auto& shard : plan["shards"]) {
    SCOPED_TRACE(shard.dump());
    int node = shard["numa_node"].get<int>();
    ++shards_per_node[node];
    ASSERT_EQ(shard["cpus"].size(), 1u);
    int cpu = shard["cpus"][0].get<int>();
    std::vector<int> node_cpus = ParseCpuList(SplitLines(ReadFileText(
        root / "devices/system/node" / ("node" + std::to_string(node)) / "cpulist"))[0]);
    EXPECT_NE(std::find(node_cpus.begin(), node_cpus.end(), cpu), node_cpus.end())
        << "cpu " << cpu << " is not on NUMA node " << node;
    cores.insert(
        {TopologyFile(root, cpu, "physical_package_id"), TopologyFile(root, cpu, "core_id")});
  }
  EXPECT_EQ(shards_per_node, (std::map<int, int>{{0, 4}, {1, 4}}));
  EXPECT_EQ(cores.size(), 8u) << "two shards share a physical core (SMT siblings)";
  ExpectNothingRunning("after plan");
  EXPECT_TRUE(fs::is_empty(state_root())) << "plan must not touch the state dir";
}

}  // namespace
}  // namespace shardctl::integration
