// `shardctl down`: stops the deployment (ops/down.h: through the supervisor when one answers,
// else from the pid files) and, with --purge, deletes its state and data. Idempotent: `down` of a
// deployment that is already down succeeds and says nothing was running; of one that was never
// there (no record in the state dir), succeeds and says there is none.
#include "launcher/ops/down.h"

#include <filesystem>
#include <iostream>

#include "launcher/cli/commands.h"
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

}  // namespace

int RunDown(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  // Idempotent either way, but a mistyped --name or --state-dir should not read as a stop.
  const DeploymentDir dir = DirOf(*spec);
  const auto root = dir.root();
  const bool found = std::filesystem::exists(dir.DeploymentFile());
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  // Ctrl-C while the primaries are saved lifts their pauses (a second one kills, as before). Not
  // with --leave: its hand-over stops at a second Ctrl-C only.
  if (!invocation.leave) CatchInterrupt();
  auto down = Down({.spec = *spec,
                    .leave = invocation.leave,
                    .purge = invocation.purge,
                    .no_save = invocation.no_save,
                    .on_progress = [&progress](const std::string& line) { progress.Show(line); },
                    .on_warning =
                        [&progress](const std::string& warning) {
                          progress.Clear();
                          PrintWarning(warning);
                        },
                    .interrupted = invocation.leave ? nullptr : &InterruptRequested()});
  progress.Clear();
  if (!down.ok()) return Fail(down.error());
  const auto& [report, purged, left] = *down;
  if (invocation.json) {
    nlohmann::json out = {
        {"name", spec->name}, {"found", found}, {"stopped", report.stopped}, {"purged", purged}};
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
    if (!found && report.by == StopReport::By::kNothing) {
      std::cout << "deployment \"" << spec->name << "\": there is none in " << root.string()
                << ", nothing to stop (check --name and --state-dir; shardctl status lists "
                   "what runs)\n";
      return kExitOk;
    }
    std::cout << "deployment \"" << spec->name << "\": " << Describe(report)
              << (purged ? "; state and data deleted" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
