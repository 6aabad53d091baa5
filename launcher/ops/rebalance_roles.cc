#include "launcher/ops/rebalance_roles.h"

#include <chrono>

#include "launcher/cluster/failover.h"
#include "launcher/cluster/formation.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {
namespace {

constexpr auto kSettleTimeout = std::chrono::seconds(30);

// Every node answering and agreeing on who serves which slot. Right after a failover the cluster
// has not: a primary killed and restarted from its nodes.conf says role:master and claims its
// old slots until the bus tells it otherwise, so it would read as nothing to give back, and a
// status right after would see two primaries for one range.
common::Status WaitUntilSettled(const Access& access, const Plan& plan, const std::string& when) {
  auto settled = WaitUntilHealthy(access, RunningNodesOf(plan),
                                  std::chrono::steady_clock::now() + kSettleTimeout,
                                  [] { return common::Ok(); });
  if (!settled.ok()) return settled.error().Context(when);
  return common::Ok();
}

}  // namespace

Outcome<std::vector<int>> RebalanceRoles(const Spec& spec,
                                         const std::function<void(const ShardPlan&)>& moved) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  const Plan& plan = target->deployment->plan;
  if (auto settled = WaitUntilSettled(target->access, plan, "before giving the roles back");
      !settled.ok()) {
    return settled.error();
  }
  auto restored = RestorePlannedPrimaries(target->access, plan, moved);
  if (!restored.ok()) return restored.error();
  if (!restored->empty()) {
    if (auto settled = WaitUntilSettled(target->access, plan, "after giving the roles back");
        !settled.ok()) {
      return settled.error();
    }
  }
  return std::move(restored).value();
}

}  // namespace shardctl::launcher
