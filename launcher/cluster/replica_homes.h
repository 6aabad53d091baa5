// Which primary each replica should follow once a cluster spans hosts: the pure half of placing
// replicas apart from their primaries across hosts. Nodes in, REPLICATE moves out; no sockets, so
// every rule is table-tested.
//
// Rules:
//   - A replica already on another host than its primary stays where it is.
//   - Every other replica (on its primary's host, or following a primary that is gone) may move.
//     Each primary should end with its share of the replicas (total / primaries, rounded up); a
//     movable replica goes to the primary on another host that has the fewest replicas, as long as
//     that one is below its share; otherwise it stays on its host, with the primary there that
//     has the fewest (its own when tied), so no primary is left without a replica to fill another.
//   - Then a replica left beside its primary swaps homes with another replica when both end apart.
//   - Nodes are taken in the order given, so the result is the same on every run.
#pragma once

#include <string>
#include <vector>

namespace shardctl::launcher {

struct PlacedNode {
  std::string id;
  std::string host;  // where it runs, as the cluster announces it
  bool primary = false;
  std::string follows;  // replicas: the primary's ID now ("" when none)
};

struct ReplicaMove {
  std::string replica;  // node ID
  std::string primary;  // the node ID it should follow
  friend bool operator==(const ReplicaMove&, const ReplicaMove&) = default;
};

// The moves, in node order; empty when every replica already sits well.
std::vector<ReplicaMove> PlanReplicaHomes(const std::vector<PlacedNode>& nodes);

}  // namespace shardctl::launcher
