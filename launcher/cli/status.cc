// `shardctl status`: probes every shard directly (pid files + RESP), so it works whether or not
// the supervisor is alive.
#include <iostream>

#include "common/cpu_list.h"
#include "common/size.h"
#include "launcher/cli/commands.h"
#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/plan_json.h"
#include "launcher/os/files.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

constexpr auto kProbeTimeout = std::chrono::milliseconds(500);

struct ShardStatus {
  std::optional<ProcessId> process;
  bool running = false;
  bool reachable = false;
  std::string node_id;
  std::string health;  // ok, down, unreachable, cluster_fail
  std::string role;
  std::string cluster_state;
  std::string slot_map;
  uint64_t used_memory = 0;
  uint64_t keys = 0;
  std::vector<int> pinned_cpus;
  std::vector<int> bound_nodes;
  int64_t last_save_unix = 0;    // rdb_last_save_time (also the start time when never saved)
  std::string last_save_status;  // "ok" / "err" of the last BGSAVE (BGREWRITEAOF with aof)
  bool aof = false;
  json supervised;  // what the supervisor knows (restarts, last exit, ...), null without one
};

// Folds the supervisor's view of each shard into the probed status: it knows what a probe cannot
// (a crash loop, a restart under way, how many restarts, why the last exit).
void MergeSupervisorView(const json& reply, std::vector<ShardStatus>& statuses) {
  if (!reply.value("ok", false) || !reply.contains("shards")) return;
  for (const auto& shard : reply["shards"]) {
    int index = shard.value("index", -1);
    if (index < 0 || index >= static_cast<int>(statuses.size())) continue;
    auto& status = statuses[index];
    status.supervised = shard;
    std::string state = shard.value("state", "");
    if (state == "crashloop" || state == "unresponsive" || state == "restarting" ||
        (state == "starting" && status.health != "ok")) {
      status.health = state;
    }
  }
}

ShardStatus Probe(const DeploymentDir& dir, const Plan& plan, const ShardPlan& shard) {
  ShardStatus status;
  status.process = ReadProcessId(dir.ShardPidFile(shard.index));
  status.running = status.process && IsRunning(*status.process);
  if (status.running) {
    if (auto cpus = ReadAllowedCpus(status.process->pid); cpus.ok()) status.pinned_cpus = *cpus;
    if (auto nodes = ReadBoundNodes(status.process->pid); nodes.ok()) status.bound_nodes = *nodes;
  }
  auto connection = RedisConnection::Connect(plan.bind, shard.port, kProbeTimeout);
  auto replies = connection.ok()
                     ? connection->Pipeline({{"CLUSTER", "MYID"},
                                             {"CLUSTER", "INFO"},
                                             {"INFO", "memory"},
                                             {"INFO", "replication"},
                                             {"DBSIZE"},
                                             {"CLUSTER", "NODES"},
                                             {"INFO", "persistence"}})
                     : common::Result<std::vector<common::Result<std::string>>>(connection.error());
  bool answered = replies.ok() && std::all_of(replies->begin(), replies->end(),
                                              [](const auto& reply) { return reply.ok(); });
  if (!answered) {
    status.health = status.running ? "unreachable" : "down";
    return status;
  }
  status.reachable = true;
  const auto& r = *replies;
  status.node_id = *r[0];
  status.cluster_state = InfoField(*r[1], "cluster_state");
  status.used_memory = InfoNumber<uint64_t>(*r[2], "used_memory");
  status.role = InfoField(*r[3], "role") == "slave" ? "replica" : "primary";
  status.keys = common::ParseInteger<uint64_t>(*r[4]).value_or(0);
  status.slot_map = NormalizeSlotMap(*r[5]);
  status.aof = InfoField(*r[6], "aof_enabled") == "1";
  status.last_save_unix = InfoNumber<int64_t>(*r[6], "rdb_last_save_time");
  status.last_save_status =
      InfoField(*r[6], status.aof ? "aof_last_bgrewrite_status" : "rdb_last_bgsave_status");
  status.health = status.cluster_state == "ok" ? "ok" : "cluster_" + status.cluster_state;
  return status;
}

// Overall state and exit code from the shards' states.
std::pair<std::string, int> Summarize(const std::vector<ShardStatus>& shards, bool supervised) {
  int reachable = 0, healthy = 0, failing = 0;
  std::string first_map;
  bool maps_agree = true;
  for (const auto& shard : shards) {
    if (!shard.reachable) continue;
    ++reachable;
    if (shard.health == "ok") ++healthy;
    if (shard.cluster_state == "fail") ++failing;
    if (first_map.empty()) first_map = shard.slot_map;
    maps_agree = maps_agree && shard.slot_map == first_map;
  }
  if (reachable == 0) return {"down", kStatusDown};
  if (healthy == 0 || failing == reachable) return {"fail", kStatusDown};
  if (healthy == static_cast<int>(shards.size()) && maps_agree) {
    return {"ok", supervised ? kStatusOk : kStatusDegraded};
  }
  return {"degraded", kStatusDegraded};
}

// The proxy as a probe sees it (pid file, PING on its port), plus what the supervisor knows.
json ProxyStatus(const DeploymentDir& dir, const Deployment& deployment, const json& supervised) {
  auto process = ReadProcessId(dir.ProxyPidFile());
  const bool running = process && IsRunning(*process);
  auto connection =
      RedisConnection::Connect(deployment.plan.bind, deployment.proxy.port, kProbeTimeout);
  const bool answers = connection.ok() && connection->Run({"PING"}).ok();
  json status = {{"port", deployment.proxy.port},
                 {"pid", running ? json(process->pid) : json(nullptr)},
                 {"health", answers ? "ok" : "down"},
                 {"read_from", deployment.proxy.read_from}};
  if (supervised.is_object()) {
    for (const char* key : {"state", "restarts", "last_exit", "adopted", "log_tail"}) {
      if (supervised.contains(key)) status[key] = supervised[key];
    }
  }
  return status;
}

json StatusJson(const Deployment& deployment, const std::vector<ShardStatus>& statuses,
                const std::string& cluster_state, bool supervised,
                const std::optional<ProcessId>& supervisor) {
  json shards = json::array();
  for (size_t i = 0; i < statuses.size(); ++i) {
    const auto& status = statuses[i];
    json shard = ShardToJson(deployment.plan.shards[i]);
    shard["pid"] = status.running ? json(status.process->pid) : json(nullptr);
    shard["node_id"] = status.node_id.empty() ? json(nullptr) : json(status.node_id);
    shard["health"] = status.health;
    shard["used_memory"] = status.used_memory;
    shard["keys"] = status.keys;
    if (status.reachable) {
      shard["role"] = status.role;
      shard["last_save_unix"] = status.last_save_unix;
      shard["last_save_status"] = status.last_save_status;
    }
    shard["pinned_cpus"] = status.pinned_cpus;
    shard["bound_numa_nodes"] = status.bound_nodes;
    if (!status.supervised.is_null()) {
      for (const char* key :
           {"restarts", "last_exit", "last_exit_unix_ms", "adopted", "log_tail"}) {
        if (status.supervised.contains(key)) shard[key] = status.supervised[key];
      }
    }
    shards.push_back(shard);
  }
  return {{"name", deployment.plan.name},
          {"engine", deployment.engine.Name()},
          {"engine_version", deployment.engine.version},
          {"engine_path", deployment.engine.path.string()},
          {"persistence", PersistenceName(deployment.durability.persistence)},
          {"fork_limit", deployment.durability.fork_limit},
          {"cluster_state", cluster_state},
          {"supervisor",
           {{"running", supervised},
            {"pid", supervised && supervisor ? json(supervisor->pid) : json(nullptr)}}},
          {"shards", shards}};
}

void PrintHuman(const Deployment& deployment, const std::vector<ShardStatus>& statuses,
                const std::string& cluster_state, bool supervised,
                const std::optional<ProcessId>& supervisor) {
  std::cout << "deployment \"" << deployment.plan.name << "\": " << deployment.engine.Name() << " "
            << deployment.engine.version << ", cluster_state " << cluster_state << ", supervisor "
            << (supervised && supervisor ? "pid " + std::to_string(supervisor->pid)
                                         : std::string("DOWN"))
            << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"SHARD", "PORT", "PID", "CPUS", "NODE", "MAXMEMORY", "USED", "KEYS", "ROLE", "HEALTH"}};
  for (size_t i = 0; i < statuses.size(); ++i) {
    const auto& status = statuses[i];
    const auto& shard = deployment.plan.shards[i];
    rows.push_back({std::to_string(shard.index), std::to_string(shard.port),
                    status.running ? std::to_string(status.process->pid) : "-",
                    common::FormatCpuList(shard.cpus), std::to_string(shard.numa_node),
                    common::FormatSize(shard.maxmemory),
                    status.reachable ? common::FormatSize(status.used_memory) : "-",
                    status.reachable ? std::to_string(status.keys) : "-",
                    status.reachable ? status.role : RoleName(shard.role), status.health});
  }
  std::cout << FormatTable(rows);
  for (const auto& status : statuses) {
    if (status.supervised.is_null() || status.supervised.value("last_exit", "").empty()) continue;
    std::cout << "shard " << status.supervised.value("index", 0) << ": "
              << status.supervised.value("restarts", 0) << " restart(s), last "
              << status.supervised.value("last_exit", "") << "\n";
    std::string tail = status.supervised.value("log_tail", "");
    if (!tail.empty()) std::cout << "  log tail:\n    " << tail << "\n";
  }
}

}  // namespace

int RunStatus(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  DeploymentDir dir = DirOf(*spec);
  if (!std::filesystem::exists(dir.DeploymentFile())) {
    PrintError("no deployment \"" + spec->name + "\" in " + dir.root().parent_path().string() +
               " (start one with shardctl up, or pass --name / --state-dir)");
    return kStatusUnknown;
  }
  auto deployment = ReadDeployment(dir);
  if (!deployment.ok()) {
    PrintError(deployment.error().message());
    return kStatusUnknown;
  }
  bool supervised = SupervisorRunning(dir);
  auto supervisor = ReadProcessId(dir.SupervisorPidFile());
  std::vector<ShardStatus> statuses;
  for (const auto& shard : deployment->plan.shards) {
    statuses.push_back(Probe(dir, deployment->plan, shard));
  }
  json supervisor_view = json::object();
  if (supervised) {
    auto reply = AskSupervisor(dir, {{"cmd", "status"}}, std::chrono::seconds(2));
    if (reply.ok()) {
      MergeSupervisorView(*reply, statuses);
      supervisor_view = *reply;
    }
  }
  auto [cluster_state, code] = Summarize(statuses, supervised);
  json proxy;
  if (deployment->proxy.enabled()) {
    proxy = ProxyStatus(dir, *deployment, supervisor_view.value("proxy", json()));
    if (proxy["health"] != "ok" && code == kStatusOk) code = kStatusDegraded;
  }
  if (invocation.json) {
    json out = StatusJson(*deployment, statuses, cluster_state, supervised, supervisor);
    if (!proxy.is_null()) out["proxy"] = proxy;
    std::cout << out.dump(2) << "\n";
  } else {
    PrintHuman(*deployment, statuses, cluster_state, supervised, supervisor);
    if (!proxy.is_null()) {
      std::cout << "proxy: port " << deployment->proxy.port << ", "
                << (proxy["pid"].is_null() ? std::string("not running")
                                           : "pid " + proxy["pid"].dump())
                << ", " << proxy["health"].get<std::string>() << ", " << proxy.value("restarts", 0)
                << " restart(s)"
                << (proxy.value("last_exit", "").empty() ? ""
                                                         : ", last " + proxy.value("last_exit", ""))
                << "\n";
    }
  }
  return code;
}

}  // namespace shardctl::launcher
