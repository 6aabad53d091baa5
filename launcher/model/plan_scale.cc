#include "launcher/model/plan_scale.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/size.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

// How many shards each CPU, physical core and NUMA node carries, kept up to date as new shards
// are placed.
struct Load {
  std::map<int, int> per_cpu;
  std::map<int, int> per_core;
  std::map<int, int> per_node;
  std::map<int, int> cores_per_node;  // usable physical cores of each node
  bool many_nodes = false;

  void Add(const Topology& topology, const ShardPlan& shard) {
    const int cpu = shard.cpus.front();
    ++per_cpu[cpu];
    ++per_core[PhysicalCoreOf(topology, cpu)];
    ++per_node[shard.numa_node];
  }
};

Load MeasureLoad(const Topology& topology, const std::vector<int>& usable, const Plan& running) {
  Load load;
  std::map<int, std::set<int>> cores;
  for (int id : usable) {
    const Cpu* cpu = topology.FindCpu(id);
    cores[cpu->node].insert(PhysicalCoreOf(topology, id));
    load.per_cpu[id];  // every usable CPU appears, loaded or not
  }
  for (const auto& [node, node_cores] : cores) {
    load.cores_per_node[node] = static_cast<int>(node_cores.size());
  }
  load.many_nodes = cores.size() > 1;
  for (const auto& shard : running.shards) load.Add(topology, shard);
  return load;
}

// Compared lexicographically, smaller is better. For a primary: a CPU nobody uses on a core
// nobody uses, on the node with the fewest shards per core. A replica puts "not its primary's
// node" and "not its primary's core" first.
using SeatCost = std::array<long long, 7>;

SeatCost CostOf(const Topology& topology, const Load& load, int cpu, const ShardPlan* primary) {
  const Cpu* info = topology.FindCpu(cpu);
  const int core = PhysicalCoreOf(topology, cpu);
  auto count = [](const std::map<int, int>& map, int key) {
    auto found = map.find(key);
    return found == map.end() ? 0LL : static_cast<long long>(found->second);
  };
  const long long node_cores = std::max(1LL, count(load.cores_per_node, info->node));
  // Shards per core of the node, compared across nodes without division.
  const long long density = count(load.per_node, info->node) * 1000 / node_cores;
  SeatCost cost{0, 0, count(load.per_cpu, cpu), count(load.per_core, core), density, 0, cpu};
  if (primary != nullptr) {
    cost[0] = load.many_nodes && info->node == primary->numa_node;
    cost[1] = core == PhysicalCoreOf(topology, primary->cpus.front());
  }
  return cost;
}

ShardPlan PlaceOne(const Topology& topology, Load& load, int index, const ShardPlan* primary) {
  int best = load.per_cpu.begin()->first;
  SeatCost best_cost = CostOf(topology, load, best, primary);
  for (const auto& [cpu, shards] : load.per_cpu) {
    const SeatCost cost = CostOf(topology, load, cpu, primary);
    if (cost < best_cost) best = cpu, best_cost = cost;
  }
  ShardPlan shard;
  shard.index = index;
  shard.cpus = {best};
  shard.numa_node = topology.FindCpu(best)->node;
  if (primary != nullptr) {
    shard.role = Role::kReplica;
    shard.primary = primary->index;
  }
  load.Add(topology, shard);
  return shard;
}

// Ports as `up` gave them (base + index), checked against 65535 and every port in use.
common::Status AssignPorts(const Plan& running, std::vector<ShardPlan>& added) {
  const ShardPlan& first = running.shards.front();
  const int base = first.port - first.index;
  const int bus_base = first.bus_port - first.index;
  std::set<int> taken;
  for (const auto& shard : running.shards) taken.insert({shard.port, shard.bus_port});
  for (auto& shard : added) {
    shard.port = base + shard.index;
    shard.bus_port = bus_base + shard.index;
    if (shard.port > 65535 || shard.bus_port > 65535) {
      return Error("shard " + std::to_string(shard.index) + " would need port " +
                   std::to_string(shard.port) + " and bus port " + std::to_string(shard.bus_port) +
                   ", past 65535 (scale to fewer shards, or start the deployment again with a "
                   "lower --base-port)");
    }
    if (taken.count(shard.port) || taken.count(shard.bus_port)) {
      return Error("shard " + std::to_string(shard.index) + " would need port " +
                   std::to_string(shard.port) + " and bus port " + std::to_string(shard.bus_port) +
                   ", which other shards' client and bus ports overlap (scale to fewer shards)");
    }
    taken.insert({shard.port, shard.bus_port});
  }
  return common::Ok();
}

// Every shard keeps the running shards' maxmemory; a node must hold all of its shards.
common::Status CheckMemory(const Topology& topology, const Plan& running,
                           const std::vector<ShardPlan>& added) {
  const uint64_t per = running.shards.front().maxmemory;
  std::map<int, uint64_t> need;
  for (const auto& shard : running.shards) need[shard.numa_node] += per;
  for (const auto& shard : added) need[shard.numa_node] += per;
  for (const auto& node : topology.nodes) {
    auto found = need.find(node.id);
    if (found == need.end() || node.memory_bytes == 0 || found->second <= node.memory_bytes) {
      continue;
    }
    return Error("NUMA node " + std::to_string(node.id) + " would need " +
                 common::FormatSize(found->second) + " for its shards' maxmemory (" +
                 common::FormatSize(per) + " each) and has " +
                 common::FormatSize(node.memory_bytes) + " (scale to fewer shards)");
  }
  return common::Ok();
}

int ReplicasPerPrimary(const Plan& plan) {
  const size_t primaries = PlannedPrimaries(plan).size();
  return primaries == 0 ? 0 : static_cast<int>((plan.shards.size() - primaries) / primaries);
}

}  // namespace

std::vector<const ShardPlan*> PlannedPrimaries(const Plan& plan) {
  std::vector<const ShardPlan*> primaries;
  for (const auto& shard : plan.shards) {
    if (shard.role == Role::kPrimary) primaries.push_back(&shard);
  }
  std::sort(primaries.begin(), primaries.end(),
            [](const ShardPlan* a, const ShardPlan* b) { return a->index < b->index; });
  return primaries;
}

const ShardPlan* FindShard(const Plan& plan, int index) {
  for (const auto& shard : plan.shards) {
    if (shard.index == index) return &shard;
  }
  return nullptr;
}

Result<Plan> ExtendPlan(const Topology& topology, const Spec& spec, const Plan& running,
                        int primaries) {
  const int current = static_cast<int>(PlannedPrimaries(running).size());
  if (running.shards.empty() || primaries <= current) {
    return Error("--shards " + std::to_string(primaries) + ": the deployment has " +
                 std::to_string(current) + " primaries already (to grow, ask for more)");
  }
  const int replicas = ReplicasPerPrimary(running);
  const int total =
      static_cast<int>(running.shards.size()) + (primaries - current) * (1 + replicas);
  if (total > kMaxShards) {
    return Error("--shards " + std::to_string(primaries) + ": " + std::to_string(total) +
                 " processes, more than the " + std::to_string(kMaxShards) +
                 " a Redis Cluster supports (scale to fewer shards)");
  }
  auto usable = UsableCpus(topology, spec);
  if (!usable.ok()) return usable.error();
  Load load = MeasureLoad(topology, *usable, running);
  int next = 0;
  for (const auto& shard : running.shards) next = std::max(next, shard.index + 1);
  std::vector<ShardPlan> added;
  for (int p = current; p < primaries; ++p) {
    const ShardPlan primary = PlaceOne(topology, load, next++, nullptr);
    added.push_back(primary);
    for (int r = 0; r < replicas; ++r) added.push_back(PlaceOne(topology, load, next++, &primary));
  }
  if (auto ports = AssignPorts(running, added); !ports.ok()) {
    return ports.error().Context("--shards " + std::to_string(primaries));
  }
  if (auto memory = CheckMemory(topology, running, added); !memory.ok()) {
    return memory.error().Context("--shards " + std::to_string(primaries));
  }
  Plan plan = running;
  plan.warnings.clear();
  for (auto& shard : added) {
    shard.maxmemory = running.shards.front().maxmemory;
    plan.shards.push_back(shard);
  }
  if (static_cast<int>(plan.shards.size()) > static_cast<int>(usable->size())) {
    plan.warnings.push_back(std::to_string(plan.shards.size()) + " shards share " +
                            std::to_string(usable->size()) +
                            " CPU(s): they compete for CPU time; fine for testing, use at most "
                            "one shard per CPU in production");
  }
  return plan;
}

Result<ShrunkPlan> ShrinkPlan(const Plan& running, int primaries) {
  const std::vector<const ShardPlan*> planned = PlannedPrimaries(running);
  const int current = static_cast<int>(planned.size());
  if (primaries < 1 || primaries >= current) {
    return Error("--shards " + std::to_string(primaries) + ": the deployment has " +
                 std::to_string(current) + " primaries (to shrink, ask for 1 to " +
                 std::to_string(current - 1) + ")");
  }
  ShrunkPlan shrunk;
  std::set<int> groups;
  for (int i = current - 1; i >= primaries; --i) groups.insert(planned[i]->index);
  shrunk.removed_groups.assign(groups.begin(), groups.end());
  shrunk.plan = running;
  shrunk.plan.warnings.clear();
  shrunk.plan.shards.clear();
  for (const auto& shard : running.shards) {
    const int group = shard.role == Role::kPrimary ? shard.index : shard.primary.value_or(-1);
    if (groups.count(group)) {
      shrunk.removed.push_back(shard.index);
    } else {
      shrunk.plan.shards.push_back(shard);
    }
  }
  return shrunk;
}

}  // namespace shardctl::launcher
