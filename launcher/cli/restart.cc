// `shardctl restart SHARD` and `shardctl restart --rolling [--engine E]`: one shard at a time
// through the supervisor (ops/restart.h), each waited for until the cluster is healthy again.
#include "launcher/ops/restart.h"

#include <algorithm>
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/engine/engine.h"
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
  return {{"shard", restart.shard},
          {"old_pid", restart.old_pid ? json(*restart.old_pid) : json(nullptr)},
          {"new_pid", restart.new_pid},
          {"ms", restart.took.count()}};
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
  json results = json::array();
  for (const auto& planned : shards) {
    const int index = planned.index;
    if (!invocation.rolling && index != *invocation.shard) continue;
    auto restart =
        RestartShard(dir, deployment->plan, index, std::get<std::optional<Engine>>(engine));
    if (!restart.ok()) {
      PrintError("restart of shard " + std::to_string(index) + ": " + restart.error().message());
      return kExitRuntime;
    }
    json result = RestartJson(*restart);
    if (!invocation.json) {
      std::cout << "shard " << index << " restarted (pid " << result["old_pid"].dump() << " -> "
                << result["new_pid"].dump() << "), cluster healthy after " << restart->took.count()
                << " ms\n"
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
