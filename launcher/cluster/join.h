// Joining fresh shards to a cluster that runs on other hosts (`shardctl up --join HOST:PORT`).
//
//   seed ── CLUSTER NODES ──▶ the other hosts' nodes (failing ones left out; a failed node at
//      │                      one of our addresses, an earlier run of this host, is forgotten)
//   our nodes ── MEET every other node (ours and theirs), wait for the handshakes, MEET again
//      │         (so slot owners' headers reach us at once, as in formation)
//   replicas ── PlanReplicaHomes (replica_homes.h) over every node: our replicas follow other
//      │        hosts' primaries, other hosts' replicas that share a host with their primary move
//      │        to ours ── CLUSTER REPLICATE on each, retried until it knows its new primary
//   wait until our nodes and theirs agree on the slot map and every replica's link is up
//
// Our primaries own no slots yet: `up` gives them their share with slot moves afterwards.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/formation.h"
#include "launcher/cluster/replica_homes.h"

namespace shardctl::launcher {

struct JoinReport {
  std::vector<std::string> node_ids;   // ours, in the order of the nodes given
  int other_nodes = 0;                 // the other hosts' nodes we met
  std::vector<std::string> forgotten;  // IDs of our earlier selves the cluster forgot
  std::vector<ReplicaMove> replica_moves;
};

// Joins `nodes` (fresh: each knows only itself and owns no slots; replica_of says which of them
// are replicas) to the cluster `seed` belongs to. `our_host` is the address the cluster knows our
// nodes by (the announce or bind address). Errors name the node and the step; a seed that does
// not answer, is one of ours, or serves no slots is an error before anything is changed.
common::Result<JoinReport> JoinCluster(const Access& access, const std::vector<ClusterNode>& nodes,
                                       const std::string& our_host, const common::Endpoint& seed,
                                       std::chrono::steady_clock::time_point deadline,
                                       const AbortCheck& abort_check);

}  // namespace shardctl::launcher
