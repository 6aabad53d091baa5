#include "launcher/ops/status.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/supervisor/restart_policy.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

constexpr auto kProbeTimeout = std::chrono::milliseconds(500);
constexpr auto kSupervisorTimeout = std::chrono::seconds(2);

ShardStatus ProbeShard(const Access& access, const DeploymentDir& dir, const Plan& plan,
                       const ShardPlan& shard) {
  ShardStatus status;
  status.index = shard.index;
  status.process = ReadProcessId(dir.ShardPidFile(shard.index));
  status.running = status.process && IsRunning(*status.process);
  if (status.running) {
    if (auto cpus = ReadAllowedCpus(status.process->pid); cpus.ok()) status.pinned_cpus = *cpus;
    if (auto nodes = ReadBoundNodes(status.process->pid); nodes.ok()) status.bound_nodes = *nodes;
  }
  auto connection = RedisConnection::Connect(access, plan.bind, shard.port, kProbeTimeout);
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
  ReadProbeReplies(*replies, status);
  if (status.health == "write-error" || status.health == "save-failed") {
    auto available = AvailableBytes(dir.ShardDir(shard.index));
    if (available && IsDiskFull(*available)) status.health = "disk-full";
  }
  return status;
}

ProxyStatus ProbeProxy(const Access& access, const DeploymentDir& dir, const Deployment& deployment,
                       const json& supervised) {
  ProxyStatus status;
  auto process = ReadProcessId(dir.ProxyPidFile());
  if (process && IsRunning(*process)) status.process = process;
  auto connection =
      RedisConnection::Connect(access, deployment.plan.bind, deployment.proxy.port, kProbeTimeout);
  status.answers = connection.ok() && connection->Run({"PING"}).ok();
  status.supervised = supervised;
  return status;
}

}  // namespace

void ReadProbeReplies(const std::vector<common::Result<std::string>>& r, ShardStatus& status) {
  status.reachable = true;
  status.node_id = *r[0];
  status.cluster_state = InfoField(*r[1], "cluster_state");
  status.used_memory = InfoNumber<uint64_t>(*r[2], "used_memory");
  status.role = InfoField(*r[3], "role") == "slave" ? "replica" : "primary";
  status.keys = common::ParseInteger<uint64_t>(*r[4]).value_or(0);
  status.slot_map = NormalizeSlotMap(*r[5]);
  if (auto lines = common::ParseClusterNodes(*r[5]); lines.ok()) {
    // Each node lists its own markers on its "myself" line only.
    if (const auto* myself = common::FindMyself(*lines)) {
      status.migrations = myself->migrations;
      status.slots = myself->slots;
    }
  }
  status.aof = InfoField(*r[6], "aof_enabled") == "1";
  status.last_save_unix = InfoNumber<int64_t>(*r[6], "rdb_last_save_time");
  status.last_save_status =
      InfoField(*r[6], status.aof ? "aof_last_bgrewrite_status" : "rdb_last_bgsave_status");
  status.health = status.cluster_state == "ok" ? "ok" : "cluster_" + status.cluster_state;
  // A shard that cannot write its AOF refuses every write with MISCONF while it answers PING:
  // the cluster looks fine and serves nothing but reads. A failed snapshot refuses nothing (the
  // shards keep no save points; the supervisor asks for each snapshot), but the next one will
  // fail too until its cause (a full disk, mostly) is gone.
  if (status.aof && InfoField(*r[6], "aof_last_write_status") == "err") {
    status.health = "write-error";
  } else if (InfoField(*r[6], "rdb_last_bgsave_status") == "err" && status.health == "ok") {
    status.health = "save-failed";  // a cluster failing says more, and stays said
  }
}

void MergeSupervisorView(const json& reply, std::vector<ShardStatus>& shards) {
  if (!reply.value("ok", false) || !reply.contains("shards")) return;
  for (const auto& shard : reply["shards"]) {
    const int index = shard.value("index", -1);
    auto found = std::find_if(shards.begin(), shards.end(),
                              [&](const ShardStatus& status) { return status.index == index; });
    if (found == shards.end()) continue;
    auto& status = *found;
    status.supervised = shard;
    std::string state = shard.value("state", "");
    if (state == "crashloop" || state == "unresponsive" || state == "restarting" ||
        state == "disk-full" || (state == "starting" && status.health != "ok")) {
      status.health = state;
    }
  }
}

std::vector<MoveInProgress> CollectMoves(const std::vector<ShardStatus>& shards) {
  std::map<std::string, int> index_of;
  for (const auto& shard : shards) {
    if (!shard.node_id.empty()) index_of[shard.node_id] = shard.index;
  }
  auto shard_of = [&](const std::string& id) {
    auto it = index_of.find(id);
    return it == index_of.end() ? -1 : it->second;
  };
  // By slot: the source's MIGRATING and the target's IMPORTING name the same move once.
  std::map<int, std::pair<int, int>> by_slot;
  for (const auto& shard : shards) {
    for (const auto& migration : shard.migrations) {
      const int peer = shard_of(migration.peer_id);
      by_slot.try_emplace(migration.slot, migration.importing ? peer : shard.index,
                          migration.importing ? shard.index : peer);
    }
  }
  std::vector<MoveInProgress> moves;
  for (const auto& [slot, pair] : by_slot) {
    if (!moves.empty() && moves.back().last + 1 == slot &&
        moves.back().source_shard == pair.first && moves.back().target_shard == pair.second) {
      moves.back().last = slot;
      continue;
    }
    moves.push_back(
        {.first = slot, .last = slot, .source_shard = pair.first, .target_shard = pair.second});
  }
  return moves;
}

namespace {

// Serves reads and writes: healthy, or failing only to save its snapshot (a full disk included,
// unless the shard keeps an AOF, whose failed write refuses every write).
bool Serves(const ShardStatus& shard) {
  if (shard.cluster_state != "ok") return false;
  return shard.health == "ok" || shard.health == "save-failed" ||
         (shard.health == "disk-full" && !shard.aof);
}

}  // namespace

Summary Summarize(const std::vector<ShardStatus>& shards, bool supervised, bool proxy_answers) {
  int reachable = 0, healthy = 0, serving = 0, failing = 0;
  std::string first_map;
  bool maps_agree = true;
  bool moving = false;
  for (const auto& shard : shards) {
    if (!shard.reachable) continue;
    moving = moving || !shard.migrations.empty();
    ++reachable;
    if (shard.health == "ok") ++healthy;
    if (Serves(shard)) ++serving;
    if (shard.cluster_state == "fail") ++failing;
    if (first_map.empty()) first_map = shard.slot_map;
    maps_agree = maps_agree && shard.slot_map == first_map;
  }
  if (reachable == 0) return {"down", Verdict::kDown};
  if (serving == 0 || failing == reachable) return {"fail", Verdict::kDown};
  if (healthy == static_cast<int>(shards.size()) && maps_agree) {
    return {"ok", supervised && proxy_answers && !moving ? Verdict::kOk : Verdict::kDegraded};
  }
  return {"degraded", Verdict::kDegraded};
}

DeploymentStatus ProbeDeployment(const Access& access, const DeploymentDir& dir,
                                 const Deployment& deployment) {
  DeploymentStatus status;
  status.supervised = SupervisorRunning(dir);
  status.supervisor = ReadProcessId(dir.SupervisorPidFile());
  status.live_import = ReadLiveImport(dir);
  for (const auto& shard : deployment.plan.shards) {
    status.shards.push_back(ProbeShard(access, dir, deployment.plan, shard));
  }
  json supervisor_view = json::object();
  if (status.supervised) {
    auto reply = AskSupervisor(dir, {{"cmd", "status"}}, kSupervisorTimeout);
    if (reply.ok()) {
      MergeSupervisorView(*reply, status.shards);
      supervisor_view = *reply;
      status.supervisor_answers = true;
    } else if (status.supervisor) {
      status.supervisor_stopped = IsStopped(status.supervisor->pid);
    }
  }
  if (deployment.proxy.enabled()) {
    status.proxy = ProbeProxy(access, dir, deployment, supervisor_view.value("proxy", json()));
  }
  status.moves = CollectMoves(status.shards);
  status.slots =
      supervisor_view.value("slots", json{{"source", "unavailable"}, {"hot", json::array()}});
  status.summary =
      // A supervisor that holds its lock but does not answer (stopped, hung) heals nothing.
      Summarize(status.shards, status.supervisor_answers, !status.proxy || status.proxy->answers);
  return status;
}

Outcome<StatusReport> Status(const Spec& spec) {
  auto target = LoadTarget(spec, {.if_missing = TargetNeeds::IfMissing::kUnknown});
  if (!target.ok()) return target.error();
  DeploymentStatus status = ProbeDeployment(target->access, target->dir, *target->deployment);
  return StatusReport{.deployment = std::move(*target->deployment), .status = std::move(status)};
}

}  // namespace shardctl::launcher
