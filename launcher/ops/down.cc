#include "launcher/ops/down.h"

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "launcher/os/files.h"
#include "launcher/os/process.h"
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
std::optional<int> StopThroughSupervisor(const DeploymentDir& dir, bool& unresponsive) {
  if (!SupervisorRunning(dir)) return std::nullopt;
  std::optional<int> stopped;
  auto supervisor = ReadProcessId(dir.SupervisorPidFile());
  const bool frozen = supervisor && IsStopped(supervisor->pid);
  if (frozen || !AskSupervisor(dir, {{"cmd", "ping"}}, kSupervisorPingTimeout).ok()) {
    unresponsive = true;
    if (supervisor) StopProcesses({*supervisor}, std::chrono::seconds(1));
    return std::nullopt;
  }
  auto reply = AskSupervisor(dir, {{"cmd", "down"}}, kSupervisorStopTimeout);
  if (reply.ok() && reply->value("ok", false)) stopped = reply->value("stopped", 0);
  if (!WaitForSupervisorExit(dir, supervisor) && supervisor) {
    StopProcesses({*supervisor}, std::chrono::seconds(5));
  }
  return stopped;
}

// Stops whatever the pid files still name (a dead supervisor's shards, or a stuck one's) and
// removes the pid files. Returns how many shards were running.
int StopFromPidFiles(const DeploymentDir& dir, const Deployment& deployment) {
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
  if (!live.empty()) ArmSaveOnShutdown(deployment);
  StopProcesses(live, std::chrono::seconds(10));
  return static_cast<int>(live.size());
}

}  // namespace

StopReport StopDeployment(const DeploymentDir& dir, const std::optional<Deployment>& recorded) {
  StopReport report;
  if (auto stopped = StopThroughSupervisor(dir, report.supervisor_unresponsive)) {
    report.stopped = *stopped;
    report.by = StopReport::By::kSupervisor;
  }
  if (recorded) {
    if (int leftover = StopFromPidFiles(dir, *recorded); leftover > 0) {
      report.stopped += leftover;
      report.by = StopReport::By::kPidFiles;
    }
  }
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

}  // namespace shardctl::launcher
