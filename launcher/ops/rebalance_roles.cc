#include "launcher/ops/rebalance_roles.h"

#include <chrono>

#include "launcher/cluster/failover.h"
#include "launcher/cluster/formation.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {
namespace {

constexpr auto kSettleTimeout = std::chrono::seconds(30);

// Waits, up to kSettleTimeout, until every node answers and agrees on who serves which slot.
// Right after a failover the cluster has not: a primary killed and restarted from its nodes.conf
// says role:master and claims its old slots until the bus tells it otherwise, so it would read as
// nothing to give back, and a status right after would see two primaries for one range. Best
// effort: a shard that stays down (crash looping, say) does not keep the others from their roles.
void WaitUntilSettled(const Access& access, const Plan& plan) {
  (void)WaitUntilHealthy(access, RunningNodesOf(plan),
                         std::chrono::steady_clock::now() + kSettleTimeout,
                         [] { return common::Ok(); });
}

}  // namespace

Outcome<std::vector<int>> RebalanceRoles(const Spec& spec,
                                         const std::function<void(const ShardPlan&)>& moved) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  const Plan& plan = target->deployment->plan;
  WaitUntilSettled(target->access, plan);
  auto restored = RestorePlannedPrimaries(target->access, plan, moved);
  if (!restored.ok()) return restored.error();
  if (!restored->empty()) WaitUntilSettled(target->access, plan);
  return std::move(restored).value();
}

}  // namespace shardctl::launcher
