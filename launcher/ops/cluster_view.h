// `shardctl status --cluster`: the whole Redis Cluster a deployment belongs to, as its nodes see
// it (CLUSTER NODES of the first local shard that answers), including nodes on other hosts that
// another shardctl (or anyone) runs. Each node is matched to a local shard by address when it is
// one. Nothing here prints.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/status.h"

namespace shardctl::launcher {

struct ClusterNodeView {
  common::NodeLine node;
  int local_shard = -1;  // the plan's shard index when the node is one of ours, else -1
  std::string state;     // ok, fail, pfail, handshake, noaddr, disconnected
};

struct ClusterView {
  std::string seen_from;  // host:port of the shard that answered
  std::string cluster_state;
  std::vector<ClusterNodeView> nodes;  // by host, then port
  int hosts = 0;                       // distinct node addresses' hosts
};

// Pure: the view of `nodes` (CLUSTER NODES parsed) from a node whose CLUSTER INFO says
// `cluster_state`, with local shards matched by the plan's bind address and ports.
ClusterView MakeClusterView(const Plan& plan, std::vector<common::NodeLine> nodes,
                            std::string cluster_state, std::string seen_from);

// Asks the plan's shards in order until one answers CLUSTER NODES and CLUSTER INFO. The error
// says no shard answered.
common::Result<ClusterView> ReadClusterView(const Access& access, const Plan& plan,
                                            std::chrono::milliseconds timeout);

// Pure: ok when the cluster is ok and every node is; degraded when it serves but a node fails or
// a link is down; down when cluster_state is not ok.
Verdict ClusterViewVerdict(const ClusterView& view);

// `shardctl status --cluster`: the record, and the cluster as the first shard that answers sees
// it (`view` holds the error when none does). No deployment is Fault::kUnknown.
struct ClusterStatusReport {
  Deployment deployment;
  common::Result<ClusterView> view;
};
Outcome<ClusterStatusReport> ClusterStatus(const Spec& spec);

}  // namespace shardctl::launcher
