#include "launcher/failover.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "launcher/redis_client.h"

namespace shardctl::launcher {

using common::Error;

std::optional<std::string> MyselfId(const std::string& nodes_conf) {
  for (const auto& node : ParseClusterNodes(nodes_conf)) {
    if (node.flags.find("myself") != std::string::npos) return node.id;
  }
  return std::nullopt;
}

bool NodeLine::HasFlag(std::string_view flag) const {
  std::string_view rest = flags;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (rest.substr(0, comma) == flag) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

std::vector<NodeLine> ParseClusterNodes(const std::string& cluster_nodes) {
  std::vector<NodeLine> nodes;
  std::istringstream lines(cluster_nodes);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    NodeLine node;
    std::string address, ping, pong, epoch, link, slot;
    if (!(fields >> node.id >> address >> node.flags >> node.master_id >> ping >> pong >> epoch >>
          link)) {
      continue;  // nodes.conf also has a "vars ..." line
    }
    // address: ip:port@cport[,hostname]
    size_t colon = address.rfind(':', address.find('@'));
    if (colon == std::string::npos) continue;
    node.host = address.substr(0, colon);
    node.port = std::atoi(address.c_str() + colon + 1);
    while (fields >> slot) {
      if (slot.front() != '[') node.has_slots = true;
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<int> ReplicaPorts(const std::vector<NodeLine>& nodes, const std::string& primary_id) {
  std::vector<int> ports;
  for (const auto& node : nodes) {
    if (node.master_id == primary_id && !node.IsPrimary() && !node.Failing()) {
      ports.push_back(node.port);
    }
  }
  return ports;
}

common::Status PromoteReplica(const std::string& host, int port, FailoverMode mode,
                              std::chrono::milliseconds timeout) {
  auto connection = RedisConnection::Connect(host, port, timeout);
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

}  // namespace shardctl::launcher
