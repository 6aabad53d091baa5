// `shardctl rebalance-roles`: after failovers, moves the primary role back to the shards the plan
// made primaries (ops/rebalance_roles.h); this file parses and prints.
#include "launcher/ops/rebalance_roles.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {

int RunRebalanceRoles(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto moved = RebalanceRoles(*spec, [&](const ShardPlan& shard) {
    if (!invocation.json) {
      std::cout << "shard " << shard.index << " (port " << shard.port << ") is primary again\n";
    }
  });
  if (!moved.ok()) return Fail(moved.error());
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec->name}, {"moved", *moved}}.dump(2) << "\n";
  } else if (moved->empty()) {
    std::cout << "every planned primary is primary; nothing to move\n";
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
