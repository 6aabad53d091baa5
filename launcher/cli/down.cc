// `shardctl down`: stops the deployment (ops/stop.h: through the supervisor when one answers,
// else from the pid files) and, with --purge, deletes its state and data. Idempotent: `down` of a
// deployment that is already down, or was never there, succeeds and says nothing was running.
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/ops/stop.h"
#include "launcher/term/output.h"

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
      how = "stopped from the pid files (no supervisor answered)";
      break;
    case StopReport::By::kNothing:
      break;
  }
  return report.stopped ? std::to_string(report.stopped) + " shard(s) " + how : how;
}

}  // namespace

int RunDown(const Invocation& invocation) {
  auto loaded =
      LoadTarget(invocation, {.if_missing = TargetNeeds::IfMissing::kCarryOn, .supervisor = false});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  StopReport report = StopDeployment(dir, deployment);
  bool purged = false;
  if (invocation.purge) {
    auto deleted = PurgeDeployment(dir);
    if (!deleted.ok()) {
      PrintError(deleted.error().message());
      return kExitRuntime;
    }
    purged = *deleted;
  }
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec.name},
                                {"stopped", report.stopped},
                                {"purged", purged}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "deployment \"" << spec.name << "\": " << Describe(report)
              << (purged ? "; state and data deleted" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
