// Placement: where each shard lives. A pure function of (host topology, spec): no sockets, no
// processes, no clock, so every rule below is unit-tested on fixture topologies.
//
// Rules, in order of importance:
//   1. Reserved CPUs and CPUs outside --cpus are never used; naming an offline CPU is an error.
//   2. Shards are spread over NUMA nodes in proportion to each node's usable physical cores (so
//      evenly when the nodes are alike), and shard indices interleave the nodes.
//   3. Within a node, each shard gets one hardware thread, taking one thread of every physical
//      core before any SMT sibling is used.
//   4. More shards than usable CPUs: shards share CPUs round-robin (counts differ by at most one)
//      and the plan carries a warning saying so.
//   5. Memory: --shard-memory per shard, or --memory divided evenly, or by default half of the
//      used nodes' memory divided evenly; never above --max-shard-memory (refused with the shard
//      count that would fit) and never more than a node holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/slots.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"

namespace shardctl::launcher {

inline constexpr uint64_t kMinShardMemory = 1ull << 20;  // below this Redis cannot do much
// The least memory a shard may be given by --shard-memory or --memory: an empty shard already
// uses 1.6 MB (Redis 7.0) to 2.6 MB (Valkey 9.1, Redis 8.2) of it, so at 1 MB every write is
// refused with OOM. The default, half the host's memory over the shards, is held to
// kMinShardMemory only (the planner's fixture hosts have a few MB).
inline constexpr uint64_t kMinGivenShardMemory = 8ull << 20;

enum class Role { kPrimary, kReplica };

const char* RoleName(Role role);  // "primary" / "replica"

struct ShardPlan {
  int index = 0;
  int port = 0;
  int bus_port = 0;
  std::vector<int> cpus;  // the CPU set the process is pinned to
  int numa_node = 0;      // memory is bound to this node
  uint64_t maxmemory = 0;
  Role role = Role::kPrimary;
  std::optional<int> primary;            // replicas: index of the primary they follow
  std::vector<common::SlotRange> slots;  // primaries: the slots they own after formation
  friend bool operator==(const ShardPlan&, const ShardPlan&) = default;
};

struct Plan {
  std::string name;
  std::string engine;  // as the spec names it: "redis", "valkey" or a path
  std::string bind;
  std::string announce;  // --announce: the address or name other hosts and clients are told
  // --join: HOST:PORT of a node of the cluster this deployment joined (its primaries start with
  // no slots and take their share by slot moves); empty when it formed its own cluster.
  std::string join;
  std::string cluster_name;               // --cluster-name, or the deployment's name
  std::string preferred_endpoint = "ip";  // --preferred-endpoint: ip or hostname
  std::string maxmemory_policy;
  std::vector<ShardPlan> shards;
  std::vector<std::string> warnings;  // things the user should know but that do not stop `up`
  int usable_cpus = 0;                // after --cpus and --reserve-cpus
  int usable_cores = 0;               // physical cores among them
};

// The CPUs shards may use: --cpus (default: every online CPU) less --reserve-cpus. Errors name
// offline CPUs and an empty result.
common::Result<std::vector<int>> UsableCpus(const Topology& topology, const Spec& spec);

// The physical core of a CPU, named by its first SMT sibling.
int PhysicalCoreOf(const Topology& topology, int cpu);

// Computes the placement. Errors (one line per problem) say which flag to change and how.
common::Result<Plan> MakePlan(const Topology& topology, const Spec& spec);

// The host the cluster knows this deployment's shards by: --announce when it is an IP address,
// else the bind address ("" for a wildcard bind without --announce: the cluster decides).
std::string AddressInCluster(const Plan& plan);

// True when a cluster node listed at host:port is one of this plan's shards: one of its ports, at
// its address (other hosts' shards use the same ports). A node listed without a host, or a plan
// whose address the cluster decides (a wildcard bind), matches by port alone.
bool IsOurNode(const Plan& plan, const std::string& host, int port);

// Differences between a running deployment's plan and a requested one, as lines like
// "shards: 4 -> 8"; empty when `up` would change nothing.
std::vector<std::string> DiffPlans(const Plan& running, const Plan& requested);

}  // namespace shardctl::launcher
