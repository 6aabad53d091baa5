#include "launcher/supervisor/shards.h"

#include <signal.h>

#include <thread>

#include "common/cpu_list.h"
#include "common/endpoint.h"
#include "launcher/cluster/join.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/engine/engine.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(60);

std::chrono::milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

common::Status PrepareShardDir(const Deployment& deployment, const DeploymentDir& dir,
                               const ShardPlan& shard, bool fresh) {
  auto shard_dir = dir.ShardDir(shard.index);
  if (auto status = EnsureWritableDir(shard_dir); !status.ok()) return status;
  if (fresh) {
    // A new cluster: the shard must not remember an old one.
    std::error_code ignored;
    std::filesystem::remove(shard_dir / "nodes.conf", ignored);
  }
  const std::string config = RenderShardConfig(
      EngineOf(deployment, shard.index), deployment.plan, shard,
      std::filesystem::absolute(shard_dir), deployment.durability, deployment.auth, deployment.tls);
  // Unchanged (every restart): not written again, so a full disk cannot stop the restart.
  auto current = ReadWholeFile(dir.ShardConfig(shard.index));
  if (current.ok() && *current == config) return common::Ok();
  return WriteFileAtomically(dir.ShardConfig(shard.index), config);
}

}  // namespace

Result<ProcessId> SpawnShard(const Deployment& deployment, const DeploymentDir& dir,
                             const ShardPlan& shard, bool fresh) {
  if (auto status = PrepareShardDir(deployment, dir, shard, fresh); !status.ok()) {
    return status.error();
  }
  SpawnOptions options{
      .argv = {EngineOf(deployment, shard.index).path.string(),
               std::filesystem::absolute(dir.ShardConfig(shard.index)).string()},
      .cpus = shard.cpus,
      .membind_node = shard.numa_node,
      .output = dir.ShardLog(shard.index),
      .working_dir = dir.ShardDir(shard.index),
      .new_session = true,
      .keep_fds = {},
  };
  auto process = SpawnPinned(options);
  if (!process.ok()) return process.error();
  if (auto status = WriteProcessId(dir.ShardPidFile(shard.index), *process); !status.ok()) {
    StopProcesses({*process}, std::chrono::seconds(2));
    return status.error();
  }
  return process;
}

namespace {

std::string ShardName(const ShardPlan& shard) {
  return "shard " + std::to_string(shard.index) + " (port " + std::to_string(shard.port) + ")";
}

// An abort check that notices shards exiting during start-up and says why they did.
AbortCheck ExitWatcher(const Deployment& deployment, const DeploymentDir& dir,
                       const std::vector<ProcessId>& started, const AbortCheck& outer) {
  return [&deployment, &dir, &started, outer]() -> common::Status {
    for (size_t i = 0; i < started.size(); ++i) {
      auto how = ReapIfExited(started[i].pid);
      if (!how) continue;
      const auto& shard = deployment.plan.shards[i];
      std::string tail = TailOfFile(dir.ShardLog(shard.index), 1);
      return Error(ShardName(shard) + " " + *how + " during start-up" +
                   (tail.empty() ? "" : ": \"" + tail + "\"") +
                   " (full log: " + dir.ShardLog(shard.index).string() + ")");
    }
    return outer ? outer() : common::Ok();
  };
}

}  // namespace

Result<bool> ShouldResume(const Deployment& deployment, const DeploymentDir& dir) {
  if (deployment.durability.persistence == Persistence::kNone) return false;
  std::vector<int> with, without;
  for (const auto& shard : deployment.plan.shards) {
    bool has = std::filesystem::exists(dir.ShardDir(shard.index) / "nodes.conf");
    (has ? with : without).push_back(shard.index);
  }
  if (with.empty()) return false;
  if (without.empty()) return true;
  return Error("shards " + common::FormatCpuList(without) +
               " have no cluster state (nodes.conf) while shards " + common::FormatCpuList(with) +
               " do: the deployment's state is incomplete (restore it, or start over with "
               "shardctl down --purge, which deletes the data)");
}

Result<StartReport> StartDeployment(const Access& access, const Deployment& deployment,
                                    const DeploymentDir& dir, const Progress& progress,
                                    const AbortCheck& abort_check) {
  StartReport report;
  auto resume = ShouldResume(deployment, dir);
  if (!resume.ok()) return resume.error();
  auto started_at = Clock::now();
  auto deadline = started_at + kStartTimeout;
  auto fail = [&](const common::Error& error) -> Result<StartReport> {
    StopProcesses(report.shards, std::chrono::seconds(5));
    for (const auto& shard : deployment.plan.shards) {
      std::error_code ignored;
      std::filesystem::remove(dir.ShardPidFile(shard.index), ignored);
    }
    return error;
  };
  progress("spawning " + std::to_string(deployment.plan.shards.size()) + " shards");
  for (const auto& shard : deployment.plan.shards) {
    auto process = SpawnShard(deployment, dir, shard, /*fresh=*/!*resume);
    if (!process.ok()) return fail(process.error().Context(ShardName(shard)));
    report.shards.push_back(*process);
  }
  report.spawn = Since(started_at);
  progress("spawned " + std::to_string(report.shards.size()) + " shards in " +
           std::to_string(report.spawn.count()) + " ms; waiting for them to answer PING");
  auto watcher = ExitWatcher(deployment, dir, report.shards, abort_check);
  auto nodes = ClusterNodesOf(deployment.plan);
  if (auto status = WaitForPing(access, nodes, deadline, watcher); !status.ok())
    return fail(status.error());
  report.first_ping = Since(started_at);
  progress("all " + std::to_string(report.shards.size()) + " shards answer PING; " +
           (*resume ? "resuming" : "forming") + " the cluster");
  for (size_t i = 0; i < report.shards.size(); ++i) {
    const auto& shard = deployment.plan.shards[i];
    if (auto status = VerifyPinning(shard, report.shards[i].pid); !status.ok()) {
      return fail(status.error().Context(ShardName(shard)));
    }
  }
  if (*resume) {  // the shards remember their cluster: it only has to come back together
    progress("resuming the cluster recorded in the shards' nodes.conf, with their data");
    auto running = RunningNodesOf(deployment.plan);  // roles may have moved before the stop
    if (auto healthy = WaitUntilHealthy(access, running, deadline, watcher); !healthy.ok()) {
      return fail(healthy.error());
    }
  } else if (!deployment.plan.join.empty()) {
    progress("joining the cluster of " + deployment.plan.join);
    auto seed = common::ParseEndpoint(deployment.plan.join, "");
    if (!seed.ok()) return fail(seed.error().Context("join"));
    auto joined =
        JoinCluster(access, nodes, AddressInCluster(deployment.plan), *seed, deadline, watcher);
    if (!joined.ok()) return fail(joined.error());
    report.node_ids = joined->node_ids;
    report.joined_nodes = joined->other_nodes;
    report.replica_moves = static_cast<int>(joined->replica_moves.size());
  } else {
    auto formed = FormCluster(access, nodes, deadline, watcher);
    if (!formed.ok()) return fail(formed.error());
    report.node_ids = formed->node_ids;
  }
  report.resumed = *resume;
  report.formation = Since(started_at) - report.first_ping;
  report.total = Since(started_at);
  return report;
}

namespace {

void ArmSave(const Access& access, const std::string& host, int port) {
  auto connection = RedisConnection::Connect(access, host, port, std::chrono::seconds(1));
  if (connection.ok()) (void)connection->Run({"CONFIG", "SET", "save", "3600 1"});
}

}  // namespace

void ArmSaveOnShutdown(const Access& access, const Deployment& deployment) {
  if (deployment.durability.persistence != Persistence::kRdb) return;
  for (const auto& node : ClusterNodesOf(deployment.plan)) ArmSave(access, node.host, node.port);
}

void ArmSaveOnShutdown(const Access& access, const Deployment& deployment, const ShardPlan& shard) {
  if (deployment.durability.persistence != Persistence::kRdb) return;
  ArmSave(access, deployment.plan.bind, shard.port);
}

common::Status VerifyPinning(const ShardPlan& shard, pid_t pid) {
  auto allowed = ReadAllowedCpus(pid);
  if (!allowed.ok()) return allowed.error();
  if (*allowed != shard.cpus) {
    return Error("pinned to CPUs " + common::FormatCpuList(*allowed) + " instead of " +
                 common::FormatCpuList(shard.cpus) +
                 " (a cpuset or container limit may forbid those CPUs)");
  }
  return common::Ok();
}

}  // namespace shardctl::launcher
