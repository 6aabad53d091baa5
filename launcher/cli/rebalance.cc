// `shardctl rebalance-roles`: after failovers, moves the primary role back to the shards the plan
// made primaries (which sit where the plan spread them over cores and NUMA nodes), one at a time,
// with a graceful CLUSTER FAILOVER: the old primary pauses writes only while its replica catches
// up, then redirects clients; no write is refused.
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/cluster/failover.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {

int RunRebalanceRoles(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = false});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  const Plan& plan = deployment->plan;
  nlohmann::json moved = nlohmann::json::array();
  for (const auto& shard : plan.shards) {
    if (shard.role != Role::kPrimary) continue;
    auto connection = RedisConnection::Connect(plan.bind, shard.port, std::chrono::seconds(2));
    auto info = connection.ok() ? connection->Run({"INFO", "replication"})
                                : common::Result<std::string>(connection.error());
    if (!info.ok()) {
      PrintError("shard " + std::to_string(shard.index) + ": " + info.error().message() +
                 " (is it running? see shardctl status)");
      return kExitRuntime;
    }
    if (InfoField(*info, "role") == "master") continue;
    auto promoted =
        PromoteReplica(plan.bind, shard.port, FailoverMode::kGraceful, std::chrono::seconds(20));
    if (!promoted.ok()) {
      PrintError("shard " + std::to_string(shard.index) + ": " + promoted.error().message());
      return kExitRuntime;
    }
    moved.push_back(shard.index);
    if (!invocation.json) {
      std::cout << "shard " << shard.index << " (port " << shard.port << ") is primary again\n";
    }
  }
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec.name}, {"moved", moved}}.dump(2) << "\n";
  } else if (moved.empty()) {
    std::cout << "every planned primary is primary; nothing to move\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
