// `shardctl restart SHARD` and `shardctl restart --rolling [--engine E]`: the supervisor restarts
// one shard at a time; this side waits until the shard answers and the cluster is healthy again.
#include <iostream>
#include <thread>

#include "launcher/cli/commands.h"
#include "launcher/cluster/formation.h"
#include "launcher/engine/engine.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kShardBackTimeout = std::chrono::seconds(60);
constexpr auto kRequestTimeout = std::chrono::seconds(5);

// Waits until the supervisor reports shard `index` running as a new process that answers.
Result<int> WaitForNewProcess(const DeploymentDir& dir, int index, const json& old_pid) {
  auto deadline = Clock::now() + kShardBackTimeout;
  while (Clock::now() < deadline) {
    auto reply = AskSupervisor(dir, {{"cmd", "status"}}, kRequestTimeout);
    if (!reply.ok()) return reply.error();
    const json& shard = (*reply)["shards"][index];
    if (shard["pid"].is_number() && shard["pid"] != old_pid && shard.value("state", "") == "ok") {
      return shard["pid"].get<int>();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Error("shard " + std::to_string(index) + " did not come back within " +
               std::to_string(kShardBackTimeout.count()) + " s (see shardctl logs " +
               std::to_string(index) + ")");
}

Result<json> RestartOne(const DeploymentDir& dir, const Plan& plan, int index, const json& engine) {
  auto started = Clock::now();
  json request = {{"cmd", "restart"}, {"shard", index}};
  if (!engine.is_null()) request["engine"] = engine;
  auto reply = AskSupervisor(dir, request, kRequestTimeout);
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) return Error(reply->value("error", "restart refused"));
  json old_pid = (*reply)["old_pid"];
  auto new_pid = WaitForNewProcess(dir, index, old_pid);
  if (!new_pid.ok()) return new_pid.error();
  auto healthy = WaitUntilHealthy(RunningNodesOf(plan), Clock::now() + kShardBackTimeout,
                                  [] { return common::Ok(); });
  if (!healthy.ok()) return healthy.error().Context("the cluster did not become healthy");
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return json{{"shard", index}, {"old_pid", old_pid}, {"new_pid", *new_pid}, {"ms", ms.count()}};
}

}  // namespace

int RunRestart(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = true});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  auto& [spec, dir, deployment] = std::get<Target>(loaded);
  int count = static_cast<int>(deployment->plan.shards.size());
  if (invocation.shard && *invocation.shard >= count) {
    PrintError("restart: no shard " + std::to_string(*invocation.shard) + " (shards are 0-" +
               std::to_string(count - 1) + ")");
    return kExitUsage;
  }
  json engine;
  bool engine_given = std::any_of(invocation.settings.begin(), invocation.settings.end(),
                                  [](const Setting& s) { return s.key == "engine"; });
  if (engine_given) {
    auto resolved = ResolveEngine(spec.engine);
    if (!resolved.ok()) {
      PrintError(resolved.error().message());
      return kExitUsage;
    }
    engine = {{"kind", resolved->Name()},
              {"path", resolved->path.string()},
              {"version", resolved->version}};
  }
  std::vector<int> indices;
  for (int i = 0; i < count; ++i) {
    if (invocation.rolling || i == *invocation.shard) indices.push_back(i);
  }
  json results = json::array();
  for (int index : indices) {
    auto result = RestartOne(dir, deployment->plan, index, engine);
    if (!result.ok()) {
      PrintError("restart of shard " + std::to_string(index) + ": " + result.error().message());
      return kExitRuntime;
    }
    if (!invocation.json) {
      std::cout << "shard " << index << " restarted (pid " << (*result)["old_pid"].dump() << " -> "
                << (*result)["new_pid"].dump() << "), cluster healthy after "
                << (*result)["ms"].get<int64_t>() << " ms\n"
                << std::flush;
    }
    results.push_back(*result);
  }
  if (invocation.json) {
    std::cout << json{{"name", spec.name}, {"restarted", results}}.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
