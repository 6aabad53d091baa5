// What `shardctl down --leave` does before a host that is part of a multi-host cluster stops:
//
//   CLUSTER NODES ─▶ our primaries that own slots and have a replica on another host: graceful
//   CLUSTER FAILOVER there (the replica has the data: nothing moves, no write is refused)
//   ─▶ the slots still ours move, keys and all, onto the other hosts' primaries (a drain)
//   ─▶ other hosts' replicas that followed one of ours follow one of theirs
//   ─▶ (the caller stops the deployment) ─▶ ForgetLeftNodes: every remaining node forgets ours
//
// A failure before the stop leaves a working cluster and nothing stopped: slots moved stay moved,
// and running `down --leave` again continues.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/model/plan.h"
#include "launcher/ops/rebalance.h"

namespace shardctl::launcher {

struct LeaveRequest {
  std::function<void(const std::string&)> on_step;
  std::function<void(const MoveProgress&)> on_progress;
  const std::atomic<bool>* stop = nullptr;
};

struct LeaveResult {
  std::vector<int> failed_over;             // our primaries whose replica elsewhere took over
  ReshardResult reshard;                    // the slots that moved to other hosts' primaries
  int replicas_rehomed = 0;                 // other hosts' replicas that followed one of ours
  std::vector<std::string> our_ids;         // our nodes, for the remaining ones to forget
  std::vector<common::Endpoint> remaining;  // the other hosts' live nodes
};

// Hands everything this deployment serves to the rest of the cluster. Errors that are the
// request's fault (this deployment is the whole cluster) start with "usage: ".
common::Result<LeaveResult> HandOverToCluster(const Access& access, const Plan& plan,
                                              const LeaveRequest& request);

// After the stop: every remaining node forgets our nodes (a node that never knew one is fine).
common::Status ForgetLeftNodes(const Access& access, const LeaveResult& left);

}  // namespace shardctl::launcher
