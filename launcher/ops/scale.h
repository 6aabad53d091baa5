// What `shardctl scale --shards N` does below the command line.
//
// Out (N above the running primaries):
//   plan the new shards (model/plan_scale.h) ─▶ ports free? ─▶ supervisor "reshape" starts them
//   ─▶ CLUSTER MEET each ─▶ new replicas REPLICATE their primary ─▶ cluster healthy
//   ─▶ rebalance: slots (with keys) move onto the new primaries
// In (N below):
//   drain the newest primaries' slots onto the rest (with keys) ─▶ check they are empty
//   ─▶ supervisor "reshape" stops them and deletes their data ─▶ CLUSTER FORGET on every node
//   ─▶ cluster healthy
// New shards get slots only once they are part of the cluster; removed ones stop only once they
// are empty. A failure leaves a working cluster: shards added but not yet given slots serve
// nothing, and the next `scale` or `rebalance` continues (open slot moves are finished first).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/rebalance.h"

namespace shardctl::launcher {

struct ScaleRequest {
  int primaries = 0;
  bool dry_run = false;
  MovePath path = MovePath::kAuto;
  std::function<void(const std::string&)> on_step;  // "starting 2 shards", "joining", ...
  std::function<void(const MoveProgress&)> on_progress;
  const std::atomic<bool>* stop = nullptr;
};

struct ScaleResult {
  int from_primaries = 0;
  int to_primaries = 0;
  std::vector<int> added;    // shard indices
  std::vector<int> removed;  // shard indices
  ReshardResult reshard;     // the slot moves (planned only, with dry_run)
  Plan plan;                 // the deployment's plan afterwards (or as it would be)
};

// Errors that are the request's fault (a count that does not fit the host, nothing to do) start
// with "usage: " so the CLI can exit 2; the rest name the step that failed.
common::Result<ScaleResult> ScaleLoaded(const Access& access, const DeploymentDir& dir,
                                        const Deployment& deployment, const Topology& topology,
                                        const Spec& spec, const ScaleRequest& request);

// `shardctl scale --shards N`: loads the deployment (a supervisor must run it), reads the host,
// then ScaleLoaded. A shape the host or the cluster cannot take is a usage fault; one stopped by
// request.stop is Fault::kInterrupted.
Outcome<ScaleResult> Scale(const Spec& spec, const ScaleRequest& request);

}  // namespace shardctl::launcher
