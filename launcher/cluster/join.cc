#include "launcher/cluster/join.h"

#include <algorithm>
#include <set>
#include <thread>

#include "common/cluster_text.h"
#include "launcher/cluster/formation_internal.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;

constexpr auto kCommandTimeout = std::chrono::milliseconds(5000);

// The cluster as the seed sees it.
struct SeedView {
  std::vector<common::NodeLine> live;  // answering nodes with an address
  std::vector<std::string> ghosts;     // failed nodes at one of our addresses, owning nothing
};

bool AtOurAddress(const common::NodeLine& line, const std::vector<ClusterNode>& nodes,
                  const std::string& our_host) {
  if (line.address.host != our_host) return false;
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const ClusterNode& node) { return node.port == line.address.port; });
}

Result<SeedView> ReadSeed(const Access& access, const common::Endpoint& seed,
                          const std::vector<ClusterNode>& nodes, const std::string& our_host,
                          const std::vector<std::string>& our_ids) {
  const std::string where = "--join " + seed.ToString();
  auto connection = RedisConnection::Connect(access, seed.host, seed.port, kCommandTimeout);
  if (!connection.ok()) {
    return Error(where + ": " + connection.error().message() +
                 " (is a cluster node listening there, and reachable from this host?)");
  }
  auto listing = connection->Run({"CLUSTER", "NODES"});
  if (!listing.ok()) return Error(where + ": CLUSTER NODES: " + listing.error().message());
  auto lines = common::ParseClusterNodes(*listing);
  if (!lines.ok()) return Error(where + ": " + lines.error().message());
  SeedView view;
  bool slots = false;
  for (const auto& line : *lines) {
    if (std::find(our_ids.begin(), our_ids.end(), line.id) != our_ids.end()) {
      return Error(where +
                   " is one of this deployment's own shards (name a node of the "
                   "cluster on another host)");
    }
    if (line.Failing() || line.HasFlag("handshake") || line.address.port == 0) {
      if (line.HasFlag("fail") && AtOurAddress(line, nodes, our_host)) {
        if (line.HasSlots()) {
          return Error(where + ": the cluster still gives slots to a failed node at " +
                       line.address.ToString() +
                       ", an earlier run of this host that did not leave (bring it back, or move "
                       "its slots to live primaries with redis-cli --cluster fix)");
        }
        view.ghosts.push_back(line.id);
      }
      continue;
    }
    if (line.address.host.empty() && line.IsMyself()) {
      common::NodeLine seed_line = line;
      seed_line.address.host = seed.host;
      view.live.push_back(seed_line);
    } else {
      view.live.push_back(line);
    }
    slots = slots || line.HasSlots();
  }
  if (!slots) {
    return Error(where +
                 ": that cluster serves no slots (start it first: shardctl up on the "
                 "first host, without --join)");
  }
  return view;
}

// Every node as replica placement sees it: ours by their planned role, the others as they are.
std::vector<PlacedNode> PlacedNodes(const std::vector<ClusterNode>& nodes,
                                    const std::vector<std::string>& ids,
                                    const std::string& our_host,
                                    const std::vector<common::NodeLine>& others) {
  std::vector<PlacedNode> placed;
  for (size_t i = 0; i < nodes.size(); ++i) {
    placed.push_back({.id = ids[i], .host = our_host, .primary = !nodes[i].replica_of});
  }
  for (const auto& line : others) {
    placed.push_back({.id = line.id,
                      .host = line.address.host,
                      .primary = line.IsPrimary(),
                      .follows = line.IsPrimary() ? "" : line.master_id});
  }
  return placed;
}

// CLUSTER REPLICATE on the replica at `where`, retried while it has not heard of its primary yet.
common::Status Replicate(const Access& access, const ClusterNode& where, const std::string& primary,
                         Clock::time_point deadline, const AbortCheck& abort_check) {
  std::string refused = "no answer before the deadline";
  while (Clock::now() < deadline) {
    auto connection = RedisConnection::Connect(access, where.host, where.port, kCommandTimeout);
    if (!connection.ok()) return connection.error();
    auto reply = connection->Run({"CLUSTER", "REPLICATE", primary});
    if (reply.ok()) return common::Ok();
    refused = reply.error().message();
    if (auto abort = abort_check(); !abort.ok()) return abort;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Error(common::FormatEndpoint(where.host, where.port) + ": CLUSTER REPLICATE " + primary +
               ": " + refused);
}

// Applies the replica moves: each replica, ours or another host's, follows its new primary.
common::Status MoveReplicas(const Access& access, const std::vector<ReplicaMove>& moves,
                            const std::vector<ClusterNode>& nodes,
                            const std::vector<std::string>& ids,
                            const std::vector<common::NodeLine>& others, Clock::time_point deadline,
                            const AbortCheck& abort_check) {
  for (const auto& move : moves) {
    ClusterNode where;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] == move.replica) where = nodes[i];
    }
    for (const auto& line : others) {
      if (line.id == move.replica) where = {.host = line.address.host, .port = line.address.port};
    }
    if (auto moved = Replicate(access, where, move.primary, deadline, abort_check); !moved.ok()) {
      return moved;
    }
  }
  return common::Ok();
}

}  // namespace

Result<JoinReport> JoinCluster(const Access& access, const std::vector<ClusterNode>& nodes,
                               const std::string& our_host, const common::Endpoint& seed,
                               Clock::time_point deadline, const AbortCheck& abort_check) {
  JoinReport report;
  auto connections = ConnectAll(access, nodes);
  if (!connections.ok()) return connections.error().Context("join");
  auto ids = CheckFreshAndGetIds(*connections);
  if (!ids.ok()) return ids.error().Context("join");
  report.node_ids = *ids;
  auto seen = ReadSeed(access, seed, nodes, our_host, *ids);
  if (!seen.ok()) return seen.error();
  std::vector<ClusterNode> all = nodes, others;
  for (const auto& line : seen->live) {
    others.push_back(
        {.host = line.address.host, .port = line.address.port, .bus_port = line.bus_port});
  }
  all.insert(all.end(), others.begin(), others.end());
  report.other_nodes = static_cast<int>(others.size());
  if (!seen->ghosts.empty()) {
    std::vector<common::Endpoint> where;
    for (const auto& line : seen->live) where.push_back(line.address);
    if (auto forgot = ForgetNodes(access, where, seen->ghosts); !forgot.ok()) {
      return forgot.error().Context("join: forget this host's earlier nodes");
    }
    report.forgotten = seen->ghosts;
  }
  auto first = MeetTargets(
      nodes, *connections, all, [&](size_t i, size_t j) { return j > i; }, deadline);
  if (!first.ok()) return first.error().Context("join");
  std::string last_error;
  while (!AllHandshakesDone(nodes, *connections, all.size(), Membership::kAtLeast, last_error)) {
    if (auto abort = abort_check(); !abort.ok()) return abort.error();
    if (Clock::now() > deadline) {
      return Error("join: handshakes with the cluster did not finish in time" +
                   (last_error.empty() ? "" : " (last error: " + last_error + ")"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto again = MeetTargets(
      nodes, *connections, all, [](size_t i, size_t j) { return j != i; }, deadline);
  if (!again.ok()) return again.error().Context("join");
  report.replica_moves = PlanReplicaHomes(PlacedNodes(nodes, *ids, our_host, seen->live));
  if (auto moved = MoveReplicas(access, report.replica_moves, nodes, *ids, seen->live, deadline,
                                abort_check);
      !moved.ok()) {
    return moved.error().Context("join: place replicas");
  }
  if (auto healthy = WaitUntilHealthy(access, all, deadline, abort_check, Membership::kAtLeast);
      !healthy.ok()) {
    return healthy.error().Context("join");
  }
  return report;
}

}  // namespace shardctl::launcher
