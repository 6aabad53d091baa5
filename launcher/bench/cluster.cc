#include "launcher/bench/cluster.h"

#include <string_view>
#include <vector>

#include "common/node_query.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

Result<SlotTable> FetchSlotTable(const Access& access, const std::string& host, int port,
                                 std::chrono::milliseconds timeout) {
  const Endpoint node{host, port};
  const std::string where = node.ToString();
  std::vector<std::vector<std::string_view>> commands;
  const std::string& password = access.password;
  if (!password.empty()) commands.push_back({"AUTH", password});
  commands.push_back({"CLUSTER", "SLOTS"});
  auto replies = common::QueryNode(node, commands, timeout, access.tls.get());
  if (!replies.ok()) {
    return Error("cannot connect to " + replies.error().message() + " (is the server running?)");
  }
  if (const std::string& login = replies->front(); !password.empty() && login.starts_with('-')) {
    return Error(where + ": login refused (" + login.substr(1, login.find('\r') - 1) +
                 "; check --password-file)");
  }
  const std::string& reply = replies->back();
  if (reply.starts_with('-')) {
    return Error(where + " is not a cluster node (CLUSTER SLOTS: " +
                 reply.substr(1, reply.find('\r') - 1) + "; use --host/--port for a plain server)");
  }
  auto table = SlotTable::FromClusterSlots(reply, host);
  if (!table.ok()) return table.error().Context(where);
  if (int missing = table->Unassigned(); missing > 0) {
    return Error("the cluster at " + where + " serves no node for " + std::to_string(missing) +
                 " slot(s) (wait until CLUSTER INFO says cluster_state:ok)");
  }
  return table;
}

}  // namespace shardctl::launcher
