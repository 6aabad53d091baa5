// Changing a running deployment's shape: more primaries (scale out) or fewer (scale in). Pure,
// like MakePlan: the running plan and the host's topology in, the new plan out.
//
// A shard keeps its index, CPU, port and data directory for its whole life, so a scaled plan is
// not what MakePlan would make for the new count: new shards get new indices after the highest
// one (port = base + index, as at `up`), and removed shards leave gaps. New shards follow the
// placement rules of `up`: a CPU no shard uses, on a physical core no shard uses, first; NUMA
// nodes kept even; a replica on another node (then another core) than its primary.
#pragma once

#include <vector>

#include "common/result.h"
#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"

namespace shardctl::launcher {

// The planned primaries of `plan` (role kPrimary), in index order.
std::vector<const ShardPlan*> PlannedPrimaries(const Plan& plan);

// The shard with this index, or nullptr.
const ShardPlan* FindShard(const Plan& plan, int index);

// `running` grown to `primaries` primaries, each new one with as many replicas as the running
// ones have. The new primaries own no slots yet (moving slots to them is the cluster's part).
// Errors say what does not fit and what to change: too many processes for a Redis Cluster, ports
// past 65535 or on another shard's bus port, more memory than a NUMA node has.
common::Result<Plan> ExtendPlan(const Topology& topology, const Spec& spec, const Plan& running,
                                int primaries);

struct ShrunkPlan {
  Plan plan;                        // without the removed shards
  std::vector<int> removed_groups;  // planned primaries removed, with their replicas
  std::vector<int> removed;         // every removed shard index
};

// `running` shrunk to `primaries` primaries: the most recently added primaries (highest
// indices) go, each with its replicas. Their slots must be moved away before they stop.
common::Result<ShrunkPlan> ShrinkPlan(const Plan& running, int primaries);

}  // namespace shardctl::launcher
