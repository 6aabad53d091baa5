// `shardctl down`: through the supervisor when one answers, else from the pid files.
#include <iostream>
#include <thread>

#include "launcher/cli/commands.h"
#include "launcher/os/files.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

constexpr auto kSupervisorStopTimeout = std::chrono::seconds(60);

// Waits for the supervisor to exit (it does right after replying to "down"). It releases its
// lock a moment before the process ends, so the process itself is waited for too: when `down`
// returns, nothing of the deployment runs.
bool WaitForSupervisorExit(const DeploymentDir& dir, const std::optional<ProcessId>& process) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (SupervisorRunning(dir) || (process && IsRunning(*process))) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Stops whatever the pid files still name (a dead supervisor's shards, or a stuck one's).
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

int RunDown(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  DeploymentDir dir = DirOf(*spec);
  int stopped = 0;
  std::string how = "nothing was running";
  // A live supervisor is asked first, even if deployment.json is gone: it owns the shards.
  if (SupervisorRunning(dir)) {
    auto supervisor = ReadProcessId(dir.SupervisorPidFile());
    auto reply = AskSupervisor(dir, {{"cmd", "down"}}, kSupervisorStopTimeout);
    if (reply.ok() && reply->value("ok", false)) {
      stopped = reply->value("stopped", 0);
      how = "stopped by the supervisor";
    }
    if (!WaitForSupervisorExit(dir, supervisor) && supervisor) {
      StopProcesses({*supervisor}, std::chrono::seconds(5));
    }
  }
  if (std::filesystem::exists(dir.DeploymentFile())) {
    auto deployment = ReadDeployment(dir);
    if (deployment.ok()) {
      int leftover = StopFromPidFiles(dir, *deployment);
      if (leftover > 0) {
        stopped += leftover;
        how = "stopped from the pid files (no supervisor answered)";
      }
    }
  }
  bool purged = false;
  if (invocation.purge && std::filesystem::exists(dir.root())) {
    std::error_code error;
    std::filesystem::remove_all(dir.root(), error);
    if (error) {
      PrintError(dir.root().string() + ": cannot delete (" + error.message() + ")");
      return kExitRuntime;
    }
    purged = true;
  }
  if (invocation.json) {
    std::cout << json{{"name", spec->name}, {"stopped", stopped}, {"purged", purged}}.dump(2)
              << "\n";
  } else {
    std::cout << "deployment \"" << spec->name
              << "\": " << (stopped ? std::to_string(stopped) + " shard(s) " + how : how)
              << (purged ? "; state and data deleted" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
