// The supervisor's side of `shardctl scale`: a new plan for the running deployment. The CLI has
// already emptied the removed shards and made every other node forget them (ops/scale.h); here
// they are stopped and their directories deleted, the added shards are started fresh (they join
// the cluster afterwards, from the CLI), and the plan is recorded in deployment.json.
#include <set>

#include "launcher/model/plan_json.h"
#include "launcher/os/process.h"
#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor_internal.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

constexpr auto kRemovedStopGrace = std::chrono::seconds(10);

// Why `next` cannot replace `running`, or "": the shards both have must be the same processes
// (slots aside: moves change them), and the deployment keeps its name and address.
std::string Incompatible(const Plan& running, const Plan& next) {
  if (next.name != running.name || next.bind != running.bind || next.engine != running.engine) {
    return "the new plan is for another deployment (name, bind or engine differ)";
  }
  for (const auto& shard : next.shards) {
    for (const auto& kept : running.shards) {
      if (kept.index != shard.index) continue;
      ShardPlan a = kept, b = shard;
      a.slots.clear(), b.slots.clear();
      if (a != b) return "shard " + std::to_string(shard.index) + " differs in the new plan";
    }
  }
  return "";
}

}  // namespace

json Supervisor::ReshapeReply(const json& request) {
  auto next = request.contains("plan") ? PlanFromJson(request["plan"])
                                       : common::Result<Plan>(common::Error("no \"plan\""));
  if (!next.ok()) return {{"ok", false}, {"error", "reshape: " + next.error().message()}};
  if (auto why = Incompatible(deployment_.plan, *next); !why.empty()) {
    return {{"ok", false}, {"error", "reshape: " + why}};
  }
  std::set<int> wanted, had;
  for (const auto& shard : next->shards) wanted.insert(shard.index);
  for (const auto& slot : slots_) had.insert(slot->index);

  // Removed shards: stop them (their exits are not crashes) and delete what they kept.
  std::vector<ProcessId> stopping;
  json removed = json::array();
  for (auto& slot : slots_) {
    if (wanted.count(slot->index)) continue;
    if (slot->watcher.running()) stopping.push_back(slot->watcher.process());
    slot->watcher.Forget();
    slot->watcher.CancelRestart();
    removed.push_back(slot->index);
  }
  if (!stopping.empty()) StopProcesses(stopping, kRemovedStopGrace);
  std::erase_if(slots_, [&](const auto& slot) {
    if (wanted.count(slot->index)) return false;
    std::error_code ignored;
    std::filesystem::remove_all(dir_.ShardDir(slot->index), ignored);
    std::filesystem::remove(dir_.ShardPidFile(slot->index), ignored);
    log_->info("shard {} removed", slot->index);
    return true;
  });

  deployment_.plan = std::move(next).value();
  // A removed shard's engine goes with it (added shards run the deployment's).
  std::erase_if(deployment_.shard_engines,
                [&](const auto& entry) { return !wanted.count(entry.first); });
  json added = json::array();
  for (const auto& shard : deployment_.plan.shards) {
    if (had.count(shard.index)) continue;
    slots_.push_back(std::make_unique<ShardSlot>(*this, &loop_, shard.index));
    auto process = SpawnShard(deployment_, dir_, shard, /*fresh=*/true);
    if (!process.ok()) {
      log_->error("shard {}: {}", shard.index, process.error().message());
      slots_.back()->watcher.StartFailed(process.error().message());
    } else {
      log_->info("shard {} added as pid {}", shard.index, process->pid);
      slots_.back()->watcher.Watch(*process, /*is_child=*/true, /*restarted=*/false);
    }
    added.push_back(shard.index);
  }
  std::sort(slots_.begin(), slots_.end(),
            [&](const auto& a, const auto& b) { return a->index < b->index; });
  RestartChecks();
  if (auto written = WriteDeployment(dir_, deployment_); !written.ok()) {
    return {{"ok", false}, {"error", written.error().message()}};
  }
  return {{"ok", true}, {"added", added}, {"removed", removed}};
}

}  // namespace shardctl::launcher
