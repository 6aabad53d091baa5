#include "launcher/ops/cluster_view.h"

#include <algorithm>
#include <set>

#include "launcher/cluster/redis_client.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {

using common::Error;
using common::NodeLine;

namespace {

std::string StateOf(const NodeLine& node) {
  for (const char* flag : {"fail", "handshake", "noaddr"}) {
    if (node.HasFlag(flag)) return flag;
  }
  if (node.HasFlag("fail?")) return "pfail";
  if (!node.IsMyself() && node.link_state != "connected") return "disconnected";
  return "ok";
}

}  // namespace

ClusterView MakeClusterView(const Plan& plan, std::vector<NodeLine> nodes,
                            std::string cluster_state, std::string seen_from) {
  ClusterView view{.seen_from = std::move(seen_from), .cluster_state = std::move(cluster_state)};
  std::set<std::string> hosts;
  for (auto& node : nodes) {
    ClusterNodeView entry{.node = std::move(node), .local_shard = -1, .state = ""};
    entry.state = StateOf(entry.node);
    for (const auto& shard : plan.shards) {
      const std::string& host = entry.node.address.host;
      if (entry.node.address.port == shard.port &&
          (host == plan.bind || host == AddressInCluster(plan))) {
        entry.local_shard = shard.index;
      }
    }
    if (!entry.node.address.host.empty()) hosts.insert(entry.node.address.host);
    view.nodes.push_back(std::move(entry));
  }
  std::sort(view.nodes.begin(), view.nodes.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node.address.host, a.node.address.port) <
           std::tie(b.node.address.host, b.node.address.port);
  });
  view.hosts = static_cast<int>(hosts.size());
  return view;
}

common::Result<ClusterView> ReadClusterView(const Access& access, const Plan& plan,
                                            std::chrono::milliseconds timeout) {
  std::vector<int> ports;
  for (const auto& shard : plan.shards) ports.push_back(shard.port);
  auto answer = AskFirstThatAnswers(access, plan.bind, ports,
                                    {{"CLUSTER", "NODES"}, {"CLUSTER", "INFO"}}, timeout);
  if (!answer.ok()) {
    return Error("no shard of the deployment answers (" + answer.error().message() +
                 "; shardctl status shows each shard)");
  }
  auto nodes = common::ParseClusterNodes(answer->replies[0]);
  if (!nodes.ok()) return nodes.error().Context(answer->address);
  return MakeClusterView(plan, std::move(nodes).value(),
                         InfoField(answer->replies[1], "cluster_state"), answer->address);
}

Verdict ClusterViewVerdict(const ClusterView& view) {
  if (view.cluster_state != "ok") return Verdict::kDown;
  for (const auto& entry : view.nodes) {
    if (entry.state != "ok") return Verdict::kDegraded;
  }
  return Verdict::kOk;
}

Outcome<ClusterStatusReport> ClusterStatus(const Spec& spec) {
  auto target = LoadTarget(spec, {.if_missing = TargetNeeds::IfMissing::kUnknown});
  if (!target.ok()) return target.error();
  auto view = ReadClusterView(target->access, target->deployment->plan, std::chrono::seconds(2));
  return ClusterStatusReport{.deployment = std::move(*target->deployment), .view = std::move(view)};
}

}  // namespace shardctl::launcher
