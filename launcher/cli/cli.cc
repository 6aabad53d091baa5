#include "launcher/cli/cli.h"

#include <signal.h>

#include <algorithm>
#include <iostream>

#include "common/cpu_list.h"
#include "common/size.h"
#include "common/text.h"
#include "launcher/bench/commands.h"
#include "launcher/cli/commands.h"
#include "launcher/cli/completion.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/host_limits.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/topology.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {

namespace {

// Reads the record for LoadTarget: nullopt when missing or unreadable and `needs` allow it to be.
std::variant<std::optional<Deployment>, int> ReadTargetDeployment(const Spec& spec,
                                                                  const DeploymentDir& dir,
                                                                  TargetNeeds::IfMissing missing,
                                                                  bool access) {
  using IfMissing = TargetNeeds::IfMissing;
  const std::string where =
      "no deployment \"" + spec.name + "\" in " + dir.root().parent_path().string();
  if (missing == IfMissing::kUnknown && !std::filesystem::exists(dir.DeploymentFile())) {
    PrintError(where + " (start one with shardctl up, or pass --name / --state-dir)");
    return kStatusUnknown;
  }
  auto deployment = ReadDeployment(dir);
  if (deployment.ok()) {
    // What every connection of this command uses.
    if (auto used = access ? UseDeploymentAccess(*deployment) : common::Ok(); !used.ok()) {
      PrintError(used.error().message());
      return kExitRuntime;
    }
    return std::optional<Deployment>(std::move(deployment).value());
  }
  switch (missing) {
    case IfMissing::kCarryOn:
      return std::optional<Deployment>();
    case IfMissing::kUnknown:
      PrintError(deployment.error().message());
      return kStatusUnknown;
    case IfMissing::kFail:
      break;
  }
  PrintError(where + " (check --name and --state-dir)");
  return kExitRuntime;
}

}  // namespace

common::Result<HostView> ReadHost(const Spec& spec, const std::optional<std::string>& sysfs_root) {
  auto topology = ReadTopology(sysfs_root.value_or("/"));
  if (!topology.ok()) return topology.error();
  HostView host{.topology = std::move(topology).value(), .spec = spec, .notes = {}};
  // A --sysfs-root fixture stands for another host: this process' limits and NICs are not its.
  if (!sysfs_root) {
    auto limits = ReadHostLimits("/");
    if (!limits.ok()) return limits.error();
    if (auto applied = ApplyHostLimits(host.topology, *limits); !applied.ok()) {
      return applied.error();
    }
    for (const auto& limit : host.topology.limits) {
      host.notes.push_back(limit.starts_with(" ") ? limit : "limited to " + limit);
    }
  }
  if (spec.reserve_cpus_auto) {
    NicInterrupts nic;
    if (!sysfs_root) {
      auto read = ReadNicInterrupts("/");
      if (!read.ok()) return read.error();
      nic = std::move(read).value();
    }
    std::vector<int> usable;
    for (const auto& cpu : host.topology.cpus) {
      if (!spec.cpus || std::count(spec.cpus->begin(), spec.cpus->end(), cpu.id)) {
        usable.push_back(cpu.id);
      }
    }
    std::string why;
    host.spec.reserve_cpus = AutoReservedCpus(nic, usable, why);
    host.notes.push_back(why);
  }
  return host;
}

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

std::string StateDirHint(const Spec& spec) {
  std::string hint = " --name " + common::ShellQuote(spec.name);
  if (spec.state_dir) hint += " --state-dir " + common::ShellQuote(spec.state_dir->string());
  return hint;
}

std::variant<Target, int> LoadTarget(const Invocation& invocation, TargetNeeds needs) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  DeploymentDir dir = DirOf(*spec);
  auto deployment = ReadTargetDeployment(*spec, dir, needs.if_missing, needs.access);
  if (auto* code = std::get_if<int>(&deployment)) return *code;
  if (needs.supervisor && !SupervisorRunning(dir)) {
    PrintError("no supervisor runs deployment \"" + spec->name + "\" (start one with shardctl up" +
               StateDirHint(*spec) + "; it adopts the running shards as recorded)");
    return kExitRuntime;
  }
  return Target{.spec = std::move(spec).value(),
                .dir = dir,
                .deployment = std::get<std::optional<Deployment>>(std::move(deployment))};
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
  auto host = ReadHost(*spec, invocation.sysfs_root);
  if (!host.ok()) {
    PrintError(host.error().message());
    return invocation.sysfs_root ? kExitUsage : kExitRuntime;
  }
  const Topology* topology = &host->topology;
  auto plan = MakePlan(*topology, host->spec);
  if (!plan.ok()) {
    PrintError(plan.error().message());
    return kExitUsage;
  }
  PrintPlanWarnings(*plan);
  if (invocation.json) {
    nlohmann::json out = PlanToJson(*plan);
    out["host_notes"] = host->notes;
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& note : host->notes) std::cout << note << "\n";
  std::cout << "plan \"" << plan->name << "\": " << plan->shards.size() << " " << plan->engine
            << " shards on " << plan->usable_cpus << " CPU(s) (" << plan->usable_cores
            << " physical cores, " << topology->nodes.size() << " NUMA node(s)), "
            << common::FormatSize(plan->shards.front().maxmemory) << " maxmemory each\n"
            << PlanTable(*plan);
  return kExitOk;
}

int RunCli(int argc, char** argv, std::string_view git_revision) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() > 1 && args[0] == "bench" && args[1] == "compare") {
    return RunBenchCompare({args.begin() + 1, args.end()});
  }
  if (!args.empty() && args[0] == "bench") return RunBench({args.begin() + 1, args.end()});
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
  PrintError("unknown command " + command);
  return kExitUsage;
}

}  // namespace shardctl::launcher
