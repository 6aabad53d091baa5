// `shardctl up` and `shardctl supervise`: the arguments, one call to ops/up.h (ops/supervise.h),
// what the user sees and the exit code.
#include "launcher/ops/up.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/ops/supervise.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

std::string FinishedMovesNote(size_t slots) {
  return slots == 0 ? std::string()
                    : "; finished the move of " + std::to_string(slots) +
                          " slot(s) an interrupted scale or rebalance left open";
}

std::string ShareNote(const json& result) {
  const int slots = result.value("share_slots", 0);
  if (slots == 0) return "";
  return "; took " + std::to_string(slots) + " slots (" +
         std::to_string(result.value("share_keys", uint64_t{0})) + " keys) from the cluster";
}

// True when `up` names only the deployment (--name, --state-dir, no --config, no spec flag): it
// then resumes or adopts the deployment as recorded, whatever shape `scale` gave it.
bool NamesOnlyTheDeployment(const Invocation& invocation) {
  if (invocation.config_file) return false;
  return std::all_of(invocation.settings.begin(), invocation.settings.end(),
                     [](const Setting& s) { return s.key == "name" || s.key == "state-dir"; });
}

void PrintDryRun(const DeploymentDir& dir, const Deployment& deployment) {
  std::cout << "dry run: would start " << deployment.plan.shards.size() << " "
            << deployment.engine.Name() << " " << deployment.engine.version << " shards ("
            << deployment.engine.path.string() << ") with state in " << dir.root().string() << "\n"
            << PlanTable(deployment.plan);
}

void PrintStarted(const Deployment& deployment, const Spec& spec, const json& ready,
                  std::chrono::milliseconds elapsed, bool as_json) {
  auto up_ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  const Plan& plan = deployment.plan;
  if (as_json) {
    json out = {{"name", plan.name},
                {"engine", deployment.engine.Name()},
                {"engine_version", deployment.engine.version},
                {"engine_path", deployment.engine.path.string()},
                {"shards", plan.shards.size()},
                {"first_port", plan.shards.front().port},
                {"already_running", false},
                {"up_ms", up_ms}};
    for (const char* key :
         {"spawn_ms", "ping_ms", "formation_ms", "total_ms", "supervisor_pid", "adopted",
          "restarted", "resumed", "cluster_state", "proxy_port", "finished_open_slots", "joined",
          "joined_nodes", "replica_moves", "share_slots", "share_keys"}) {
      if (ready.contains(key)) out[key] = ready[key];
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  auto seconds = [](const json& ms) {
    return std::to_string(ms.get<double>() / 1000.0).substr(0, 4);
  };
  if (ready.value("adopted", 0) > 0) {
    std::cout << "adopted " << ready.value("adopted", 0) << " running shards of \"" << plan.name
              << "\" (started " << ready.value("restarted", 0)
              << " missing ones) with a new supervisor, pid " << ready.value("supervisor_pid", 0)
              << "; cluster " << ready.value("cluster_state", std::string("?"))
              << FinishedMovesNote(ready.value("finished_open_slots", size_t{0})) << "\n";
  } else {
    // Resumed: the shards came back with their data and the cluster their nodes.conf recorded.
    const bool resumed = ready.value("resumed", false);
    std::cout << (resumed ? "resumed \"" : "started \"") << plan.name
              << "\": " << plan.shards.size() << " " << deployment.engine.Name() << " "
              << deployment.engine.version << " shards" << (resumed ? " with their data" : "")
              << ", cluster healthy in " << seconds(ready.value("total_ms", 0)) << " s (spawn "
              << seconds(ready.value("spawn_ms", 0)) << " s, all answering PING "
              << seconds(ready.value("ping_ms", 0)) << " s, formation "
              << seconds(ready.value("formation_ms", 0)) << " s; whole command "
              << seconds(json(up_ms)) << " s)"
              << FinishedMovesNote(ready.value("finished_open_slots", size_t{0}))
              << (ready.value("joined", false)
                      ? "; joined " + plan.join + " (" +
                            std::to_string(ready.value("joined_nodes", 0)) + " nodes there, " +
                            std::to_string(ready.value("replica_moves", 0)) + " replicas placed)"
                      : "")
              << ShareNote(ready) << "\n";
  }
  // --askpass: redis-cli reads the password from the terminal, not from its command line.
  std::string login = deployment.auth.password_required ? " --askpass" : "";
  if (deployment.tls.enabled()) login += " --tls --cacert " + deployment.tls.ca;
  std::cout << "  connect: redis-cli -c -h " << plan.bind << " -p " << plan.shards.front().port
            << login << "\n";
  if (deployment.tls.also_plain()) {
    std::cout << "  plain:   redis-cli -c -h " << plan.bind << " -p "
              << deployment.tls.PlainPort(plan.shards.front().index)
              << (deployment.auth.password_required ? " --askpass" : "")
              << "   (--tls-also-plain: plain RESP beside TLS)\n";
  }
  if (deployment.proxy.enabled()) {
    std::cout << "  proxy:   redis-cli -h " << plan.bind << " -p " << deployment.proxy.port << login
              << "   (shardproxy: any Redis client, no cluster support needed)\n";
  }
  std::cout << "  status:  shardctl status" << StateDirHint(spec) << "\n"
            << "  stop:    shardctl down" << StateDirHint(spec) << "\n";
}

void PrintAlreadyRunning(const UpReport& report, const Spec& spec, bool as_json) {
  json result = {{"name", spec.name}, {"already_running", true}, {"shards", report.running_shards}};
  result.update(report.ready);
  if (as_json) {
    std::cout << result.dump(2) << "\n";
    return;
  }
  std::cout << "deployment \"" << spec.name << "\" is already running with this spec ("
            << report.running_shards << " shards); nothing to do"
            << FinishedMovesNote(result.value("finished_open_slots", size_t{0}))
            << ShareNote(result) << "\n";
}

}  // namespace

int RunUp(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  const bool as_json = invocation.json;
  ProgressDisplay progress(ProgressAllowed(as_json));
  UpRequest request{
      .spec = *spec,
      .as_recorded = NamesOnlyTheDeployment(invocation),
      .dry_run = invocation.dry_run,
      .foreground = invocation.foreground,
      .on_progress = [&progress](const std::string& line) { progress.Show(line); },
      .on_tick = [&progress] { progress.Tick(); },
      .on_notice = [](const std::string& notice) { std::cerr << "shardctl: " << notice << "\n"; },
      .on_warning =
          [&progress](const std::string& warning) {
            progress.Clear();
            PrintWarning(warning);
          },
      .on_ready =
          [&](const UpReport& report) {
            progress.Clear();
            PrintStarted(report.deployment, *spec, report.ready, report.elapsed, as_json);
            std::cout << "running in the foreground; Ctrl-C or SIGTERM stops every shard\n"
                      << std::flush;
          },
  };
  auto report = Up(request);
  progress.Clear();
  if (!report.ok()) return Fail(report.error());
  switch (report->kind) {
    case UpReport::Kind::kAlreadyRunning:
      PrintAlreadyRunning(*report, *spec, as_json);
      return kExitOk;
    case UpReport::Kind::kDryRun:
      for (const auto& note : report->host_notes) std::cout << note << "\n";
      PrintDryRun(report->dir, report->deployment);
      return kExitOk;
    case UpReport::Kind::kStarted:
      break;
  }
  if (invocation.foreground) return report->foreground_exit;
  PrintStarted(report->deployment, *spec, report->ready, report->elapsed, as_json);
  return kExitOk;
}

int RunSupervise(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  int ready_fd = invocation.ready_fd;
  auto supervised = Supervise(*spec, [&ready_fd](const json& event) {
    std::string kind = event.value("event", "");
    if (ready_fd < 0) {
      std::cerr << "shardctl: " << event.dump() << "\n";
      return;
    }
    std::string line = event.dump() + "\n";
    if (write(ready_fd, line.data(), line.size()) < 0) {
      // `up` went away; the supervisor carries on and logs to its file.
    }
    if (kind == "ready" || kind == "failed") {
      close(ready_fd);
      ready_fd = -1;
    }
  });
  if (!supervised.ok()) return Fail(supervised.error());
  return *supervised;
}

}  // namespace shardctl::launcher
