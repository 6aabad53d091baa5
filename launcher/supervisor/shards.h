// Starting and stopping a deployment's shard processes.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/formation.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

using Progress = std::function<void(const std::string&)>;

struct StartReport {
  std::vector<ProcessId> shards;  // by shard index
  std::vector<std::string> node_ids;
  std::chrono::milliseconds spawn{0};       // fork+exec of every shard
  std::chrono::milliseconds first_ping{0};  // until every shard answered PING
  std::chrono::milliseconds formation{0};   // slots + meet + until every node is healthy
  std::chrono::milliseconds total{0};
  bool resumed = false;   // an existing cluster came back with its data; nothing was formed
  int joined_nodes = 0;   // --join: the other hosts' nodes this deployment met
  int replica_moves = 0;  // --join: replicas (ours or theirs) that now follow another primary
};

// Starts every shard pinned to its CPUs (with persistence, and when every shard still has its
// nodes.conf, resumes the recorded cluster and its data instead of forming a new one) and bound to
// its NUMA node, checks the pinning took, waits for PING and forms the cluster. `abort_check` is
// polled while waiting (a stop request). On any failure every shard this call started is stopped,
// and the error names the shard and shows the end of its log.
common::Result<StartReport> StartDeployment(const Access& access, const Deployment& deployment,
                                            const DeploymentDir& dir, const Progress& progress,
                                            const AbortCheck& abort_check);

// Writes the shard's config and spawns it pinned and bound, recording its pid file. `fresh` also
// removes nodes.conf (a new cluster); a restart keeps it, so the shard keeps its node ID, slots and
// epoch and rejoins the cluster by itself.
common::Result<ProcessId> SpawnShard(const Deployment& deployment, const DeploymentDir& dir,
                                     const ShardPlan& shard, bool fresh);

// With the rdb profile, makes the next SIGTERM save: shards have no save schedule of their own
// (the supervisor schedules forks), and Redis saves at shutdown only when one is set.
void ArmSaveOnShutdown(const Access& access, const Deployment& deployment);
// The same for one shard about to be stopped (a restart): the others keep no save points (with
// them, a failed snapshot would make a shard refuse every write: stop-writes-on-bgsave-error).
void ArmSaveOnShutdown(const Access& access, const Deployment& deployment, const ShardPlan& shard);

// Checks /proc/PID/status Cpus_allowed_list against the plan; the error says what differs.
common::Status VerifyPinning(const ShardPlan& shard, pid_t pid);

}  // namespace shardctl::launcher
