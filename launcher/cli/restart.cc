// `shardctl restart SHARD` and `shardctl restart --rolling [--engine E]`: one shard at a time
// through the supervisor (ops/restart.h), each waited for until the cluster is healthy again.
#include "launcher/ops/restart.h"

#include <algorithm>
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/engine/engine.h"
#include "launcher/ops/reload_tls.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

// The engine named by --engine (a rolling upgrade), nullopt without one, or the exit code.
std::variant<std::optional<Engine>, int> RequestedEngine(const Invocation& invocation,
                                                         const Spec& spec) {
  bool given = std::any_of(invocation.settings.begin(), invocation.settings.end(),
                           [](const Setting& s) { return s.key == "engine"; });
  if (!given) return std::optional<Engine>();
  auto engine = ResolveEngine(spec.engine);
  if (!engine.ok()) {
    PrintError(engine.error().message());
    return kExitUsage;
  }
  return std::optional<Engine>(std::move(engine).value());
}

json RestartJson(const ShardRestart& restart) {
  auto optional = [](const std::optional<long long>& value) {
    return value ? json(*value) : json(nullptr);
  };
  return {
      {"shard", restart.shard},
      {"old_pid", restart.old_pid ? json(*restart.old_pid) : json(nullptr)},
      {"new_pid", restart.new_pid},
      {"ms", restart.took.count()},
      {"data", restart.data},
      {"keys_before", optional(restart.keys_before)},
      {"keys_after", optional(restart.keys_after)},
      {"write_pause_ms", restart.write_pause ? json(restart.write_pause->count()) : json(nullptr)}};
}

// "keys kept: saved 1000 keys, loaded 1000" — what happened to the shard's data, for people.
std::string DataNote(const ShardRestart& restart) {
  auto keys = [](const std::optional<long long>& count) {
    return count ? std::to_string(*count) : std::string("?");
  };
  if (restart.data == "handed-over") {
    return "its replica took over its " + keys(restart.keys_before) + " keys first";
  }
  if (restart.data == "saved") {
    return "saved " + keys(restart.keys_before) + " keys with writes held " +
           std::to_string(restart.write_pause ? restart.write_pause->count() : 0) + " ms, loaded " +
           keys(restart.keys_after);
  }
  if (restart.data == "aof") {
    return "AOF replayed: " + keys(restart.keys_before) + " keys before, " +
           keys(restart.keys_after) + " after";
  }
  if (restart.data == "resynced") return "a replica: resynced from its primary";
  if (restart.data == "discarded") return "data discarded as asked (--discard-data)";
  return "it was not running";
}

// --engine E against the engine the deployment runs: refused before anything stops when E
// cannot read the data the running engine writes. Returns the exit code, or kExitOk.
int CheckEngineChange(const Deployment& deployment, const std::optional<Engine>& engine,
                      bool discard_data) {
  if (!engine || discard_data) return kExitOk;
  const std::string problem = DataFormatProblem(deployment.engine, *engine);
  if (problem.empty()) return kExitOk;
  PrintError("restart --engine " + engine->path.string() + ": " + problem +
             "; nothing was restarted (keep " + deployment.engine.Name() + " " +
             deployment.engine.version +
             ", or pass --discard-data to start the restarted shards empty)");
  return kExitUsage;
}

// Ctrl-C: the shard under way was seen through (or left running, its writes resumed); no later
// shard is touched. Exit 130, as a shell reports an interrupted command.
int ReportInterrupted(const json& done, int next) {
  std::string message =
      "restart: interrupted after " + std::to_string(done.size()) + " shard(s) restarted";
  if (next >= 0) message += "; shard " + std::to_string(next) + " and later were not touched";
  PrintError(message);
  return kExitInterrupted;
}

}  // namespace

int RunRestart(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = true});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  const auto& shards = deployment->plan.shards;
  if (invocation.shard && std::none_of(shards.begin(), shards.end(), [&](const ShardPlan& s) {
        return s.index == *invocation.shard;
      })) {
    PrintError("restart: no shard " + std::to_string(*invocation.shard) + " (shards are 0-" +
               std::to_string(shards.back().index) + "; shardctl status lists them)");
    return kExitUsage;
  }
  auto engine = RequestedEngine(invocation, spec);
  if (auto* code = std::get_if<int>(&engine)) return *code;
  const RestartOptions options{.engine = std::get<std::optional<Engine>>(engine),
                               .discard_data = invocation.discard_data,
                               .interrupted = &InterruptRequested()};
  if (int code = CheckEngineChange(*deployment, options.engine, options.discard_data);
      code != kExitOk) {
    return code;
  }
  // A restarted shard loads the files at the recorded paths: ones no peer accepts would keep it
  // out of the cluster.
  if (deployment->tls.enabled()) {
    if (auto files = CheckTlsFiles(dir, deployment->tls); !files.ok()) {
      PrintError("restart: a restarted shard loads the TLS files at the recorded paths: " +
                 files.error().message() +
                 "; nothing was restarted (put working files there first; reload-tls checks "
                 "them the same way)");
      return kExitUsage;
    }
  }
  auto lock = RestartLock::Take(dir);
  if (!lock.ok()) {
    PrintError("restart: " + lock.error().message());
    return kExitRuntime;
  }
  CatchInterrupt();
  json results = json::array();
  for (const auto& planned : shards) {
    const int index = planned.index;
    if (!invocation.rolling && index != *invocation.shard) continue;
    if (InterruptRequested().load()) return ReportInterrupted(results, index);
    auto restart = RestartShard(dir, *deployment, index, options);
    if (!restart.ok() && InterruptRequested().load()) {
      PrintError("restart of shard " + std::to_string(index) + ": " + restart.error().message());
      return ReportInterrupted(results, -1);
    }
    if (!restart.ok()) {
      PrintError("restart of shard " + std::to_string(index) + ": " + restart.error().message());
      return kExitRuntime;
    }
    json result = RestartJson(*restart);
    if (!invocation.json) {
      std::cout << "shard " << index << " restarted (pid " << result["old_pid"].dump() << " -> "
                << result["new_pid"].dump() << "; " << DataNote(*restart)
                << "), cluster healthy after " << restart->took.count() << " ms\n"
                << std::flush;
    }
    results.push_back(result);
  }
  if (invocation.json) {
    std::cout << json{{"name", spec.name}, {"restarted", results}}.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
