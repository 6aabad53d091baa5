// `shardctl rebalance-roles`: after failovers, moves the primary role back to the shards the plan
// made primaries, one at a time, with a graceful CLUSTER FAILOVER (cluster/failover.h).
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/cluster/failover.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {

int RunRebalanceRoles(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = false});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  auto moved = RestorePlannedPrimaries(deployment->plan, [&](const ShardPlan& shard) {
    if (!invocation.json) {
      std::cout << "shard " << shard.index << " (port " << shard.port << ") is primary again\n";
    }
  });
  if (!moved.ok()) {
    PrintError(moved.error().message());
    return kExitRuntime;
  }
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec.name}, {"moved", *moved}}.dump(2) << "\n";
  } else if (moved->empty()) {
    std::cout << "every planned primary is primary; nothing to move\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
