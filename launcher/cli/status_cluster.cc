// `shardctl status --cluster`: every node of the cluster (ops/cluster_view.h), one table or JSON.
#include <iostream>

#include "common/endpoint.h"
#include "common/slots.h"
#include "launcher/cli/commands.h"
#include "launcher/ops/cluster_view.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

int SlotCount(const common::NodeLine& node) {
  int count = 0;
  for (const auto& range : node.slots) count += range.last - range.first + 1;
  return count;
}

// host:port of the node with `id`, or "-".
std::string AddressOf(const ClusterView& view, const std::string& id) {
  for (const auto& entry : view.nodes) {
    if (entry.node.id == id) return entry.node.address.ToString();
  }
  return "-";
}

json ViewJson(const Plan& plan, const ClusterView& view) {
  json nodes = json::array();
  for (const auto& entry : view.nodes) {
    const auto& node = entry.node;
    nodes.push_back({{"id", node.id},
                     {"host", node.address.host},
                     {"port", node.address.port},
                     {"hostname", node.hostname},
                     {"role", node.IsReplica() ? "replica" : "primary"},
                     {"primary_id", node.IsReplica() ? json(node.master_id) : json(nullptr)},
                     {"slots", SlotCount(node)},
                     {"state", entry.state},
                     {"shard", entry.local_shard >= 0 ? json(entry.local_shard) : json(nullptr)}});
  }
  return {{"name", plan.name},
          {"cluster_name", plan.cluster_name},
          {"cluster_state", view.cluster_state},
          {"seen_from", view.seen_from},
          {"hosts", view.hosts},
          {"nodes", nodes}};
}

void PrintView(const Plan& plan, const ClusterView& view) {
  std::cout << "cluster \"" << plan.cluster_name << "\" of deployment \"" << plan.name
            << "\": cluster_state " << view.cluster_state << ", " << view.nodes.size()
            << " node(s) on " << view.hosts << " host(s), seen from " << view.seen_from << "\n";
  std::vector<std::vector<std::string>> rows = {
      {"HOST", "PORT", "NODE", "ROLE", "PRIMARY", "SLOTS", "STATE", "SHARD"}};
  for (const auto& entry : view.nodes) {
    const auto& node = entry.node;
    rows.push_back(
        {node.hostname.empty() ? node.address.host : node.address.host + " (" + node.hostname + ")",
         std::to_string(node.address.port), node.id.substr(0, 8),
         node.IsReplica() ? "replica" : "primary",
         node.IsReplica() ? AddressOf(view, node.master_id) : "-", std::to_string(SlotCount(node)),
         entry.state, entry.local_shard >= 0 ? std::to_string(entry.local_shard) : "-"});
  }
  std::cout << FormatTable(rows);
}

}  // namespace

int RunStatusCluster(const Invocation& invocation, const Spec& spec) {
  auto report = ClusterStatus(spec);
  if (!report.ok()) return Fail(report.error());
  const auto& [deployment, view] = *report;
  if (!view.ok()) {
    PrintError(view.error().message());
    return kStatusDown;
  }
  if (invocation.json) {
    std::cout << ViewJson(deployment.plan, *view).dump(2) << "\n";
  } else {
    PrintView(deployment.plan, *view);
  }
  return StatusExitCode(ClusterViewVerdict(*view));
}

}  // namespace shardctl::launcher
