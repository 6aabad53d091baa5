#include "launcher/ops/rebalance_roles.h"

#include "launcher/cluster/failover.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {

Outcome<std::vector<int>> RebalanceRoles(const Spec& spec,
                                         const std::function<void(const ShardPlan&)>& moved) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  auto restored = RestorePlannedPrimaries(target->access, target->deployment->plan, moved);
  if (!restored.ok()) return restored.error();
  return std::move(restored).value();
}

}  // namespace shardctl::launcher
