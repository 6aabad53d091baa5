// The subcommands behind RunCli, one file each; shared helpers here. (`bench` has its own entry
// points in bench/commands.h.)
#pragma once

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "launcher/cli/args.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/topology.h"
#include "launcher/ops/status.h"
#include "launcher/state/deployment_store.h"

namespace shardctl::launcher {

int RunPlan(const Invocation& invocation);
int RunUp(const Invocation& invocation);
int RunSupervise(const Invocation& invocation);
int RunStatus(const Invocation& invocation);
// The status exit code of a verdict: 0 ok, 1 degraded, 2 down.
int StatusExitCode(Verdict verdict);
// `status --cluster` of a loaded deployment (status_cluster.cc).
int RunStatusCluster(const Invocation& invocation, const Deployment& deployment);
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
// What commands acting on an existing deployment start from.
struct Target {
  Spec spec;
  DeploymentDir dir;
  std::optional<Deployment> deployment;  // always set unless the command carries on without one
};

// What a command needs of its deployment.
struct TargetNeeds {
  enum class IfMissing {
    kFail,     // "no deployment …" (check --name and --state-dir), exit 1
    kUnknown,  // "no deployment …" (start one with shardctl up), exit 3: status' "unknown"
    kCarryOn,  // no record is fine: down stays idempotent, logs shows what a failed up left
  };
  IfMissing if_missing = IfMissing::kFail;
  bool supervisor = false;  // a live supervisor must run the deployment (exit 1 otherwise)
  // Set up the deployment's password and TLS for this process's connections; reload-tls checks
  // the files itself first, as a usage error.
  bool access = true;
};

// The host as plan, up and scale see it: sysfs (or the --sysfs-root fixture); on the real host
// narrowed to what this process may use (affinity, cgroup cpuset and memory limit), with
// --reserve-cpus auto resolved from the NICs' interrupts into spec.reserve_cpus. `notes` says what
// limited or reserved what. Errors: reading sysfs (with --sysfs-root: the user's fixture) or the
// limits.
struct HostView {
  Topology topology;
  Spec spec;
  std::vector<std::string> notes;
};
common::Result<HostView> ReadHost(const Spec& spec, const std::optional<std::string>& sysfs_root);

// " --name N [--state-dir D]": what a printed follow-up command needs to reach this deployment.
std::string StateDirHint(const Spec& spec);

// Resolves the spec (exit 2 when it is wrong) and reads the deployment record it names, as `needs`
// says. On failure prints the one-line error and returns the exit code instead.
std::variant<Target, int> LoadTarget(const Invocation& invocation, TargetNeeds needs);

// The first Ctrl-C (or SIGTERM) from now on only sets InterruptRequested(), so a long command
// can stop at a safe point; the handler resets itself, so a second one stops at once.
void CatchInterrupt();
const std::atomic<bool>& InterruptRequested();

// Human table of a plan's shards.
std::string PlanTable(const Plan& plan);

// Prints a plan's warnings to stderr.
void PrintPlanWarnings(const Plan& plan);

}  // namespace shardctl::launcher
