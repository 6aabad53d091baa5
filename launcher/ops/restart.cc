#include "launcher/ops/restart.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/wall_clock.h"
#include "launcher/cluster/formation.h"
#include "launcher/engine/engine.h"
#include "launcher/model/plan_json.h"
#include "launcher/ops/reload_tls.h"
#include "launcher/ops/shard_snapshot.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/data_lock.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kShardBackTimeout = std::chrono::seconds(60);
constexpr auto kStatusTimeout = std::chrono::seconds(5);
// The supervisor answers a restart after the handover: a graceful failover may take 5 s per
// replica, plus a second to reach each node.
constexpr auto kRestartRequestTimeout = std::chrono::seconds(60);

// The supervisor's entry for shard `index` (pid null when it is not running).
Result<json> SupervisedShard(const DeploymentDir& dir, int index) {
  auto reply = AskSupervisor(dir, {{"cmd", "status"}}, kStatusTimeout);
  if (!reply.ok()) return reply.error();
  for (const auto& listed : reply->value("shards", json::array())) {
    if (listed.value("index", -1) == index) return listed;
  }
  return json::object();
}

// Waits until the supervisor reports shard `index` running as a new process that answers (any
// reply counts, -LOADING too: a shard reading a large AOF is not waited out here). Sets
// `never_answered` when it fails: the shard is in a crash loop of exits since `asked_unix_ms`
// (the restart reset its count, so these are the new process's: an engine that exits at start;
// not waited out), or no process of it answered anything within kShardBackTimeout (one that
// hangs at start).
Result<pid_t> WaitForNewProcess(const DeploymentDir& dir, int index, const json& old_pid,
                                int64_t asked_unix_ms, bool* never_answered = nullptr) {
  auto deadline = Clock::now() + kShardBackTimeout;
  while (Clock::now() < deadline) {
    auto shard = SupervisedShard(dir, index);
    if (!shard.ok()) return shard.error();
    const bool running = shard->contains("pid") && (*shard)["pid"].is_number();
    if (running && (*shard)["pid"] != old_pid && shard->value("state", "") == "ok") {
      return (*shard)["pid"].get<pid_t>();
    }
    const json& exited_at = (*shard)["last_exit_unix_ms"];
    if (!running && shard->value("state", "") == "crashloop" && exited_at.is_number() &&
        exited_at.get<int64_t>() >= asked_unix_ms) {
      if (never_answered != nullptr) *never_answered = true;
      const json& last_exit = (*shard)["last_exit"];
      return Error("shard " + std::to_string(index) + " exits at start (" +
                   (last_exit.is_string() ? last_exit.get<std::string>() : "see its log") +
                   "; shardctl logs " + std::to_string(index) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (never_answered != nullptr) *never_answered = true;
  return Error("shard " + std::to_string(index) + " did not answer within " +
               std::to_string(kShardBackTimeout.count()) + " s of its restart (see shardctl logs " +
               std::to_string(index) + ")");
}

json SupervisorRestartRequest(int index, const RestartOptions& options, bool require_handover) {
  json request = {{"cmd", "restart"}, {"shard", index}};
  if (options.engine) request["engine"] = EngineToJson(*options.engine);
  if (require_handover) request["require_handover"] = true;
  if (options.discard_data) request["discard_data"] = true;
  if (options.load_placed) request["load_placed"] = true;
  return request;
}

// Asks the supervisor for the restart; returns its reply (old_pid, handed_over) or its refusal.
Result<json> AskForRestart(const DeploymentDir& dir, const json& request) {
  auto reply = AskSupervisor(dir, request, kRestartRequestTimeout);
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) {
    json refusal = *reply;
    refusal["refused"] = true;
    return refusal;
  }
  return reply;
}

// How shard `index` keeps its keys (restart.h), from what it is now. A shard the supervisor runs
// but that does not answer is not restarted: its keys could not be saved.
Result<std::string> ChooseDataPath(const Access& access, const DeploymentDir& dir,
                                   const Deployment& deployment, int index, int port,
                                   const RestartOptions& options, ShardRestart& result) {
  if (options.load_placed) return std::string("placed");
  auto supervised = SupervisedShard(dir, index);
  if (!supervised.ok()) return supervised.error();
  if (!supervised->contains("pid") || !(*supervised)["pid"].is_number()) return std::string("none");
  if (options.discard_data) return std::string("discarded");
  auto state = InspectShard(access, deployment.plan.bind, port);
  if (!state.ok()) {
    const pid_t pid = (*supervised)["pid"].get<pid_t>();
    std::string what_now;
    if (IsStopped(pid)) {
      what_now = "it is stopped (SIGSTOP): kill -CONT " + std::to_string(pid) +
                 " and run the restart again";
    } else if (deployment.durability.persistence == Persistence::kAof) {
      what_now =
          "its keys are in its AOF: try again once it answers, or leave it to the "
          "supervisor, which restarts a shard silent past --health-timeout and "
          "--hang-grace with them";
    } else {
      what_now = "try again once it answers; --discard-data restarts it empty, losing its keys";
      if (deployment.durability.persistence == Persistence::kRdb) {
        what_now += " since its last save";
      }
    }
    return Error("shard " + std::to_string(index) + " runs but did not answer (" +
                 state.error().message() +
                 "), so its keys cannot be saved; nothing was restarted (" + what_now + ")");
  }
  if (!state->primary) return std::string("resynced");
  result.keys_before = state->keys;
  if (state->connected_replicas > 0) return std::string("handed-over");
  return std::string(deployment.durability.persistence == Persistence::kAof ? "aof" : "saved");
}

std::string EngineName(const Engine& engine) {
  return engine.Name() + " " + engine.version + " (" + engine.path.string() + ")";
}

// A shard that crash-loops or hangs on the engine it was just switched to is started again on the
// one it ran. Its keys are where the restart kept them (a replica that took over, its AOF, or the
// snapshot taken for it): the caller checks them as after any restart.
Result<pid_t> StartOnTheEngineItRan(const DeploymentDir& dir, const Deployment& deployment,
                                    int index) {
  RestartOptions back{.engine = EngineOf(deployment, index)};
  const int64_t asked = common::UnixMsNow();
  auto reply = AskForRestart(dir, SupervisorRestartRequest(index, back, false));
  if (!reply.ok()) return reply.error();
  if (reply->value("refused", false)) return Error(reply->value("error", "restart refused"));
  return WaitForNewProcess(dir, index, (*reply)["old_pid"], asked);
}

}  // namespace

Result<ShardRestart> RestartShard(const Access& access, const DeploymentDir& dir,
                                  const Deployment& deployment, int index,
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
  const int64_t asked_unix_ms = common::UnixMsNow();
  auto path = ChooseDataPath(access, dir, deployment, index, port, options, result);
  if (!path.ok()) return path.error();
  result.data = *path;

  Result<json> reply = json::object();
  if (result.data != "saved") {
    reply =
        AskForRestart(dir, SupervisorRestartRequest(index, options, result.data == "handed-over"));
  }
  if (reply.ok() && reply->value("handover_failed", false)) {
    // The replica could not take over (lagging, or just lost): keep the keys on disk instead.
    result.data = aof ? "aof" : "saved";
    if (aof) reply = AskForRestart(dir, SupervisorRestartRequest(index, options, false));
  }
  // While this runs, the snapshot it saves is the shard's data: the supervisor deletes a stale
  // dump.rdb at a crash (persistence none), but not one a live restart marked as its own.
  std::optional<OwnPidFile> marker;
  if (result.data == "saved") marker.emplace(dir.ShardRestartMarker(index));
  if (result.data == "saved") {
    const auto paused = Clock::now();
    auto saved = PauseAndSnapshot(access, host, port, index, options.interrupted);
    if (!saved.ok()) {
      // Ctrl-C is no failed save: the advice for one (--discard-data loses the keys) is not due.
      const bool stopped_by_user = options.interrupted != nullptr && options.interrupted->load();
      return Error(saved.error().message() + "; nothing was restarted" +
                   (stopped_by_user ? ""
                                    : " (free space in its data directory, or pass "
                                      "--discard-data to restart it empty)"));
    }
    result.keys_before = *saved;
    reply = AskForRestart(dir, SupervisorRestartRequest(index, options, false));
    result.write_pause =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - paused);
    if (!reply.ok()) {
      // Unknown whether the supervisor stops it: the pause ends on its own either way.
      return Error(reply.error().message() + " (shard " + std::to_string(index) +
                   " is saved; if it was not restarted, its writes resume within " +
                   std::to_string(kPauseSeconds) + " s; shardctl status shows it)");
    }
    if (reply->value("refused", false)) Unpause(access, host, port);
  }
  if (!reply.ok()) return reply.error();
  if (reply->value("refused", false)) return Error(reply->value("error", "restart refused"));
  if (reply->value("handed_over", false)) result.data = "handed-over";

  const json old_pid = (*reply)["old_pid"];
  const auto snapshot = dir.ShardDir(index) / "dump.rdb";
  // Where the keys are while the new process is not serving them yet.
  std::string kept;
  if (result.data == "saved") {
    kept = " (its keys are in " + snapshot.string() + ", loaded when it starts)";
  } else if (result.data == "placed") {
    kept = " (it loads " + snapshot.string() + ", the backup's file, when it starts)";
  }
  bool never_answered = false;
  auto new_pid = WaitForNewProcess(dir, index, old_pid, asked_unix_ms, &never_answered);
  // The supervisor records each shard's engine: this one goes back to its own, the shards already
  // switched stay on the new one.
  std::optional<std::string> rolled_back;
  const Engine& ran = EngineOf(deployment, index);
  if (!new_pid.ok() && never_answered && options.roll_back_engine && options.engine &&
      *options.engine != ran) {
    auto again = StartOnTheEngineItRan(dir, deployment, index);
    if (!again.ok()) {
      return Error(new_pid.error().message() + "; starting it again on " + EngineName(ran) +
                   " failed too: " + again.error().message() + kept);
    }
    rolled_back = "shard " + std::to_string(index) + " did not start on " +
                  EngineName(*options.engine) + ": " + new_pid.error().message() + "; it runs " +
                  EngineName(ran) + " again";
    new_pid = again;
  }
  if (!new_pid.ok()) return Error(new_pid.error().message() + kept);
  auto serving = WaitUntilServing(access, host, port);
  if (!serving.ok()) {
    return Error("shard " + std::to_string(index) + ": " + serving.error().message() + kept);
  }
  if (result.keys_before) result.keys_after = *serving;
  if (result.data == "saved" && *serving == 0 && *result.keys_before > 0) {
    return Error("shard " + std::to_string(index) + " came back with no keys although its " +
                 "snapshot holds " + std::to_string(*result.keys_before) + " (kept at " +
                 snapshot.string() + "; see shardctl logs " + std::to_string(index) + ")");
  }
  // Without persistence a shard starts empty after a crash, as documented: the snapshot that
  // carried its keys across this restart must not come back later with stale data.
  const bool loaded_snapshot = result.data == "saved" || result.data == "placed";
  if (result.data == "placed") result.keys_after = *serving;
  if (loaded_snapshot && deployment.durability.persistence == Persistence::kNone) {
    std::error_code ignored;
    std::filesystem::remove(snapshot, ignored);
  }
  auto healthy = WaitUntilHealthy(access, RunningNodesOf(deployment.plan),
                                  Clock::now() + kShardBackTimeout, [] { return common::Ok(); });
  if (!healthy.ok()) return healthy.error().Context("the cluster did not become healthy");
  if (rolled_back) {
    if (result.keys_before && result.keys_after) {
      *rolled_back += ", with " + std::to_string(*result.keys_after) + " keys (it had " +
                      std::to_string(*result.keys_before) + ")";
    }
    return Error(*rolled_back + "; no later shard was touched");
  }
  result.old_pid = old_pid.is_number() ? std::optional<pid_t>(old_pid.get<pid_t>()) : std::nullopt;
  result.new_pid = *new_pid;
  result.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

namespace {

// What must hold before the first shard stops; every problem is the request's.
Outcome<std::optional<Engine>> CheckRestartRequest(const RestartRequest& request,
                                                   const Target& target) {
  const Deployment& deployment = *target.deployment;
  const auto& shards = deployment.plan.shards;
  if (request.shard && std::none_of(shards.begin(), shards.end(), [&](const ShardPlan& s) {
        return s.index == *request.shard;
      })) {
    return Failure::Usage("no shard " + std::to_string(*request.shard) + " (shards are 0-" +
                          std::to_string(shards.back().index) + "; shardctl status lists them)");
  }
  std::optional<Engine> engine;
  if (request.engine_given) {
    auto resolved = ResolveEngine(request.spec.engine);
    if (!resolved.ok()) return Failure::Usage(resolved.error());
    engine = std::move(resolved).value();
  }
  // --engine E is refused before anything stops when E cannot read the data of a shard it would
  // run (each shard's engine: they differ while a switch is under way).
  for (const ShardPlan& shard : shards) {
    if (!engine || request.discard_data) break;
    if (request.shard && shard.index != *request.shard) continue;
    const Engine& running = EngineOf(deployment, shard.index);
    if (const std::string problem = DataFormatProblem(running, *engine); !problem.empty()) {
      return Failure::Usage("--engine " + engine->path.string() + ": " + problem +
                            "; nothing was restarted (keep " + running.Name() + " " +
                            running.version +
                            ", or pass --discard-data to start the restarted shards empty)");
    }
  }
  // A restarted shard loads the files at the recorded paths: ones no peer accepts would keep it
  // out of the cluster.
  if (deployment.tls.enabled()) {
    if (auto files = CheckTlsFiles(target.dir, deployment.tls); !files.ok()) {
      return Failure::Usage("a restarted shard loads the TLS files at the recorded paths: " +
                            files.error().message() +
                            "; nothing was restarted (put working files there first; reload-tls "
                            "checks them the same way)");
    }
  }
  return engine;
}

// Ctrl-C: the shard under way was seen through (or left running, its writes resumed); no later
// shard is touched.
Failure Interrupted(const RestartReport& report, std::optional<int> next,
                    const std::string& failure) {
  std::string message =
      "interrupted after " + std::to_string(report.restarted.size()) + " shard(s) restarted";
  if (next) message += "; shard " + std::to_string(*next) + " and later were not touched";
  if (!failure.empty()) message += " (" + failure + ")";
  return Failure(Fault::kInterrupted, message);
}

}  // namespace

Outcome<RestartReport> Restart(const RestartRequest& request) {
  auto target = LoadTarget(request.spec, {.supervisor = true});
  if (!target.ok()) return target.error();
  auto engine = CheckRestartRequest(request, *target);
  if (!engine.ok()) return engine.error();
  const RestartOptions options{
      .engine = *engine, .discard_data = request.discard_data, .interrupted = request.interrupted};
  auto lock = DataLock::Take(target->dir, "restart", DataLock::Kind::kRestarts);
  if (!lock.ok()) return Classify(lock.error());
  // The data too: a shard stopped under an import, a scale, a move or a backup fails that command
  // midway (a live import had to be run again), and one of those started during a rolling restart
  // met shards going down (CLUSTERDOWN from MIGRATE). Taken after the restart lock, so a second
  // restart is told a restart runs.
  auto data_lock = DataLock::Take(target->dir, "restart");
  if (!data_lock.ok()) return Classify(data_lock.error());
  const auto interrupted = [&request] {
    return request.interrupted != nullptr && request.interrupted->load();
  };
  auto supervisor = AskSupervisor(target->dir, {{"cmd", "status"}}, kStatusTimeout);
  const bool records_each_engine = supervisor.ok() && supervisor->value("shard_engines", false);
  RestartReport report;
  for (const auto& planned : target->deployment->plan.shards) {
    const int index = planned.index;
    if (request.shard && index != *request.shard) continue;
    if (interrupted()) return Interrupted(report, index, "");
    RestartOptions for_shard = options;
    for_shard.roll_back_engine = records_each_engine || report.restarted.empty();
    auto restart = RestartShard(target->access, target->dir, *target->deployment, index, for_shard);
    const std::string where = "shard " + std::to_string(index);
    if (!restart.ok() && interrupted()) {
      return Interrupted(report, std::nullopt, where + ": " + restart.error().message());
    }
    if (!restart.ok()) return restart.error().Context(where);
    if (request.on_restarted) request.on_restarted(*restart);
    report.restarted.push_back(std::move(restart).value());
  }
  return report;
}

}  // namespace shardctl::launcher
