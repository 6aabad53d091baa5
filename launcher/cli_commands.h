// The subcommands behind RunCli, one file each; shared helpers here.
#pragma once

#include <nlohmann/json.hpp>
#include <variant>

#include "launcher/bench_client.h"
#include "launcher/cli_args.h"
#include "launcher/plan.h"
#include "launcher/state.h"

namespace shardctl::launcher {

int RunPlan(const Invocation& invocation);
int RunUp(const Invocation& invocation);
int RunSupervise(const Invocation& invocation);
int RunStatus(const Invocation& invocation);
int RunDown(const Invocation& invocation);
int RunRestart(const Invocation& invocation);
int RunLogs(const Invocation& invocation);
int RunRebalanceRoles(const Invocation& invocation);
int RunSave(const Invocation& invocation);
// `bench ...`: `args` are the words after "bench"; the load generator parses its own flags.
int RunBench(const std::vector<std::string>& args);
// `bench compare ...`: `args` start with "compare".
int RunBenchCompare(const std::vector<std::string>& args);

// Writes every key the workload's SETs will use once, unmeasured, so GETs hit (a no-op phase
// list when the workload does not populate). `slots` set: cluster mode. Errors name the step.
common::Status PopulateKeys(const BenchOptions& options, const SlotTable* slots,
                            const std::atomic<bool>* stop, bool terminal);

// Runs the workload's measured phases, as `bench run` does; `on_second` as in RunLoad.
common::Result<LoadResult> MeasureLoad(const BenchOptions& options, const SlotTable* slots,
                                       const std::atomic<bool>* stop,
                                       const std::function<void(const LiveSecond&)>& on_second);

// The deployment directory the spec names (state dir + name).
DeploymentDir DirOf(const Spec& spec);

// What commands acting on an existing deployment start from.
struct Target {
  Spec spec;
  DeploymentDir dir;
  Deployment deployment;
};

// Resolves the spec and reads the deployment it names; with `need_supervisor`, also requires a
// live supervisor. On failure prints the one-line error and returns the exit code instead.
std::variant<Target, int> LoadTarget(const Invocation& invocation, bool need_supervisor);

// Human table of a plan's shards.
std::string PlanTable(const Plan& plan);

// Prints a plan's warnings to stderr.
void PrintPlanWarnings(const Plan& plan);

}  // namespace shardctl::launcher
