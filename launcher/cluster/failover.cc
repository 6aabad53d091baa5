#include "launcher/cluster/failover.h"

#include <algorithm>
#include <thread>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

std::optional<std::string> MyselfId(const std::string& nodes_conf) {
  auto nodes = common::ParseClusterNodes(nodes_conf);
  if (!nodes.ok()) return std::nullopt;
  const common::NodeLine* myself = common::FindMyself(*nodes);
  if (myself == nullptr) return std::nullopt;
  return myself->id;
}

std::vector<common::Endpoint> ReplicaEndpoints(const std::vector<common::NodeLine>& nodes,
                                               const std::string& primary_id,
                                               const std::string& local_host) {
  std::vector<common::Endpoint> endpoints;
  for (const auto& node : nodes) {
    if (node.master_id == primary_id && !node.IsPrimary() && !node.Failing()) {
      endpoints.push_back(
          {node.address.host.empty() ? local_host : node.address.host, node.address.port});
    }
  }
  return endpoints;
}

std::optional<std::string> WhyNotPromotable(const std::string& replication_info) {
  if (InfoField(replication_info, "role") == "master") return std::nullopt;
  if (InfoField(replication_info, "master_sync_in_progress") == "1") {
    return "it is still copying its primary's data (a full sync is in progress)";
  }
  // The three engines say -1 while no sync has completed since the process started (measured on
  // Redis 7.0, Redis 8.2 and Valkey 9.1); once one has, the seconds since the link went down.
  if (InfoField(replication_info, "master_link_down_since_seconds") == "-1") {
    return "it has not finished a sync with its primary since it started, so it holds only the "
           "older data it loaded from its own disk";
  }
  return std::nullopt;
}

common::Status PromoteReplica(const Access& access, const std::string& host, int port,
                              FailoverMode mode, std::chrono::milliseconds timeout) {
  auto connection = RedisConnection::Connect(access, host, port, timeout);
  if (!connection.ok()) return connection.error();
  Command failover = {"CLUSTER", "FAILOVER"};
  if (mode == FailoverMode::kTakeover) failover.push_back("TAKEOVER");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // A graceful failover that cannot complete (the primary does not yet see this replica, say,
  // right after it rejoined) is dropped by Redis after 5 s (CLUSTER_MF_TIMEOUT): ask again.
  constexpr auto kAttempt = std::chrono::milliseconds(5500);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto started = connection->Run(failover); !started.ok()) return started.error();
    auto attempt_end = std::min(deadline, std::chrono::steady_clock::now() + kAttempt);
    while (std::chrono::steady_clock::now() < attempt_end) {
      auto info = connection->Run({"INFO", "replication"});
      if (info.ok() && InfoField(*info, "role") == "master") return common::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  return Error(host + ":" + std::to_string(port) + " did not become primary within " +
               std::to_string(timeout.count()) + " ms");
}

Result<std::vector<int>> RestorePlannedPrimaries(
    const Access& access, const Plan& plan, const std::function<void(const ShardPlan&)>& moved) {
  std::vector<int> indices;
  for (const auto& shard : plan.shards) {
    if (shard.role != Role::kPrimary) continue;
    auto connection =
        RedisConnection::Connect(access, plan.bind, shard.port, std::chrono::seconds(2));
    auto info = connection.ok() ? connection->Run({"INFO", "replication"})
                                : Result<std::string>(connection.error());
    if (!info.ok()) {
      return Error("shard " + std::to_string(shard.index) + ": " + info.error().message() +
                   " (is it running? see shardctl status)");
    }
    if (InfoField(*info, "role") == "master") continue;
    auto promoted = PromoteReplica(access, plan.bind, shard.port, FailoverMode::kGraceful,
                                   std::chrono::seconds(20));
    if (!promoted.ok()) return promoted.error().Context("shard " + std::to_string(shard.index));
    indices.push_back(shard.index);
    moved(shard);
  }
  return indices;
}

}  // namespace shardctl::launcher
