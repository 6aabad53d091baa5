// `shardctl down`: stops the deployment (ops/down.h: through the supervisor when one answers,
// else from the pid files) and, with --purge, deletes its state and data. Idempotent: `down` of a
// deployment that is already down, or was never there, succeeds and says nothing was running.
#include "launcher/ops/down.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/ops/leave.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {
namespace {

// "3 shard(s) stopped by the supervisor", "nothing was running", ...
std::string Describe(const StopReport& report) {
  std::string how = "nothing was running";
  switch (report.by) {
    case StopReport::By::kSupervisor:
      how = "stopped by the supervisor";
      break;
    case StopReport::By::kPidFiles:
      how = report.supervisor_unresponsive
                ? "stopped from the pid files (the supervisor did not answer: stopped or hung; it "
                  "was killed)"
                : "stopped from the pid files (no supervisor answered)";
      break;
    case StopReport::By::kNothing:
      break;
  }
  return report.stopped ? std::to_string(report.stopped) + " shard(s) " + how : how;
}

// down --leave, before the stop: everything this host serves goes to the other hosts. Returns
// nullopt after printing the error (nothing was stopped); `usage` says whether it was the
// request's fault.
std::optional<LeaveResult> HandOver(const Deployment& deployment, bool as_json, bool& usage) {
  ProgressDisplay progress(ProgressAllowed(as_json));
  auto left = HandOverToCluster(
      deployment.plan,
      {.on_step = [&progress](const std::string& step) { progress.Show(step); },
       .on_progress =
           [&progress](const MoveProgress& moved) {
             progress.Show("moving slots to other hosts: " + std::to_string(moved.slots_moved) +
                           "/" + std::to_string(moved.slots_total) + ", " +
                           std::to_string(moved.keys_moved) + " keys");
           }});
  progress.Clear();
  if (!left.ok()) {
    std::string message = left.error().message();
    usage = message.rfind("usage: ", 0) == 0;
    if (usage) message.erase(0, 7);
    PrintError("down --leave: " + message + "; nothing was stopped");
    return std::nullopt;
  }
  return std::move(left).value();
}

int MovedSlots(const LeaveResult& left) {
  int slots = 0;
  for (const auto& move : left.reshard.moves) slots += move.slots;
  return slots;
}

}  // namespace

int RunDown(const Invocation& invocation) {
  auto loaded =
      LoadTarget(invocation, {.if_missing = TargetNeeds::IfMissing::kCarryOn, .supervisor = false});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  std::optional<LeaveResult> left;
  if (invocation.leave && deployment) {
    bool usage = false;
    left = HandOver(*deployment, invocation.json, usage);
    if (!left) return usage ? kExitUsage : kExitRuntime;
  }
  StopReport report = StopDeployment(dir, deployment);
  if (left) {
    if (auto forgot = ForgetLeftNodes(*left); !forgot.ok()) {
      PrintWarning("the other hosts' nodes could not all be told to forget this host's (" +
                   forgot.error().message() +
                   "); they show them as failed until CLUSTER FORGET is run there");
    }
  }
  bool purged = false;
  // A host that left has no cluster to come back to: its shards' state is deleted with it.
  if (invocation.purge || left) {
    auto deleted = PurgeDeployment(dir);
    if (!deleted.ok()) {
      PrintError(deleted.error().message());
      return kExitRuntime;
    }
    purged = *deleted;
  }
  if (invocation.json) {
    nlohmann::json out = {{"name", spec.name}, {"stopped", report.stopped}, {"purged", purged}};
    if (left) {
      out["left"] = true;
      out["failed_over"] = left->failed_over;
      out["moved_slots"] = MovedSlots(*left);
      out["replicas_rehomed"] = left->replicas_rehomed;
    }
    std::cout << out.dump(2) << "\n";
  } else {
    if (left) {
      std::cout << "left the cluster: " << left->failed_over.size()
                << " primary(ies) handed over to replicas on other hosts, " << MovedSlots(*left)
                << " slot(s) moved to other hosts' primaries, " << left->replicas_rehomed
                << " replica(s) re-homed\n";
    }
    std::cout << "deployment \"" << spec.name << "\": " << Describe(report)
              << (purged ? "; state and data deleted" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
