// Formation steps that joining a cluster (join.cc) shares with forming one (formation.cc).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

// One connection per node, in order; the first that fails is the error.
common::Result<std::vector<RedisConnection>> ConnectAll(const Access& access,
                                                        const std::vector<ClusterNode>& nodes);

// Each node's ID; errors when a node already knows other nodes or owns slots (not fresh).
common::Result<std::vector<std::string>> CheckFreshAndGetIds(
    std::vector<RedisConnection>& connections);

// Sends batch i on connection i, again on a new connection with a longer timeout when its
// replies do not come (for commands that may be sent twice, like MEET), until `deadline`. Error
// replies fail at once.
common::Status RunRepeatableBatches(const std::vector<ClusterNode>& nodes,
                                    std::vector<RedisConnection>& connections,
                                    const std::vector<std::vector<Command>>& batches,
                                    const char* step,
                                    std::chrono::steady_clock::time_point deadline);

// Node i of `nodes` (on connections[i]) MEETs targets[j] for every j with include(i, j), giving
// the bus port explicitly; sent again on a new connection when the replies do not come.
common::Status MeetTargets(const std::vector<ClusterNode>& nodes,
                           std::vector<RedisConnection>& connections,
                           const std::vector<ClusterNode>& targets,
                           const std::function<bool(size_t, size_t)>& include,
                           std::chrono::steady_clock::time_point deadline);

// A new connection to `node` with `timeout` (and the access `connection` used) in place of
// `connection`, after a short pause.
void Reconnect(const ClusterNode& node, RedisConnection& connection,
               std::chrono::milliseconds timeout);

// True when every connection's node lists `expected` nodes (exactly, or at least) with their
// handshakes finished. A node that does not answer is not done yet (`last_error` says why).
bool AllHandshakesDone(const std::vector<ClusterNode>& nodes,
                       std::vector<RedisConnection>& connections, size_t expected,
                       Membership membership, std::string& last_error);

}  // namespace shardctl::launcher
