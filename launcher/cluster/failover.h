// Moving the primary role between a shard and its replicas.
//
// The supervisor never restarts a dead primary that has a live, synced replica as a primary: with
// persistence none it would come back empty and its replica would resync that emptiness; with
// rdb it would come back with an older snapshot. It promotes the replica first (TAKEOVER: the old
// primary is known dead, its process is gone, so no agreement is needed), then restarts the dead
// process, which finds its slots owned at a higher epoch and rejoins as a replica.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/model/plan.h"

namespace shardctl::launcher {

// The node ID on the "myself" line of a nodes.conf, or nullopt (also when it does not parse).
std::optional<std::string> MyselfId(const std::string& nodes_conf);

// Where the replicas of `primary_id` that are not flagged failing listen (CLUSTER NODES lines read
// by common::ParseClusterNodes); a replica on another host keeps its host, one whose line has no
// host yet gets `local_host`.
std::vector<common::Endpoint> ReplicaEndpoints(const std::vector<common::NodeLine>& nodes,
                                               const std::string& primary_id,
                                               const std::string& local_host);

enum class FailoverMode { kGraceful, kTakeover };

// Why a replica answering INFO replication with `replication_info` must not take its dead
// primary's place, or nullopt when it may. A replica still in a full sync, or one that has not
// finished a sync since it started (it holds only what it loaded from its own disk), would serve
// older data as the newest: with an AOF the dead primary's own files hold every acknowledged
// write, and the primary, restarted from them, would resync from the replica and lose them.
std::optional<std::string> WhyNotPromotable(const std::string& replication_info);

// Makes the replica at host:port a primary (CLUSTER FAILOVER [TAKEOVER]) and waits until it
// reports role:master, at most `timeout`.
common::Status PromoteReplica(const Access& access, const std::string& host, int port,
                              FailoverMode mode, std::chrono::milliseconds timeout);

// After failovers, gives the primary role back to every shard the plan made a primary (they sit
// where the plan spread them over cores and NUMA nodes), one at a time, with a graceful CLUSTER
// FAILOVER: the old primary pauses writes only while its replica catches up, so no write is
// refused. `moved` hears of each shard once it is primary again. Returns the shards moved; the
// error names the shard that could not be asked or promoted (the shards before it stay moved).
common::Result<std::vector<int>> RestorePlannedPrimaries(
    const Access& access, const Plan& plan, const std::function<void(const ShardPlan&)>& moved);

}  // namespace shardctl::launcher
