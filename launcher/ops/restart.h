// What `shardctl restart` does below the command line: the supervisor restarts one shard; this
// side waits until the shard answers as a new process and the cluster is healthy again. Nothing
// here prints.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

// One shard restarted.
struct ShardRestart {
  int shard = 0;
  std::optional<pid_t> old_pid;  // none when the shard was waiting to be restarted anyway
  pid_t new_pid = 0;
  std::chrono::milliseconds took{0};  // until every node reported cluster_state:ok
};

// Asks the deployment's supervisor to restart shard `index` of `plan` (on `engine` when given,
// which it then records), waits up to 60 s for the new process to answer and then for every node
// to report cluster_state:ok. Errors say which step failed.
common::Result<ShardRestart> RestartShard(const DeploymentDir& dir, const Plan& plan, int index,
                                          const std::optional<Engine>& engine);

}  // namespace shardctl::launcher
