// The subcommands behind RunCli, one file each, each making its command's one call into ops/;
// shared helpers here. (`bench` hands its words to the load generator whole: ops/bench.h.)
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "launcher/cli/args.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/ops/host.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/status.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {

int RunPlan(const Invocation& invocation);
int RunUp(const Invocation& invocation);
int RunSupervise(const Invocation& invocation);
int RunStatus(const Invocation& invocation);
// The status exit code of a verdict: 0 ok, 1 degraded, 2 down.
int StatusExitCode(Verdict verdict);
// `status --cluster` of a loaded deployment (status_cluster.cc).
int RunStatusCluster(const Invocation& invocation, const Spec& spec);
int RunDown(const Invocation& invocation);
int RunRestart(const Invocation& invocation);
int RunLogs(const Invocation& invocation);
int RunRebalanceRoles(const Invocation& invocation);
int RunSave(const Invocation& invocation);
int RunRebalance(const Invocation& invocation);
int RunMoveSlots(const Invocation& invocation);
int RunScale(const Invocation& invocation);
int RunTop(const Invocation& invocation);
int RunReloadTls(const Invocation& invocation);
int RunBackup(const Invocation& invocation);
int RunRestore(const Invocation& invocation);
int RunImport(const Invocation& invocation);
// Resolves the spec (exit 2 when it is wrong) and reads the deployment record it names, as `needs`
// says. On failure prints the one-line error and returns the exit code instead.
std::variant<Target, int> LoadTarget(const Invocation& invocation, TargetNeeds needs);

// The first Ctrl-C (or SIGTERM) from now on only sets InterruptRequested(), so a long command
// can stop at a safe point; the handler resets itself, so a second one stops at once.
void CatchInterrupt();
const std::atomic<bool>& InterruptRequested();

// The exit code of a failed command (term/exit_codes.h).
int ExitCodeOf(Fault fault);
// Prints the failure's one line and returns its exit code.
int Fail(const Failure& failure);

// Human table of a plan's shards.
std::string PlanTable(const Plan& plan);

// Prints a plan's warnings to stderr.
void PrintPlanWarnings(const Plan& plan);

}  // namespace shardctl::launcher
