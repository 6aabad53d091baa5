#include "launcher/ops/restart.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "launcher/cluster/formation.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kShardBackTimeout = std::chrono::seconds(60);
constexpr auto kRequestTimeout = std::chrono::seconds(5);

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

json RestartRequest(int index, const std::optional<Engine>& engine) {
  json request = {{"cmd", "restart"}, {"shard", index}};
  if (engine) {
    request["engine"] = {
        {"kind", engine->Name()}, {"path", engine->path.string()}, {"version", engine->version}};
  }
  return request;
}

}  // namespace

Result<ShardRestart> RestartShard(const DeploymentDir& dir, const Plan& plan, int index,
                                  const std::optional<Engine>& engine) {
  auto started = Clock::now();
  auto reply = AskSupervisor(dir, RestartRequest(index, engine), kRequestTimeout);
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) return Error(reply->value("error", "restart refused"));
  const json old_pid = (*reply)["old_pid"];
  auto new_pid = WaitForNewProcess(dir, index, old_pid);
  if (!new_pid.ok()) return new_pid.error();
  auto healthy = WaitUntilHealthy(RunningNodesOf(plan), Clock::now() + kShardBackTimeout,
                                  [] { return common::Ok(); });
  if (!healthy.ok()) return healthy.error().Context("the cluster did not become healthy");
  return ShardRestart{
      .shard = index,
      .old_pid = old_pid.is_number() ? std::optional<pid_t>(old_pid.get<pid_t>()) : std::nullopt,
      .new_pid = *new_pid,
      .took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started)};
}

}  // namespace shardctl::launcher
