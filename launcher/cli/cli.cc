#include "launcher/cli/cli.h"

#include <signal.h>

#include <algorithm>
#include <iostream>

#include "common/cpu_list.h"
#include "common/size.h"
#include "common/text.h"
#include "launcher/cli/commands.h"
#include "launcher/cli/completion.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/topology.h"
#include "launcher/ops/bench.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {

namespace {
std::atomic<bool> interrupt_requested{false};
void OnInterrupt(int) { interrupt_requested.store(true); }
}  // namespace

void CatchInterrupt() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

const std::atomic<bool>& InterruptRequested() { return interrupt_requested; }

std::variant<Target, int> LoadTarget(const Invocation& invocation, TargetNeeds needs) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto target = LoadTarget(*spec, needs);
  if (!target.ok()) return Fail(target.error());
  return std::move(target).value();
}

int ExitCodeOf(Fault fault) {
  switch (fault) {
    case Fault::kUsage:
      return kExitUsage;
    case Fault::kUnknown:
      return kStatusUnknown;
    case Fault::kInterrupted:
      return kExitInterrupted;
    case Fault::kRuntime:
      break;
  }
  return kExitRuntime;
}

int Fail(const Failure& failure) {
  PrintError(failure.message());
  return ExitCodeOf(failure.fault());
}

std::string PlanTable(const Plan& plan) {
  std::vector<std::vector<std::string>> rows = {
      {"SHARD", "PORT", "BUS", "CPUS", "NODE", "MAXMEMORY", "ROLE", "SLOTS"}};
  for (const auto& shard : plan.shards) {
    std::string slots;
    for (const auto& range : shard.slots) {
      slots += (slots.empty() ? "" : ",") + std::to_string(range.first) + "-" +
               std::to_string(range.last);
    }
    rows.push_back({std::to_string(shard.index), std::to_string(shard.port),
                    std::to_string(shard.bus_port), common::FormatCpuList(shard.cpus),
                    std::to_string(shard.numa_node), common::FormatSize(shard.maxmemory),
                    shard.primary ? "replica of " + std::to_string(*shard.primary)
                                  : std::string(RoleName(shard.role)),
                    slots});
  }
  return FormatTable(rows);
}

void PrintPlanWarnings(const Plan& plan) {
  for (const auto& warning : plan.warnings) PrintWarning(warning);
}

int RunPlan(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto planned = PlanOnHost(*spec, invocation.sysfs_root);
  if (!planned.ok()) return Fail(planned.error());
  const Plan* plan = &planned->plan;
  const Topology* topology = &planned->topology;
  PrintPlanWarnings(*plan);
  if (invocation.json) {
    nlohmann::json out = PlanToJson(*plan);
    out["host_notes"] = planned->host_notes;
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& note : planned->host_notes) std::cout << note << "\n";
  std::cout << "plan \"" << plan->name << "\": " << plan->shards.size() << " " << plan->engine
            << " shards on " << plan->usable_cpus << " CPU(s) (" << plan->usable_cores
            << " physical cores, " << topology->nodes.size() << " NUMA node(s)), "
            << common::FormatSize(plan->shards.front().maxmemory) << " maxmemory each\n"
            << PlanTable(*plan);
  return kExitOk;
}

int RunCli(int argc, char** argv, std::string_view git_revision) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "bench") return Bench({args.begin() + 1, args.end()});
  auto invocation = ParseArgs(args);
  if (!invocation.ok()) {
    PrintError(invocation.error().message());
    return kExitUsage;
  }
  const std::string version_line =
      std::string("shardctl ") + SHARDCTL_VERSION + " (git " + std::string(git_revision) + ")";
  if (invocation->help_topic) {
    std::cout << HelpText(*invocation->help_topic);
    return kExitOk;
  }
  if (invocation->man_page) {
    std::cout << ManPage(version_line);
    return kExitOk;
  }
  if (invocation->complete) return RunComplete(*invocation->complete);
  const std::string& command = invocation->command;
  if (command == "version") {
    std::cout << version_line << "\n";
    return kExitOk;
  }
  if (command == "plan") return RunPlan(*invocation);
  if (command == "up") return RunUp(*invocation);
  if (command == "supervise") return RunSupervise(*invocation);
  if (command == "status") return RunStatus(*invocation);
  if (command == "down") return RunDown(*invocation);
  if (command == "restart") return RunRestart(*invocation);
  if (command == "logs") return RunLogs(*invocation);
  if (command == "rebalance-roles") return RunRebalanceRoles(*invocation);
  if (command == "save") return RunSave(*invocation);
  if (command == "rebalance") return RunRebalance(*invocation);
  if (command == "move-slots") return RunMoveSlots(*invocation);
  if (command == "scale") return RunScale(*invocation);
  if (command == "top") return RunTop(*invocation);
  if (command == "reload-tls") return RunReloadTls(*invocation);
  if (command == "backup") return RunBackup(*invocation);
  if (command == "restore") return RunRestore(*invocation);
  if (command == "import") return RunImport(*invocation);
  PrintError("unknown command " + command);
  return kExitUsage;
}

}  // namespace shardctl::launcher
