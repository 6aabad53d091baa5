// Moving the primary role between a shard and its replicas.
//
// The supervisor never restarts a dead primary that has a live replica as a primary: with
// persistence none it would come back empty and its replica would resync that emptiness; with
// rdb it would come back with an older snapshot. It promotes the replica first (TAKEOVER: the old
// primary is known dead, its process is gone, so no agreement is needed), then restarts the dead
// process, which finds its slots owned at a higher epoch and rejoins as a replica.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"

namespace shardctl::launcher {

// The node ID on the "myself" line of a nodes.conf, or nullopt (also when it does not parse).
std::optional<std::string> MyselfId(const std::string& nodes_conf);

// Ports of the replicas of `primary_id` that are not flagged failing (CLUSTER NODES lines read by
// common::ParseClusterNodes).
std::vector<int> ReplicaPorts(const std::vector<common::NodeLine>& nodes,
                              const std::string& primary_id);

enum class FailoverMode { kGraceful, kTakeover };

// Makes the replica at host:port a primary (CLUSTER FAILOVER [TAKEOVER]) and waits until it
// reports role:master, at most `timeout`.
common::Status PromoteReplica(const std::string& host, int port, FailoverMode mode,
                              std::chrono::milliseconds timeout);

}  // namespace shardctl::launcher
