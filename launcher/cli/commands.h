// The subcommands behind RunCli, one file each; shared helpers here. (`bench` has its own entry
// points in bench/commands.h.)
#pragma once

#include <nlohmann/json.hpp>
#include <variant>

#include "launcher/cli/args.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/state/deployment_store.h"

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
