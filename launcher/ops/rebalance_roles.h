// `shardctl rebalance-roles`: after failovers, moves the primary role back to the shards the plan
// made primaries, one at a time, with a graceful CLUSTER FAILOVER (cluster/failover.h).
#pragma once

#include <functional>
#include <vector>

#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// The shards moved back, in order; `moved` hears of each once it is primary again.
Outcome<std::vector<int>> RebalanceRoles(const Spec& spec,
                                         const std::function<void(const ShardPlan&)>& moved);

}  // namespace shardctl::launcher
