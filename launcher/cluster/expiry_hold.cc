#include "launcher/cluster/expiry_hold.h"

#include <chrono>
#include <set>

namespace shardctl::launcher {

using namespace std::chrono_literals;

common::Status DeclareImportSource(RedisConnection& connection) {
  if (auto declared = connection.Run(kImportSourceOn); !declared.ok())
    return declared.error().Context(connection.address() + ": CLIENT IMPORT-SOURCE ON");
  return common::Ok();
}

common::Result<bool> CanHoldExpiry(const Access& access, const common::Endpoint& node) {
  auto connection = RedisConnection::Connect(access, node.host, node.port, 5s);
  if (!connection.ok()) return connection.error();
  auto known = connection->Run({"CONFIG", "GET", "import-mode"});
  if (!known.ok()) return known.error().Context(connection->address() + ": CONFIG GET");
  return !known->empty();
}

common::Status SetExpiryHeld(const Access& access, const std::vector<common::Endpoint>& nodes,
                             bool held, std::chrono::milliseconds timeout) {
  std::string failed;
  std::set<std::string> asked;  // a node listed twice is asked once
  for (const auto& node : nodes) {
    if (!asked.insert(node.ToString()).second) continue;
    auto connection = RedisConnection::Connect(access, node.host, node.port, timeout);
    auto set = connection.ok()
                   ? connection->Run({"CONFIG", "SET", "import-mode", held ? "yes" : "no"})
                   : common::Result<std::string>(connection.error());
    // An engine without import-mode (a node restarted on Redis since: restart --engine) holds
    // nothing to let go.
    const bool nothing_held =
        !held && !set.ok() && set.error().message().find("Unknown option") != std::string::npos;
    if (!set.ok() && !nothing_held)
      failed += (failed.empty() ? "" : "; ") + node.ToString() + ": " + set.error().message();
  }
  if (failed.empty()) return common::Ok();
  return common::Error(std::string("import-mode ") + (held ? "yes" : "no") + " not set on " +
                       failed);
}

}  // namespace shardctl::launcher
