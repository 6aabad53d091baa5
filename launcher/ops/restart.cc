#include "launcher/ops/restart.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kShardBackTimeout = std::chrono::seconds(60);
constexpr auto kRequestTimeout = std::chrono::seconds(5);
constexpr auto kQueryTimeout = std::chrono::seconds(2);
// A SAVE and a load take about a second per GB; a 25 GB shard fits with room to spare.
constexpr auto kSaveTimeout = std::chrono::minutes(10);
constexpr auto kLoadTimeout = std::chrono::minutes(10);
// Writes wait this long at most while the shard saves; its exit (or UNPAUSE) ends the pause.
constexpr const char* kPauseMs = "660000";

// What the running shard is before it stops: how its keys can be kept.
struct Before {
  bool running = false;
  bool primary = false;
  long long connected_replicas = 0;
  long long keys = 0;
};

Before Inspect(const std::string& host, int port) {
  Before before;
  auto connection = RedisConnection::Connect(host, port, kQueryTimeout);
  if (!connection.ok()) return before;
  auto replies = connection->Pipeline({{"INFO", "replication"}, {"DBSIZE"}});
  if (!replies.ok() || !(*replies)[0].ok() || !(*replies)[1].ok()) return before;
  before.running = true;
  before.primary = InfoField(*(*replies)[0], "role") == "master";
  before.connected_replicas = InfoNumber<long long>(*(*replies)[0], "connected_slaves");
  before.keys = common::ParseInteger<long long>(*(*replies)[1]).value_or(0);
  return before;
}

// Holds the shard's writes and snapshots it. The pause is lifted on failure; on success it lasts
// until the process exits, so no write is acknowledged after the snapshot. Returns the key count
// the snapshot holds.
Result<long long> PauseAndSave(const std::string& host, int port, int index) {
  auto connection = RedisConnection::Connect(
      host, port, std::chrono::duration_cast<std::chrono::milliseconds>(kSaveTimeout));
  if (!connection.ok()) return connection.error();
  if (auto paused = connection->Run({"CLIENT", "PAUSE", kPauseMs, "WRITE"}); !paused.ok()) {
    return paused.error().Context("CLIENT PAUSE WRITE");
  }
  auto keys = connection->Run({"DBSIZE"});
  auto saved = keys.ok() ? connection->Run({"SAVE"}) : Result<std::string>(keys.error());
  if (!saved.ok()) {
    (void)connection->Run({"CLIENT", "UNPAUSE"});
    return Error("saving shard " + std::to_string(index) +
                 "'s keys before the restart failed: " + saved.error().message() +
                 "; nothing was restarted (see shardctl logs " + std::to_string(index) +
                 "; free space in its data directory, or pass --discard-data to restart it "
                 "empty)");
  }
  return common::ParseInteger<long long>(*keys).value_or(0);
}

void Unpause(const std::string& host, int port) {
  auto connection = RedisConnection::Connect(host, port, kQueryTimeout);
  if (connection.ok()) (void)connection->Run({"CLIENT", "UNPAUSE"});
}

// Waits until the supervisor reports shard `index` running as a new process that answers.
Result<pid_t> WaitForNewProcess(const DeploymentDir& dir, int index, const json& old_pid) {
  auto deadline = Clock::now() + kShardBackTimeout;
  while (Clock::now() < deadline) {
    auto reply = AskSupervisor(dir, {{"cmd", "status"}}, kRequestTimeout);
    if (!reply.ok()) return reply.error();
    json shard = json::object();
    for (const auto& listed : reply->value("shards", json::array())) {
      if (listed.value("index", -1) == index) shard = listed;
    }
    if (shard.contains("pid") && shard["pid"].is_number() && shard["pid"] != old_pid &&
        shard.value("state", "") == "ok") {
      return shard["pid"].get<pid_t>();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Error("shard " + std::to_string(index) + " did not come back within " +
               std::to_string(kShardBackTimeout.count()) + " s (see shardctl logs " +
               std::to_string(index) + ")");
}

// Waits until the new process has loaded its data (INFO persistence loading:0) and returns its
// key count.
Result<long long> WaitForLoadedKeys(const std::string& host, int port) {
  auto deadline = Clock::now() + kLoadTimeout;
  std::string last_error = "no answer";
  while (Clock::now() < deadline) {
    auto connection = RedisConnection::Connect(host, port, kQueryTimeout);
    auto info = connection.ok() ? connection->Run({"INFO", "persistence"})
                                : Result<std::string>(connection.error());
    if (info.ok() && InfoField(*info, "loading") == "0") {
      auto keys = connection->Run({"DBSIZE"});
      if (keys.ok()) return common::ParseInteger<long long>(*keys).value_or(0);
      last_error = keys.error().message();
    } else if (!info.ok()) {
      last_error = info.error().message();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Error("it did not finish loading its data in time (" + last_error + ")");
}

json RestartRequest(int index, const RestartOptions& options, bool require_handover) {
  json request = {{"cmd", "restart"}, {"shard", index}};
  if (const auto& engine = options.engine) {
    request["engine"] = {
        {"kind", engine->Name()}, {"path", engine->path.string()}, {"version", engine->version}};
  }
  if (require_handover) request["require_handover"] = true;
  if (options.discard_data) request["discard_data"] = true;
  return request;
}

// Asks the supervisor for the restart; returns its reply (old_pid, handed_over) or its refusal.
Result<json> AskForRestart(const DeploymentDir& dir, const json& request) {
  auto reply = AskSupervisor(dir, request, kRequestTimeout);
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) {
    json refusal = *reply;
    refusal["refused"] = true;
    return refusal;
  }
  return reply;
}

}  // namespace

Result<ShardRestart> RestartShard(const DeploymentDir& dir, const Deployment& deployment, int index,
                                  const RestartOptions& options) {
  auto started = Clock::now();
  const ShardPlan* planned = nullptr;
  for (const auto& shard : deployment.plan.shards) {
    if (shard.index == index) planned = &shard;
  }
  if (planned == nullptr) return Error("no shard " + std::to_string(index));
  const std::string& host = deployment.plan.bind;
  const int port = planned->port;
  const bool aof = deployment.durability.persistence == Persistence::kAof;
  ShardRestart result{.shard = index};
  const Before before = Inspect(host, port);
  if (!before.running) {
    result.data = "none";
  } else if (options.discard_data) {
    result.data = "discarded";
  } else if (!before.primary) {
    result.data = "resynced";
  } else {
    result.keys_before = before.keys;
    result.data = before.connected_replicas > 0 ? "handed-over" : aof ? "aof" : "saved";
  }

  Result<json> reply = json::object();
  if (result.data != "saved") {
    reply = AskForRestart(dir, RestartRequest(index, options, result.data == "handed-over"));
  }
  if (reply.ok() && reply->value("handover_failed", false)) {
    // The replica could not take over (lagging, or just lost): keep the keys on disk instead.
    result.data = aof ? "aof" : "saved";
    if (aof) reply = AskForRestart(dir, RestartRequest(index, options, false));
  }
  if (result.data == "saved") {
    auto saved = PauseAndSave(host, port, index);
    if (!saved.ok()) return saved.error();
    result.keys_before = *saved;
    reply = AskForRestart(dir, RestartRequest(index, options, false));
    if (!reply.ok() || reply->value("refused", false)) Unpause(host, port);
  }
  if (!reply.ok()) return reply.error();
  if (reply->value("refused", false)) return Error(reply->value("error", "restart refused"));

  const json old_pid = (*reply)["old_pid"];
  auto new_pid = WaitForNewProcess(dir, index, old_pid);
  if (!new_pid.ok()) return new_pid.error();
  auto loaded = WaitForLoadedKeys(host, port);
  if (!loaded.ok()) return loaded.error().Context("shard " + std::to_string(index));
  if (result.keys_before) result.keys_after = *loaded;
  const auto snapshot = dir.ShardDir(index) / "dump.rdb";
  if (result.data == "saved" && *loaded == 0 && *result.keys_before > 0) {
    return Error("shard " + std::to_string(index) + " came back with no keys although its " +
                 "snapshot holds " + std::to_string(*result.keys_before) + " (kept at " +
                 snapshot.string() + "; see shardctl logs " + std::to_string(index) + ")");
  }
  // Without persistence a shard starts empty after a crash, as documented: the snapshot that
  // carried its keys across this restart must not come back later with stale data.
  if (result.data == "saved" && deployment.durability.persistence == Persistence::kNone) {
    std::error_code ignored;
    std::filesystem::remove(snapshot, ignored);
  }
  auto healthy = WaitUntilHealthy(RunningNodesOf(deployment.plan), Clock::now() + kShardBackTimeout,
                                  [] { return common::Ok(); });
  if (!healthy.ok()) return healthy.error().Context("the cluster did not become healthy");
  result.old_pid = old_pid.is_number() ? std::optional<pid_t>(old_pid.get<pid_t>()) : std::nullopt;
  result.new_pid = *new_pid;
  result.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

}  // namespace shardctl::launcher
