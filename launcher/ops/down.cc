#include "launcher/ops/down.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "launcher/ops/scratch_server.h"
#include "launcher/ops/stop_save.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/data_lock.h"
#include "launcher/state/import_progress.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

constexpr auto kSupervisorStopTimeout = std::chrono::seconds(60);
constexpr auto kSupervisorExitWait = std::chrono::seconds(15);
// A supervisor's loop answers a ping within milliseconds, or a few seconds while it hands a
// primary over; one silent this long is hung. One that is stopped (SIGSTOP) is not asked.
constexpr auto kSupervisorPingTimeout = std::chrono::seconds(10);

// Waits for the supervisor to exit (it does right after replying to "down"). It releases its
// lock a moment before the process ends, so the process itself is waited for too: when `down`
// returns, nothing of the deployment runs.
bool WaitForSupervisorExit(const DeploymentDir& dir, const std::optional<ProcessId>& process) {
  auto deadline = std::chrono::steady_clock::now() + kSupervisorExitWait;
  while (SupervisorRunning(dir) || (process && IsRunning(*process))) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Asks a live supervisor to stop everything; returns how many shards it stopped, or nullopt
// when none runs or it did not say. A supervisor that holds its lock but does not answer a ping
// (stopped, or hung) cannot stop anything: it is stopped by its pid at once (`unresponsive` set),
// and the pid files stop the shards.
std::optional<int> StopThroughSupervisor(const DeploymentDir& dir, bool& unresponsive,
                                         bool save_at_shutdown) {
  if (!SupervisorRunning(dir)) return std::nullopt;
  std::optional<int> stopped;
  auto supervisor = ReadProcessId(dir.SupervisorPidFile());
  const bool frozen = supervisor && IsStopped(supervisor->pid);
  if (frozen || !AskSupervisor(dir, {{"cmd", "ping"}}, kSupervisorPingTimeout).ok()) {
    unresponsive = true;
    if (supervisor) StopProcesses({*supervisor}, std::chrono::seconds(1));
    return std::nullopt;
  }
  auto reply =
      AskSupervisor(dir, {{"cmd", "down"}, {"save", save_at_shutdown}}, kSupervisorStopTimeout);
  if (reply.ok() && reply->value("ok", false)) stopped = reply->value("stopped", 0);
  if (!WaitForSupervisorExit(dir, supervisor) && supervisor) {
    StopProcesses({*supervisor}, std::chrono::seconds(5));
  }
  return stopped;
}

// Stops whatever the pid files still name (a dead supervisor's shards, or a stuck one's) and
// removes the pid files. Returns how many shards were running.
int StopFromPidFiles(const Access& access, const DeploymentDir& dir, const Deployment& deployment,
                     bool save_at_shutdown) {
  if (auto proxy = ReadProcessId(dir.ProxyPidFile()); proxy && IsRunning(*proxy)) {
    StopProcesses({*proxy}, std::chrono::seconds(5));
  }
  std::error_code removed;
  std::filesystem::remove(dir.ProxyPidFile(), removed);
  std::vector<ProcessId> live;
  for (const auto& shard : deployment.plan.shards) {
    auto process = ReadProcessId(dir.ShardPidFile(shard.index));
    if (process && IsRunning(*process)) live.push_back(*process);
    std::error_code ignored;
    std::filesystem::remove(dir.ShardPidFile(shard.index), ignored);
  }
  if (!live.empty() && save_at_shutdown) ArmSaveOnShutdown(access, deployment);
  StopProcesses(live, std::chrono::seconds(10));
  return static_cast<int>(live.size());
}

}  // namespace

StopReport StopDeployment(const Access& access, const DeploymentDir& dir,
                          const std::optional<Deployment>& recorded, bool save_at_shutdown) {
  StopReport report;
  if (auto stopped = StopThroughSupervisor(dir, report.supervisor_unresponsive, save_at_shutdown)) {
    report.stopped = *stopped;
    report.by = StopReport::By::kSupervisor;
  }
  if (recorded) {
    if (int leftover = StopFromPidFiles(access, dir, *recorded, save_at_shutdown); leftover > 0) {
      report.stopped += leftover;
      report.by = StopReport::By::kPidFiles;
    }
  }
  StopLeftScratchServers(dir);
  return report;
}

common::Result<bool> PurgeDeployment(const DeploymentDir& dir) {
  if (!std::filesystem::exists(dir.root())) return false;
  std::error_code error;
  std::filesystem::remove_all(dir.root(), error);
  if (error) {
    return common::Error(dir.root().string() + ": cannot delete (" + error.message() + ")");
  }
  return true;
}

int MovedSlots(const LeaveResult& left) {
  int slots = 0;
  for (const auto& move : left.reshard.moves) slots += move.slots;
  return slots;
}

namespace {

// down --leave, before the stop: everything this host serves goes to the other hosts.
Outcome<LeaveResult> HandOver(const Access& access, const Deployment& deployment,
                              const DownRequest& request) {
  const auto show = [&request](const std::string& line) {
    if (request.on_progress) request.on_progress(line);
  };
  auto left = HandOverToCluster(
      access, deployment.plan,
      {.on_step = show, .on_progress = [&show](const MoveProgress& moved) {
         show("moving slots to other hosts: " + std::to_string(moved.slots_moved) + "/" +
              std::to_string(moved.slots_total) + ", " + std::to_string(moved.keys_moved) +
              " keys");
       }});
  if (left.ok()) return std::move(left).value();
  const Failure failure = Classify(left.error());
  return Failure(failure.fault(), "down --leave: " + failure.message() + "; nothing was stopped");
}

// A command that moves slots, writes keys, restarts shards or cuts a backup, stopped under it by
// the stop, failed midway blaming a slow host or the connection, and down's own save met the
// shards it paused. So down holds the data and restart locks until the stop is over (a command
// started after the look would meet the same), and is refused while another command holds one.
// A live import that follows its source is the exception (the supervisor's short holds too): it
// stops with the shards (a warning says so) and resumes when run again.
Outcome<std::vector<DataLock>> HoldOffOtherCommands(const DeploymentDir& dir, const Spec& spec) {
  const std::string again =
      ", then run shardctl down" + StateDirHint(spec) + " again; nothing was stopped";
  // An up forming the cluster: its supervisor let the stop wait, and the up then said the
  // cluster was healthy, exit 0, of a deployment left stopped.
  if (FlockHeld(dir.UpLockFile())) {
    return Failure::Usage(
        "a shardctl up of this deployment is running (starting it, or finishing "
        "what an earlier run left): wait for it to end, or Ctrl-C it" +
        again);
  }
  std::vector<DataLock> held;
  for (const auto kind : {DataLock::Kind::kData, DataLock::Kind::kRestarts}) {
    auto lock = DataLock::Take(dir, "down", kind);
    if (lock.ok()) {
      held.push_back(std::move(lock).value());
      continue;
    }
    // Not held by anyone: no deployment directory (down stays idempotent), or one it cannot
    // write; nothing runs there to be guarded.
    if (!lock.error().message().starts_with("usage: ")) continue;
    const std::string holder = DataLock::HolderOf(dir, kind);
    const auto live = ReadLiveImport(dir);
    const bool following =
        live && live->phase == "following" && holder.find("import --live") != std::string::npos;
    if (following || holder.find("shardctl supervisor") != std::string::npos) continue;
    return Failure::Usage("another shardctl command is working on this deployment (" +
                          (holder.empty() ? std::string("its pid unknown") : holder) +
                          "): down would stop the shards under it; wait for it to end, or Ctrl-C "
                          "it (what it moved stays consistent)" +
                          again);
  }
  return held;
}

}  // namespace

Outcome<DownReport> Down(const DownRequest& request) {
  auto target = LoadTarget(request.spec, {.if_missing = TargetNeeds::IfMissing::kCarryOn});
  if (!target.ok()) return target.error();
  const auto& [spec, dir, deployment, access] = *target;
  DownReport report;
  auto held_off = HoldOffOtherCommands(dir, spec);
  if (!held_off.ok()) return held_off.error();
  if (request.leave && deployment) {
    auto left = HandOver(access, *deployment, request);
    if (!left.ok()) return left.error();
    report.left = std::move(left).value();
  }
  if (const auto live = ReadLiveImport(dir); live && request.on_warning &&
                                             live->phase != "stopped" && live->phase != "done" &&
                                             live->phase != "failed") {
    // Its writes stop with the shards and it fails; its marker stays for the run again.
    request.on_warning("the live import from " + live->source + " (pid " +
                       std::to_string(live->pid) +
                       ") stops with the shards, its cutover not reached: after up, run the same "
                       "import --live again");
  }
  // Held until the shards have stopped: each saved primary's writes wait from its snapshot on.
  std::unique_ptr<SavedForStop> saved;
  if (deployment && deployment->durability.persistence == Persistence::kRdb && !request.purge &&
      !report.left && !request.no_save) {
    auto taken =
        SavedForStop::Take(access, dir, *deployment, request.on_progress, request.interrupted);
    if (!taken.ok()) return taken.error();
    saved = std::move(taken).value();
  }
  report.stop = StopDeployment(access, dir, deployment, !request.no_save);
  saved.reset();
  if (report.left) {
    if (auto forgot = ForgetLeftNodes(access, *report.left); !forgot.ok()) {
      if (request.on_warning) {
        request.on_warning("the other hosts' nodes could not all be told to forget this host's (" +
                           forgot.error().message() +
                           "); they show them as failed until CLUSTER FORGET is run there");
      }
    }
  }
  // A host that left has no cluster to come back to: its shards' state is deleted with it.
  if (request.purge || report.left) {
    auto deleted = PurgeDeployment(dir);
    if (!deleted.ok()) return deleted.error();
    report.purged = *deleted;
  }
  return report;
}

}  // namespace shardctl::launcher
