#include "launcher/cluster/formation.h"

#include <algorithm>
#include <thread>

#include "common/cluster_text.h"
#include "launcher/cluster/formation_internal.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kCommandTimeout = std::chrono::milliseconds(2000);
constexpr auto kMaxCommandTimeout = std::chrono::milliseconds(16000);

std::string Name(const ClusterNode& node) { return node.host + ":" + std::to_string(node.port); }

}  // namespace

Result<std::vector<RedisConnection>> ConnectAll(const Access& access,
                                                const std::vector<ClusterNode>& nodes) {
  std::vector<RedisConnection> connections;
  for (const auto& node : nodes) {
    auto connection = RedisConnection::Connect(access, node.host, node.port, kCommandTimeout);
    if (!connection.ok()) return connection.error();
    connections.push_back(std::move(connection).value());
  }
  return connections;
}

namespace {

// Fails on the first error reply of batch `batch` (sent on `connection` as `step`).
common::Status CheckReplies(const RedisConnection& connection, const std::vector<Command>& batch,
                            const std::vector<Result<std::string>>& replies, const char* step) {
  for (size_t c = 0; c < replies.size(); ++c) {
    if (!replies[c].ok()) {
      return Error(connection.address() + ": " + step + ": " + batch[c][0] + " " + batch[c][1] +
                   " failed: " + replies[c].error().message());
    }
  }
  return common::Ok();
}

// Runs one batch per connection (all written first, then all read) and fails on any error reply.
common::Status RunBatches(std::vector<RedisConnection>& connections,
                          const std::vector<std::vector<Command>>& batches, const char* step) {
  for (size_t i = 0; i < connections.size(); ++i) {
    if (batches[i].empty()) continue;
    auto replies = connections[i].Pipeline(batches[i]);
    if (!replies.ok()) return replies.error().Context(step);
    if (auto checked = CheckReplies(connections[i], batches[i], *replies, step); !checked.ok()) {
      return checked;
    }
  }
  return common::Ok();
}

}  // namespace

// A new connection to `node` with `timeout` in place of `connection`, after a pause that grows
// with the timeout; the old one stays when the node does not take the connection.
void Reconnect(const ClusterNode& node, RedisConnection& connection,
               std::chrono::milliseconds timeout) {
  std::this_thread::sleep_for(timeout / 40);
  auto again = RedisConnection::Connect(connection.access(), node.host, node.port, timeout);
  if (again.ok()) connection = std::move(again).value();
}

// As RunBatches, for commands that may be sent twice (MEET). Hundreds of shards on a few cores
// answer late at times: a node starved of CPU can take longer than kCommandTimeout over a batch
// of MEETs. A batch whose replies did not come is sent again on a new connection with twice the
// timeout (up to kMaxCommandTimeout) until `deadline`. Error replies are answers: not retried.
common::Status RunRepeatableBatches(const std::vector<ClusterNode>& nodes,
                                    std::vector<RedisConnection>& connections,
                                    const std::vector<std::vector<Command>>& batches,
                                    const char* step, Clock::time_point deadline) {
  for (size_t i = 0; i < connections.size(); ++i) {
    if (batches[i].empty()) continue;
    auto timeout = kCommandTimeout;
    for (;;) {
      auto replies = connections[i].Pipeline(batches[i]);
      if (replies.ok()) {
        if (auto checked = CheckReplies(connections[i], batches[i], *replies, step);
            !checked.ok()) {
          return checked;
        }
        break;
      }
      timeout = std::min(timeout * 2, kMaxCommandTimeout);
      if (Clock::now() + timeout > deadline) return replies.error().Context(step);
      Reconnect(nodes[i], connections[i], timeout);
    }
  }
  return common::Ok();
}

Result<std::vector<std::string>> CheckFreshAndGetIds(std::vector<RedisConnection>& connections) {
  std::vector<std::string> ids;
  for (auto& connection : connections) {
    auto replies = connection.Pipeline({{"CLUSTER", "MYID"}, {"CLUSTER", "INFO"}});
    if (!replies.ok()) return replies.error();
    if (!(*replies)[0].ok()) return (*replies)[0].error().Context(connection.address());
    if (!(*replies)[1].ok()) return (*replies)[1].error().Context(connection.address());
    const std::string& info = *(*replies)[1];
    if (InfoField(info, "cluster_known_nodes") != "1" ||
        InfoField(info, "cluster_slots_assigned") != "0") {
      return Error(connection.address() +
                   ": already part of a cluster (it knows other nodes or owns slots); "
                   "stop it or remove its nodes.conf");
    }
    ids.push_back(*(*replies)[0]);
  }
  return ids;
}

common::Status MeetTargets(const std::vector<ClusterNode>& nodes,
                           std::vector<RedisConnection>& connections,
                           const std::vector<ClusterNode>& targets,
                           const std::function<bool(size_t, size_t)>& include,
                           Clock::time_point deadline) {
  std::vector<std::vector<Command>> meets(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = 0; j < targets.size(); ++j) {
      if (!include(i, j)) continue;
      meets[i].push_back({"CLUSTER", "MEET", targets[j].host, std::to_string(targets[j].port),
                          std::to_string(targets[j].bus_port)});
    }
  }
  return RunRepeatableBatches(nodes, connections, meets, "meet", deadline);
}

namespace {

common::Status AssignSlots(const std::vector<ClusterNode>& nodes,
                           std::vector<RedisConnection>& connections) {
  std::vector<std::vector<Command>> setup(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    setup[i].push_back({"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)});
    for (const auto& range : nodes[i].slots) {
      setup[i].push_back(
          {"CLUSTER", "ADDSLOTSRANGE", std::to_string(range.first), std::to_string(range.last)});
    }
  }
  return RunBatches(connections, setup, "assign slots");
}

// Node i MEETs every node j with `include(i, j)`, giving the bus port explicitly.
common::Status Meet(const std::vector<ClusterNode>& nodes,
                    std::vector<RedisConnection>& connections,
                    const std::function<bool(size_t, size_t)>& include,
                    Clock::time_point deadline) {
  return MeetTargets(nodes, connections, nodes, include, deadline);
}

}  // namespace

bool AllHandshakesDone(const std::vector<ClusterNode>& nodes,
                       std::vector<RedisConnection>& connections, size_t expected,
                       Membership membership, std::string& last_error) {
  for (size_t i = 0; i < connections.size(); ++i) {
    RedisConnection& connection = connections[i];
    auto listing = connection.Run({"CLUSTER", "NODES"});
    if (!listing.ok()) {
      last_error = connection.address() + ": " + listing.error().message();
      Reconnect(nodes[i], connection, kMaxCommandTimeout / 2);
      return false;
    }
    size_t lines = std::count(listing->begin(), listing->end(), '\n');
    const bool all_known =
        membership == Membership::kExactly ? lines == expected : lines >= expected;
    if (!all_known || listing->find("handshake") != std::string::npos) return false;
  }
  return true;
}

namespace {

// Meeting twice is what makes formation fast. The first round (each pair once) makes every node
// known to every other; but a node learns a peer's slots only from a packet sent by a peer it
// already knows, and after a handshake the next regular ping comes cluster-node-timeout/2 later
// (7.5 s by default). A second round of MEETs in both directions, sent once everyone knows
// everyone, delivers each node's slots in the MEET header right away.
common::Status MeetTwice(const std::vector<ClusterNode>& nodes,
                         std::vector<RedisConnection>& connections, Clock::time_point deadline,
                         const AbortCheck& abort_check) {
  auto first = Meet(
      nodes, connections, [](size_t i, size_t j) { return j > i; }, deadline);
  if (!first.ok()) return first;
  std::string last_error;
  while (!AllHandshakesDone(nodes, connections, nodes.size(), Membership::kExactly, last_error)) {
    if (auto abort = abort_check(); !abort.ok()) return abort;
    if (Clock::now() > deadline) {
      return Error("meet: handshakes did not finish in time" +
                   (last_error.empty() ? "" : " (last error: " + last_error + ")"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Meet(
      nodes, connections, [](size_t i, size_t j) { return i != j; }, deadline);
}

common::Status AttachReplicas(const std::vector<ClusterNode>& nodes,
                              std::vector<RedisConnection>& connections,
                              const std::vector<std::string>& ids) {
  std::vector<std::vector<Command>> replicate(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].replica_of)
      replicate[i].push_back({"CLUSTER", "REPLICATE", ids[*nodes[i].replica_of]});
  }
  return RunBatches(connections, replicate, "attach replicas");
}

// One poll over all nodes; returns "" when healthy, else what is still missing.
std::string HealthGap(const Access& access, const std::vector<ClusterNode>& nodes,
                      Membership membership) {
  std::string first_map;
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeView view = ViewFrom(access, nodes[i], kCommandTimeout);
    std::string who = "node " + Name(nodes[i]);
    if (!view.reachable) return who + " does not answer: " + view.error;
    if (view.cluster_state != "ok") return who + " reports cluster_state:" + view.cluster_state;
    const int expected = static_cast<int>(nodes.size());
    if (membership == Membership::kExactly ? view.known_nodes != expected
                                           : view.known_nodes < expected) {
      return who + " knows " + std::to_string(view.known_nodes) + " of " +
             std::to_string(nodes.size()) + " nodes";
    }
    if (i == 0) first_map = view.slot_map;
    if (view.slot_map != first_map) return who + " disagrees with the first node on the slot map";
    if (nodes[i].replica_of && view.role != "slave") return who + " is not yet a replica";
    if (view.role == "slave" && view.master_link_status != "up") {
      return who + " is a replica whose link to its primary is not up yet";
    }
  }
  return "";
}

}  // namespace

common::Status WaitForPing(const Access& access, const std::vector<ClusterNode>& nodes,
                           Clock::time_point deadline, const AbortCheck& abort_check) {
  for (const auto& node : nodes) {
    for (;;) {
      auto connection = RedisConnection::Connect(access, node.host, node.port, kCommandTimeout);
      std::string last_error;
      if (connection.ok()) {
        auto pong = connection->Run({"PING"});
        if (pong.ok()) break;
        last_error = pong.error().message();
      } else {
        last_error = connection.error().message();
      }
      if (auto abort = abort_check(); !abort.ok()) return abort;
      if (Clock::now() > deadline) {
        return Error(Name(node) + " did not answer PING in time (last error: " + last_error + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  return common::Ok();
}

Result<FormationReport> FormCluster(const Access& access, const std::vector<ClusterNode>& nodes,
                                    Clock::time_point deadline, const AbortCheck& abort_check) {
  FormationReport report;
  auto started = Clock::now();
  auto connections = ConnectAll(access, nodes);
  if (!connections.ok()) return connections.error().Context("form cluster");
  auto ids = CheckFreshAndGetIds(*connections);
  if (!ids.ok()) return ids.error().Context("form cluster");
  report.node_ids = *ids;
  if (auto status = AssignSlots(nodes, *connections); !status.ok()) {
    return status.error().Context("form cluster");
  }
  if (auto status = MeetTwice(nodes, *connections, deadline, abort_check); !status.ok()) {
    return status.error().Context("form cluster");
  }
  if (auto status = AttachReplicas(nodes, *connections, report.node_ids); !status.ok()) {
    return status.error().Context("form cluster");
  }
  auto met = Clock::now();
  report.slots_and_meet = std::chrono::duration_cast<std::chrono::milliseconds>(met - started);
  if (auto healthy = WaitUntilHealthy(access, nodes, deadline, abort_check, Membership::kExactly);
      !healthy.ok()) {
    return healthy.error().Context("form cluster");
  }
  report.until_healthy = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - met);
  return report;
}

common::Status WaitUntilHealthy(const Access& access, const std::vector<ClusterNode>& nodes,
                                Clock::time_point deadline, const AbortCheck& abort_check,
                                Membership membership) {
  for (;;) {
    std::string gap = HealthGap(access, nodes, membership);
    if (gap.empty()) return common::Ok();
    if (auto abort = abort_check(); !abort.ok()) return abort;
    if (Clock::now() > deadline) {
      return Error("not healthy in time: " + gap +
                   " (see the shard logs; a slow host may need more time)");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

NodeView ViewFrom(const Access& access, const ClusterNode& node,
                  std::chrono::milliseconds timeout) {
  NodeView view;
  auto connection = RedisConnection::Connect(access, node.host, node.port, timeout);
  if (!connection.ok()) {
    view.error = connection.error().message();
    return view;
  }
  auto replies =
      connection->Pipeline({{"CLUSTER", "INFO"}, {"CLUSTER", "NODES"}, {"INFO", "replication"}});
  if (!replies.ok()) {
    view.error = replies.error().message();
    return view;
  }
  for (const auto& reply : *replies) {
    if (!reply.ok()) {
      view.error = reply.error().message();
      return view;
    }
  }
  view.reachable = true;
  const std::string& info = *(*replies)[0];
  view.cluster_state = InfoField(info, "cluster_state");
  view.known_nodes = InfoNumber<int>(info, "cluster_known_nodes");
  view.slots_assigned = InfoNumber<int>(info, "cluster_slots_assigned");
  view.slot_map = NormalizeSlotMap(*(*replies)[1]);
  view.role = InfoField(*(*replies)[2], "role");
  view.master_link_status = InfoField(*(*replies)[2], "master_link_status");
  return view;
}

common::Status ForgetNodes(const Access& access, const std::vector<common::Endpoint>& nodes,
                           const std::vector<std::string>& ids) {
  for (const auto& node : nodes) {
    auto connection = RedisConnection::Connect(access, node.host, node.port, kCommandTimeout);
    if (!connection.ok()) return connection.error();
    for (const auto& id : ids) {
      auto forgot = connection->Run({"CLUSTER", "FORGET", id});
      if (!forgot.ok() && forgot.error().message().find("Unknown node") == std::string::npos) {
        return Error(connection->address() + ": CLUSTER FORGET: " + forgot.error().message());
      }
    }
  }
  return common::Ok();
}

std::vector<ClusterNode> ClusterNodesOf(const Plan& plan) {
  std::vector<ClusterNode> nodes;
  for (const auto& shard : plan.shards) {
    nodes.push_back({.host = plan.bind,
                     .port = shard.port,
                     .bus_port = shard.bus_port,
                     .slots = shard.slots,
                     .replica_of = shard.primary});
  }
  return nodes;
}

std::vector<ClusterNode> RunningNodesOf(const Plan& plan) {
  auto nodes = ClusterNodesOf(plan);
  for (auto& node : nodes) node.replica_of.reset();
  return nodes;
}

std::string NormalizeSlotMap(const std::string& cluster_nodes) {
  auto nodes = common::ParseClusterNodes(cluster_nodes);
  // Never equal to a real map, so a node that printed nonsense never counts as agreeing.
  if (!nodes.ok()) return "unreadable CLUSTER NODES: " + nodes.error().message();
  std::vector<std::string> owners;
  for (const common::NodeLine& node : *nodes) {
    std::string ranges;
    for (const common::SlotRange& range : node.slots) {
      if (!ranges.empty()) ranges += ',';
      ranges += std::to_string(range.first);
      if (range.last != range.first) ranges += "-" + std::to_string(range.last);
    }
    if (!ranges.empty()) owners.push_back(node.id + ":" + ranges);
  }
  std::sort(owners.begin(), owners.end());
  std::string joined;
  for (const auto& owner : owners) joined += owner + "\n";
  return joined;
}

}  // namespace shardctl::launcher
