#include "launcher/model/plan.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "common/cpu_list.h"
#include "common/size.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::FormatCpuList;
using common::FormatSize;
using common::Result;

// The CPUs of one NUMA node that shards may use, ordered so that taking them front to back uses
// one thread of every physical core before any SMT sibling.
struct NodeCpus {
  int node = 0;
  std::vector<int> ordered;
  int cores = 0;
  uint64_t memory = 0;
  int shard_count = 0;  // filled by DistributeShards
};

std::vector<NodeCpus> GroupByNode(const Topology& topology, const std::vector<int>& usable) {
  // node -> (first sibling of the core) -> usable threads of that core
  std::map<int, std::map<int, std::vector<int>>> cores;
  for (int id : usable) {
    const Cpu* cpu = topology.FindCpu(id);
    int core_key = cpu->siblings.empty() ? id : cpu->siblings.front();
    cores[cpu->node][core_key].push_back(id);
  }
  std::vector<NodeCpus> nodes;
  for (auto& [node, threads_by_core] : cores) {
    NodeCpus group{.node = node, .cores = static_cast<int>(threads_by_core.size())};
    for (size_t round = 0; group.ordered.size() < usable.size(); ++round) {
      size_t before = group.ordered.size();
      for (auto& [core, threads] : threads_by_core) {
        if (round < threads.size()) group.ordered.push_back(threads[round]);
      }
      if (group.ordered.size() == before) break;
    }
    for (const auto& numa : topology.nodes) {
      if (numa.id == node) group.memory = numa.memory_bytes;
    }
    nodes.push_back(std::move(group));
  }
  return nodes;
}

// Largest-remainder split of `shards` over nodes in proportion to their usable cores.
void DistributeShards(int shards, std::vector<NodeCpus>& nodes) {
  int total_cores = 0;
  for (const auto& node : nodes) total_cores += node.cores;
  int given = 0;
  std::vector<std::pair<long long, size_t>> remainders;  // (remainder, node position)
  for (size_t i = 0; i < nodes.size(); ++i) {
    long long share = static_cast<long long>(shards) * nodes[i].cores;
    nodes[i].shard_count = static_cast<int>(share / total_cores);
    given += nodes[i].shard_count;
    remainders.push_back({share % total_cores, i});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < shards; ++k, ++given) {
    nodes[remainders[k % remainders.size()].second].shard_count++;
  }
}

// Places shards on CPUs: indices interleave the nodes; within a node CPUs are taken in order and
// wrap around when shards outnumber them.
std::vector<ShardPlan> PlaceShards(const std::vector<NodeCpus>& nodes) {
  std::vector<ShardPlan> shards;
  std::vector<int> placed(nodes.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (placed[n] == nodes[n].shard_count) continue;
      const auto& cpus = nodes[n].ordered;
      ShardPlan shard;
      shard.index = static_cast<int>(shards.size());
      shard.cpus = {cpus[placed[n] % cpus.size()]};
      shard.numa_node = nodes[n].node;
      shards.push_back(std::move(shard));
      ++placed[n];
      progress = true;
    }
  }
  return shards;
}

int CoreOf(const Topology& topology, int cpu) { return PhysicalCoreOf(topology, cpu); }

// How bad a seat is for a replica of `primary`: another NUMA node first (when there is more than
// one), then another physical core than the primary and its other replicas. Compared
// lexicographically, so that no number of other replicas outweighs a rule above them.
using SeatCost = std::array<int, 4>;

SeatCost ReplicaSeatCost(const Topology& topology, const ShardPlan& seat, const ShardPlan& primary,
                         const std::vector<const ShardPlan*>& siblings, bool many_nodes) {
  int core = CoreOf(topology, seat.cpus[0]);
  SeatCost cost = {many_nodes && seat.numa_node == primary.numa_node,
                   core == CoreOf(topology, primary.cpus[0]), 0, 0};
  for (const ShardPlan* other : siblings) {
    cost[2] += many_nodes && other->numa_node == seat.numa_node;
    cost[3] += CoreOf(topology, other->cpus[0]) == core;
  }
  return cost;
}

// Turns seats (CPU + node, interleaved over nodes) into primaries and replicas. Primaries take
// the first seats, so they spread over nodes and cores like a plan without replicas; each replica
// then takes the free seat cheapest by ReplicaSeatCost. Index = primary + primaries * r.
std::vector<ShardPlan> AssignRoles(std::vector<ShardPlan> seats, int primaries, int replicas,
                                   const Topology& topology, std::vector<std::string>& warnings) {
  std::set<int> nodes;
  for (const auto& seat : seats) nodes.insert(seat.numa_node);
  bool many_nodes = nodes.size() > 1;
  std::vector<ShardPlan> shards(seats.begin(), seats.begin() + primaries);
  std::vector<bool> taken(seats.size(), false);
  std::vector<std::vector<const ShardPlan*>> replicas_of(primaries);
  std::vector<ShardPlan> placed;
  placed.reserve(seats.size());
  for (int r = 1; r <= replicas; ++r) {
    for (int p = 0; p < primaries; ++p) {
      size_t best = 0;
      std::optional<SeatCost> best_cost;
      for (size_t s = primaries; s < seats.size(); ++s) {
        if (taken[s]) continue;
        SeatCost cost = ReplicaSeatCost(topology, seats[s], shards[p], replicas_of[p], many_nodes);
        if (!best_cost || cost < *best_cost) best = s, best_cost = cost;
      }
      taken[best] = true;
      ShardPlan replica = seats[best];
      replica.index = p + primaries * r;
      replica.role = Role::kReplica;
      replica.primary = p;
      if (CoreOf(topology, replica.cpus[0]) == CoreOf(topology, shards[p].cpus[0])) {
        warnings.push_back("replica " + std::to_string(replica.index) +
                           " shares a core with its "
                           "primary " +
                           std::to_string(p) + " (too few cores to keep them apart)");
      }
      placed.push_back(std::move(replica));
      replicas_of[p].push_back(&placed.back());
    }
  }
  for (int p = 0; p < primaries; ++p) shards[p].index = p;
  shards.insert(shards.end(), placed.begin(), placed.end());
  return shards;
}

void AddSharingWarnings(const std::vector<NodeCpus>& nodes, Plan& plan) {
  for (const auto& node : nodes) {
    int cpus = static_cast<int>(node.ordered.size());
    if (node.shard_count <= cpus) continue;
    int most = (node.shard_count + cpus - 1) / cpus;
    plan.warnings.push_back(std::to_string(node.shard_count) + " shards share " +
                            std::to_string(cpus) + " CPU(s) on NUMA node " +
                            std::to_string(node.node) + " (up to " + std::to_string(most) +
                            " per CPU): they compete for CPU time; fine for testing, use at most "
                            "one shard per CPU in production");
  }
}

common::Status AssignPorts(const Spec& spec, Plan& plan) {
  int count = static_cast<int>(plan.shards.size());
  int base = spec.base_port;
  int bus = spec.BusBasePort();
  // Without --bus-base-port the bus range moves with the base, so the base must leave room for it.
  int highest_base = 65536 - count - (spec.bus_base_port ? 0 : kBusPortOffset);
  std::string problems;
  if (base + count - 1 > 65535) {
    problems += "--base-port: " + std::to_string(count) + " shards from port " +
                std::to_string(base) + " run past 65535 (use --base-port " +
                std::to_string(highest_base) + " or lower)\n";
  }
  if (bus + count - 1 > 65535) {
    problems += "--bus-base-port: " + std::to_string(count) + " cluster bus ports from " +
                std::to_string(bus) + " run past 65535 (set --bus-base-port " +
                std::to_string(65536 - count) + " or lower, or lower --base-port)\n";
  }
  if (spec.tls_also_plain) {
    const int plain = spec.PlainBasePort();
    if (plain + count - 1 > 65535) {
      problems += "--plain-base-port: " + std::to_string(count) + " plain ports from " +
                  std::to_string(plain) + " run past 65535 (set --plain-base-port " +
                  std::to_string(65536 - count) + " or lower; the default is --base-port + " +
                  std::to_string(kPlainPortOffset) + ")\n";
    } else if ((plain < bus + count && bus < plain + count) ||
               (plain < base + count && base < plain + count)) {
      problems += "--plain-base-port: the plain ports " + std::to_string(plain) + "-" +
                  std::to_string(plain + count - 1) +
                  " overlap the client or cluster bus ports (move one range)\n";
    }
  }
  if (base < bus + count && bus < base + count) {
    problems += "--bus-base-port: the cluster bus ports " + std::to_string(bus) + "-" +
                std::to_string(bus + count - 1) + " overlap the client ports " +
                std::to_string(base) + "-" + std::to_string(base + count - 1) +
                " (move one range)\n";
  }
  if (!problems.empty()) {
    problems.pop_back();
    return Error(problems);
  }
  for (auto& shard : plan.shards) {
    shard.port = base + shard.index;
    shard.bus_port = bus + shard.index;
  }
  return common::Ok();
}

std::string CountThatFits(uint64_t total, uint64_t cap) {
  return std::to_string((total + cap - 1) / cap);
}

Result<uint64_t> PerShardMemory(const Spec& spec, const std::vector<NodeCpus>& nodes, int count,
                                uint64_t host_memory) {
  uint64_t cap = spec.max_shard_memory;
  uint64_t used_nodes_memory = 0;
  for (const auto& node : nodes) used_nodes_memory += node.memory;
  if (spec.shard_memory) {
    if (*spec.shard_memory > cap) {
      return Error("--shard-memory: " + FormatSize(*spec.shard_memory) +
                   " is above --max-shard-memory " + FormatSize(cap) +
                   " (use more, smaller shards, or raise --max-shard-memory)");
    }
    return *spec.shard_memory;
  }
  if (spec.memory) {
    if (*spec.memory > host_memory) {
      return Error("--memory: " + FormatSize(*spec.memory) + " is more than this host has (" +
                   FormatSize(host_memory) + "; ask for less)");
    }
    uint64_t per = *spec.memory / count;
    if (per > cap) {
      return Error("--memory: " + FormatSize(*spec.memory) + " over " + std::to_string(count) +
                   " shards is " + FormatSize(per) + " per shard, above --max-shard-memory " +
                   FormatSize(cap) + " (use --shards " + CountThatFits(*spec.memory, cap) +
                   " or more)");
    }
    return per;
  }
  uint64_t per = std::min(cap, used_nodes_memory / 2 / count);
  return per >= (64ull << 20) ? per & ~((1ull << 20) - 1) : per;  // whole MiB reads better
}

common::Status AssignMemory(const Spec& spec, const Topology& topology,
                            const std::vector<NodeCpus>& nodes, Plan& plan) {
  int count = static_cast<int>(plan.shards.size());
  auto per = PerShardMemory(spec, nodes, count, topology.total_memory_bytes);
  if (!per.ok()) return per.error();
  const bool given = spec.shard_memory.has_value() || spec.memory.has_value();
  const uint64_t least = given ? kMinGivenShardMemory : kMinShardMemory;
  if (*per < least) {
    return Error("memory: each shard would get " + FormatSize(*per) + ", below the " +
                 FormatSize(least) +
                 " minimum (an empty shard uses 1.6-2.6mb of it; give more memory or fewer "
                 "shards)");
  }
  for (const auto& node : nodes) {
    uint64_t need = *per * node.shard_count;
    if (node.memory > 0 && need > node.memory) {
      return Error("memory: " + std::to_string(node.shard_count) + " shards x " + FormatSize(*per) +
                   " = " + FormatSize(need) + " on NUMA node " + std::to_string(node.node) +
                   ", which has only " + FormatSize(node.memory) +
                   " (use smaller or fewer shards)");
    }
  }
  for (auto& shard : plan.shards) shard.maxmemory = *per;
  return common::Ok();
}

}  // namespace

Result<std::vector<int>> UsableCpus(const Topology& topology, const Spec& spec) {
  std::set<int> online;
  for (const auto& cpu : topology.cpus) online.insert(cpu.id);
  std::string problems;
  auto check_online = [&](const std::vector<int>& cpus, const char* flag) {
    std::vector<int> offline;
    for (int id : cpus) {
      if (!online.count(id)) offline.push_back(id);
    }
    if (!offline.empty()) {
      // With host limits the topology holds only what this process may use (host_limits.h).
      problems += std::string(flag) + ": CPUs " + FormatCpuList(offline) +
                  (topology.limits.empty()
                       ? " are not online on this host (online: "
                       : " are not online on this host or not allowed to this process (usable: ") +
                  FormatCpuList({online.begin(), online.end()}) + ")\n";
    }
  };
  std::vector<int> wanted = spec.cpus.value_or(std::vector<int>(online.begin(), online.end()));
  if (spec.cpus) check_online(*spec.cpus, "--cpus");
  check_online(spec.reserve_cpus, "--reserve-cpus");
  if (!problems.empty()) {
    problems.pop_back();
    return Error(problems);
  }
  std::set<int> reserved(spec.reserve_cpus.begin(), spec.reserve_cpus.end());
  std::vector<int> usable;
  for (int id : wanted) {
    if (!reserved.count(id)) usable.push_back(id);
  }
  if (usable.empty()) {
    return Error("--reserve-cpus: every CPU in " + FormatCpuList(wanted) +
                 " is reserved, so no shard has a CPU (reserve fewer CPUs or widen --cpus)");
  }
  return usable;
}

int PhysicalCoreOf(const Topology& topology, int cpu) {
  const Cpu* found = topology.FindCpu(cpu);
  return found && !found->siblings.empty() ? found->siblings.front() : cpu;
}

const char* RoleName(Role role) { return role == Role::kPrimary ? "primary" : "replica"; }

Result<Plan> MakePlan(const Topology& topology, const Spec& spec) {
  auto usable = UsableCpus(topology, spec);
  if (!usable.ok()) return usable.error();
  auto nodes = GroupByNode(topology, *usable);
  Plan plan{.name = spec.name,
            .engine = spec.engine,
            .bind = spec.bind,
            .announce = spec.announce,
            .join = spec.join,
            .cluster_name = spec.cluster_name.empty() ? spec.name : spec.cluster_name,
            .preferred_endpoint = spec.preferred_endpoint,
            .maxmemory_policy = spec.maxmemory_policy};
  plan.usable_cpus = static_cast<int>(usable->size());
  for (const auto& node : nodes) plan.usable_cores += node.cores;

  int primaries = spec.shards.value_or(std::max(1, plan.usable_cores / (1 + spec.replicas)));
  int count = primaries * (1 + spec.replicas);
  if (count > kMaxShards) {
    return Error("--replicas: " + std::to_string(primaries) + " primaries x " +
                 std::to_string(1 + spec.replicas) + " = " + std::to_string(count) +
                 " processes, more than the " + std::to_string(kMaxShards) +
                 " a Redis Cluster supports (use fewer shards or replicas)");
  }
  DistributeShards(count, nodes);
  plan.shards = AssignRoles(PlaceShards(nodes), primaries, spec.replicas, topology, plan.warnings);
  AddSharingWarnings(nodes, plan);

  std::string problems;
  if (auto ports = AssignPorts(spec, plan); !ports.ok()) problems += ports.error().message() + "\n";
  if (auto memory = AssignMemory(spec, topology, nodes, plan); !memory.ok()) {
    problems += memory.error().message() + "\n";
  }
  if (!problems.empty()) {
    problems.pop_back();
    return Error(problems);
  }
  // Joining primaries own nothing at first: they take their share from the cluster by slot moves.
  if (!plan.join.empty()) return plan;
  auto ranges = common::SplitSlotsEvenly(primaries);
  for (auto& shard : plan.shards) {
    if (shard.role == Role::kPrimary) shard.slots = {ranges[shard.index]};
  }
  return plan;
}

std::string AddressInCluster(const Plan& plan) {
  if (!plan.announce.empty() && IsIpLiteral(plan.announce)) return plan.announce;
  if (plan.bind == "0.0.0.0" || plan.bind == "::") return "";
  return plan.bind;
}

bool IsOurNode(const Plan& plan, const std::string& host, int port) {
  const std::string ours = AddressInCluster(plan);
  const bool here = ours.empty() || host.empty() || host == ours || host == plan.bind;
  return here && std::any_of(plan.shards.begin(), plan.shards.end(),
                             [port](const ShardPlan& shard) { return shard.port == port; });
}

std::vector<std::string> DiffPlans(const Plan& running, const Plan& requested) {
  std::vector<std::string> diffs;
  auto compare = [&](const std::string& what, const std::string& was, const std::string& now) {
    if (was != now) diffs.push_back(what + ": " + was + " -> " + now);
  };
  compare("engine", running.engine, requested.engine);
  compare("bind", running.bind, requested.bind);
  if (running.announce != requested.announce) {
    auto shown = [](const std::string& announce) { return announce.empty() ? "-" : announce; };
    compare("announce", shown(running.announce), shown(requested.announce));
  }
  if (running.join != requested.join) {
    auto shown = [](const std::string& join) { return join.empty() ? "-" : join; };
    compare("join", shown(running.join), shown(requested.join));
  }
  compare("cluster-name", running.cluster_name, requested.cluster_name);
  compare("preferred-endpoint", running.preferred_endpoint, requested.preferred_endpoint);
  compare("maxmemory-policy", running.maxmemory_policy, requested.maxmemory_policy);
  compare("shards", std::to_string(running.shards.size()), std::to_string(requested.shards.size()));
  if (!diffs.empty() || running.shards.size() != requested.shards.size()) return diffs;
  for (size_t i = 0; i < running.shards.size(); ++i) {
    const auto& was = running.shards[i];
    const auto& now = requested.shards[i];
    std::string prefix = "shard " + std::to_string(i) + " ";
    compare(prefix + "port", std::to_string(was.port), std::to_string(now.port));
    compare(prefix + "bus port", std::to_string(was.bus_port), std::to_string(now.bus_port));
    compare(prefix + "cpus", FormatCpuList(was.cpus), FormatCpuList(now.cpus));
    compare(prefix + "numa node", std::to_string(was.numa_node), std::to_string(now.numa_node));
    compare(prefix + "role", RoleName(was.role), RoleName(now.role));
    compare(prefix + "primary", was.primary ? std::to_string(*was.primary) : "-",
            now.primary ? std::to_string(*now.primary) : "-");
    compare(prefix + "maxmemory", std::to_string(was.maxmemory), std::to_string(now.maxmemory));
  }
  return diffs;
}

}  // namespace shardctl::launcher
