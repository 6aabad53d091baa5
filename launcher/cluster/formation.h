// Forming and checking a Redis Cluster over RESP.
//
// Formation, fastest correct order for fresh nodes:
//   1. every node: CLUSTER SET-CONFIG-EPOCH i+1 (distinct epochs: no collision resolution round)
//      and CLUSTER ADDSLOTSRANGE for its planned ranges;
//   2. every pair meets once (node i MEETs every j > i, with the explicit bus port), so no node
//      waits for gossip to learn of the others;
//   3. replicas: CLUSTER REPLICATE <their primary's id>;
//   4. poll all nodes until each reports cluster_state:ok, knows every node, all agree on the slot
//      map, and every replica reports master_link_status:up. (Redis keeps a fresh primary in state
//      fail for ~2 s after its start — its "writable delay" — so that part of the wait is the
//      engine's, not ours.)
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "common/slots.h"
#include "launcher/cluster/access.h"
#include "launcher/model/plan.h"

namespace shardctl::launcher {

struct ClusterNode {
  std::string host;
  int port = 0;
  int bus_port = 0;
  std::vector<common::SlotRange> slots;  // empty for replicas
  std::optional<int> replica_of;         // replicas: position of their primary in the node list
};

struct FormationReport {
  std::vector<std::string> node_ids;  // in the order of the nodes given
  std::chrono::milliseconds slots_and_meet{0};
  std::chrono::milliseconds until_healthy{0};
};

// Called between polls; returning an error aborts the wait (e.g. "shard 3 exited").
using AbortCheck = std::function<common::Status()>;

// Waits until every node answers PING, or `deadline`.
common::Status WaitForPing(const Access& access, const std::vector<ClusterNode>& nodes,
                           std::chrono::steady_clock::time_point deadline,
                           const AbortCheck& abort_check);

// Forms a cluster of fresh nodes (each knows only itself and owns no slots) and waits until it is
// healthy. Errors name the node and the step.
common::Result<FormationReport> FormCluster(const Access& access,
                                            const std::vector<ClusterNode>& nodes,
                                            std::chrono::steady_clock::time_point deadline,
                                            const AbortCheck& abort_check);

// How many nodes each node must know: exactly the nodes given (a cluster just formed of them), or
// at least those (a running cluster, which other hosts' nodes may have joined).
enum class Membership { kExactly, kAtLeast };

// Polls every node until all report cluster_state:ok, know every node, agree on the slot map and
// every replica's link is up; the error says what was still missing at the deadline.
common::Status WaitUntilHealthy(const Access& access, const std::vector<ClusterNode>& nodes,
                                std::chrono::steady_clock::time_point deadline,
                                const AbortCheck& abort_check,
                                Membership membership = Membership::kAtLeast);

// Every node at `nodes` forgets the nodes `ids` (CLUSTER FORGET; a node that does not know one,
// or already forgot it, is fine). Sent to each within seconds, so no node learns them back by
// gossip during Redis' 60 s ban. The error names the node that refused or did not answer.
common::Status ForgetNodes(const Access& access, const std::vector<common::Endpoint>& nodes,
                           const std::vector<std::string>& ids);

// The cluster nodes of a plan (address, bus port, slots, planned roles), for formation.
std::vector<ClusterNode> ClusterNodesOf(const Plan& plan);

// The same without planned roles, for health checks of a running cluster: failovers may have
// swapped primaries and replicas since formation (every replica's link must still be up).
std::vector<ClusterNode> RunningNodesOf(const Plan& plan);

// The cluster as one node sees it.
struct NodeView {
  bool reachable = false;
  std::string error;          // why not reachable
  std::string cluster_state;  // "ok" / "fail"
  int known_nodes = 0;
  int slots_assigned = 0;
  std::string slot_map;            // normalised owner-of-slots description, comparable across nodes
  std::string role;                // "master" / "slave", from INFO replication
  std::string master_link_status;  // replicas: "up" / "down"
};

// Asks one node for its view (CLUSTER INFO + CLUSTER NODES + INFO replication).
NodeView ViewFrom(const Access& access, const ClusterNode& node, std::chrono::milliseconds timeout);

// Normalises CLUSTER NODES output to "id:ranges" lines of primaries that own slots, sorted, so two
// nodes agree exactly when their strings are equal. Handshake and migration markers are ignored.
std::string NormalizeSlotMap(const std::string& cluster_nodes);

}  // namespace shardctl::launcher
