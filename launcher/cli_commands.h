// The subcommands behind RunCli, one file each; shared helpers here.
#pragma once

#include <nlohmann/json.hpp>

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

// The deployment directory the spec names (state dir + name).
DeploymentDir DirOf(const Spec& spec);

// Human table of a plan's shards.
std::string PlanTable(const Plan& plan);

// Prints a plan's warnings to stderr.
void PrintPlanWarnings(const Plan& plan);

}  // namespace shardctl::launcher
