// `shardctl status`: what ops/status.h learns (every shard probed directly, so it works whether or
// not the supervisor is alive), as a table or JSON, with the monitoring-plugin exit code.
#include "launcher/ops/status.h"

#include <iostream>

#include "common/cpu_list.h"
#include "common/endpoint.h"
#include "common/size.h"
#include "common/slots.h"
#include "launcher/cli/commands.h"
#include "launcher/model/plan_json.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

std::string MetricsUrl(const std::string& bind, int port) {
  return "http://" + common::FormatEndpoint(bind, port) + "/metrics";
}

json ProxyJson(const Deployment& deployment, const ProxyStatus& proxy) {
  json out = {{"port", deployment.proxy.port},
              {"pid", proxy.process ? json(proxy.process->pid) : json(nullptr)},
              {"health", proxy.answers ? "ok" : "down"},
              {"read_from", deployment.proxy.read_from}};
  if (deployment.proxy.metrics_port != 0) {
    out["metrics_port"] = deployment.proxy.metrics_port;
    out["metrics_url"] = MetricsUrl(deployment.metrics.bind, deployment.proxy.metrics_port);
  }
  if (proxy.supervised.is_object()) {
    for (const char* key : {"state", "restarts", "last_exit", "adopted", "log_tail"}) {
      if (proxy.supervised.contains(key)) out[key] = proxy.supervised[key];
    }
  }
  return out;
}

json ShardJson(const Deployment& deployment, const ShardPlan& plan, const ShardStatus& status) {
  json shard = ShardToJson(plan);
  // Shards differ while a switch of engine is under way (restart SHARD --engine E).
  const Engine& engine = EngineOf(deployment, plan.index);
  shard["engine"] = engine.Name();
  shard["engine_version"] = engine.version;
  shard["pid"] = status.running ? json(status.process->pid) : json(nullptr);
  shard["node_id"] = status.node_id.empty() ? json(nullptr) : json(status.node_id);
  shard["health"] = status.health;
  shard["used_memory"] = status.used_memory;
  shard["keys"] = status.keys;
  if (status.reachable) {
    // Who owns what now: scale, rebalance, move-slots and failovers change the planned slots.
    json slots = json::array();
    for (const auto& range : status.slots) slots.push_back({range.first, range.last});
    shard["slots"] = slots;
    shard["role"] = status.role;
    shard["last_save_unix"] = status.last_save_unix;
    shard["last_save_status"] = status.last_save_status;
    // From the supervisor's /metrics poll; null without one (see the top-level "slots").
    if (status.role == "primary") {
      shard["load_share"] =
          status.supervised.is_object() && status.supervised.contains("load_share")
              ? status.supervised["load_share"]
              : json(nullptr);
    }
  }
  shard["pinned_cpus"] = status.pinned_cpus;
  shard["bound_numa_nodes"] = status.bound_nodes;
  if (!status.supervised.is_null()) {
    for (const char* key : {"restarts", "last_exit", "last_exit_unix_ms", "adopted", "log_tail"}) {
      if (status.supervised.contains(key)) shard[key] = status.supervised[key];
    }
  }
  return shard;
}

std::string ShardName(int index) {
  return index < 0 ? std::string("a node not in the plan") : "shard " + std::to_string(index);
}

json MovesJson(const std::vector<MoveInProgress>& moves) {
  json out = json::array();
  for (const auto& move : moves) {
    out.push_back(
        {{"slots", common::FormatSlotRanges({{move.first, move.last}})},
         {"first_slot", move.first},
         {"last_slot", move.last},
         {"source_shard", move.source_shard < 0 ? json(nullptr) : json(move.source_shard)},
         {"target_shard", move.target_shard < 0 ? json(nullptr) : json(move.target_shard)}});
  }
  return out;
}

// Open moves: normal while rebalance or scale runs; after a crash or Ctrl-C they stay until the
// next scale, rebalance or up finishes them.
void PrintMoves(const std::vector<MoveInProgress>& moves, const std::string& hint) {
  if (moves.empty()) return;
  std::cout << "slot moves in progress (an interrupted one is finished by shardctl rebalance"
            << hint << "):\n";
  for (const auto& move : moves) {
    std::cout << "  slots " << common::FormatSlotRanges({{move.first, move.last}}) << ": "
              << ShardName(move.source_shard) << " -> " << ShardName(move.target_shard) << "\n";
  }
}

json StatusJson(const Deployment& deployment, const DeploymentStatus& status) {
  json shards = json::array();
  for (size_t i = 0; i < status.shards.size(); ++i) {
    shards.push_back(ShardJson(deployment, deployment.plan.shards[i], status.shards[i]));
  }
  const bool supervised = status.supervised;
  json out = {
      {"name", deployment.plan.name},
      {"engine", deployment.engine.Name()},
      {"engine_version", deployment.engine.version},
      {"engine_path", deployment.engine.path.string()},
      {"engines_differ", !deployment.shard_engines.empty()},
      {"persistence", PersistenceName(deployment.durability.persistence)},
      {"fork_limit", deployment.durability.fork_limit},
      {"cluster_state", status.summary.cluster_state},
      {"supervisor",
       {{"running", supervised},
        {"answering", status.supervisor_answers},
        {"stopped", status.supervisor_stopped},
        {"pid", supervised && status.supervisor ? json(status.supervisor->pid) : json(nullptr)}}},
      {"shards", shards},
      {"moves_in_progress", MovesJson(status.moves)},
      {"slots", status.slots}};
  if (status.proxy) out["proxy"] = ProxyJson(deployment, *status.proxy);
  if (const auto& live = status.live_import) {
    out["import"] = {{"source", live->source},
                     {"phase", live->phase},
                     {"pid", live->pid},
                     {"keys", live->keys},
                     {"commands", live->commands},
                     {"co_located", live->co_located},
                     {"lag_bytes", live->lag_bytes},
                     {"lag_ms", live->lag_ms},
                     {"expiry_held", live->expiry_held},
                     {"error", live->error}};
  }
  if (deployment.metrics.enabled()) {
    out["metrics"] = {{"port", deployment.metrics.port},
                      {"bind", deployment.metrics.bind},
                      {"url", MetricsUrl(deployment.metrics.bind, deployment.metrics.port)}};
  }
  return out;
}

std::vector<std::string> ShardRow(const ShardPlan& shard, const ShardStatus& status) {
  return {std::to_string(shard.index),
          std::to_string(shard.port),
          status.running ? std::to_string(status.process->pid) : "-",
          common::FormatCpuList(shard.cpus),
          std::to_string(shard.numa_node),
          common::FormatSize(shard.maxmemory),
          status.reachable ? common::FormatSize(status.used_memory) : "-",
          status.reachable ? std::to_string(status.keys) : "-",
          status.reachable ? status.role : RoleName(shard.role),
          status.health};
}

// The last exit and log tail of every shard the supervisor saw exit.
void PrintExits(const std::vector<ShardStatus>& shards) {
  for (const auto& status : shards) {
    if (status.supervised.is_null() || status.supervised.value("last_exit", "").empty()) continue;
    std::cout << "shard " << status.supervised.value("index", 0) << ": "
              << status.supervised.value("restarts", 0) << " restart(s), last "
              << status.supervised.value("last_exit", "") << "\n";
    std::string tail = status.supervised.value("log_tail", "");
    if (!tail.empty()) std::cout << "  log tail:\n    " << tail << "\n";
  }
}

void PrintProxy(const Deployment& deployment, const ProxyStatus& status) {
  json proxy = ProxyJson(deployment, status);
  std::cout << "proxy: port " << deployment.proxy.port << ", "
            << (proxy["pid"].is_null() ? std::string("not running") : "pid " + proxy["pid"].dump())
            << ", " << proxy["health"].get<std::string>() << ", " << proxy.value("restarts", 0)
            << " restart(s)"
            << (proxy.value("last_exit", "").empty() ? ""
                                                     : ", last " + proxy.value("last_exit", ""))
            << "\n";
}

// Why a supervisor that holds its lock may not answer, and what to do: nothing heals meanwhile.
std::string SilentSupervisorHint(pid_t pid, bool stopped, const std::string& hint) {
  const std::string id = std::to_string(pid);
  if (stopped) {
    return "(stopped by a signal or a debugger: kill -CONT " + id +
           " resumes it; nothing heals "
           "until then)";
  }
  return "(busy starting or handing over, or hung: see shardctl logs" + hint +
         "; if it stays silent, kill " + id + " and shardctl up" + hint + " adopts the shards)";
}

void PrintHuman(const Deployment& deployment, const DeploymentStatus& status,
                const std::string& hint) {
  std::cout << "deployment \"" << deployment.plan.name << "\": " << deployment.engine.Name() << " "
            << deployment.engine.version
            << (deployment.shard_engines.empty() ? "" : " (" + MixedEngines(deployment) + ")")
            << ", cluster_state " << status.summary.cluster_state << ", supervisor "
            << (!status.supervised || !status.supervisor ? std::string("DOWN")
                : status.supervisor_answers
                    ? "pid " + std::to_string(status.supervisor->pid)
                    : "pid " + std::to_string(status.supervisor->pid) + " NOT ANSWERING " +
                          SilentSupervisorHint(status.supervisor->pid, status.supervisor_stopped,
                                               hint))
            << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"SHARD", "PORT", "PID", "CPUS", "NODE", "MAXMEMORY", "USED", "KEYS", "ROLE", "HEALTH"}};
  for (size_t i = 0; i < status.shards.size(); ++i) {
    rows.push_back(ShardRow(deployment.plan.shards[i], status.shards[i]));
  }
  std::cout << FormatTable(rows);
  PrintExits(status.shards);
  PrintMoves(status.moves, hint);
  if (status.proxy) PrintProxy(deployment, *status.proxy);
  if (const auto& live = status.live_import) {
    std::cout << "import from " << live->source << ": " << live->phase << ", " << live->keys
              << " keys copied, " << live->commands << " writes applied, lag " << live->lag_ms
              << " ms / " << live->lag_bytes << " bytes"
              << (live->expiry_held ? ", expiry held" : "")
              << (live->error.empty() ? "" : " (" + live->error + ")") << "\n";
  }
  if (deployment.metrics.enabled()) {
    std::cout << "metrics: " << MetricsUrl(deployment.metrics.bind, deployment.metrics.port);
    if (deployment.proxy.metrics_port != 0) {
      std::cout << " (proxy: " << MetricsUrl(deployment.metrics.bind, deployment.proxy.metrics_port)
                << ")";
    }
    std::cout << "\n";
  } else if (deployment.proxy.metrics_port != 0) {
    std::cout << "metrics: proxy "
              << MetricsUrl(deployment.metrics.bind, deployment.proxy.metrics_port) << "\n";
  }
}

}  // namespace

int StatusExitCode(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return kStatusOk;
    case Verdict::kDegraded:
      return kStatusDegraded;
    case Verdict::kDown:
      break;
  }
  return kStatusDown;
}

int RunStatus(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  if (invocation.cluster) return RunStatusCluster(invocation, *spec);
  auto report = Status(*spec);
  if (!report.ok()) return Fail(report.error());
  const auto& [deployment, status] = *report;
  if (invocation.json) {
    std::cout << StatusJson(deployment, status).dump(2) << "\n";
  } else {
    PrintHuman(deployment, status, StateDirHint(*spec));
  }
  return StatusExitCode(status.summary.verdict);
}

}  // namespace shardctl::launcher
