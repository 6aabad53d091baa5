// What `shardctl rebalance` and `shardctl move-slots` do below the command line: read who owns
// which slots now (from the cluster, not the record: failovers and earlier moves change it),
// finish moves an interrupted run left open, plan the moves (cluster/slot_balance.h) and run them
// (cluster/slot_mover.h). Nothing here prints; progress goes to the caller's callback.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/cluster/slot_balance.h"
#include "launcher/cluster/slot_mover.h"
#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/top_keys.h"

namespace shardctl::launcher {

// The cluster's primaries now, as the balancer and the mover see them (parallel vectors).
struct LivePrimaries {
  std::vector<SlotOwner> owners;  // SlotOwner::shard maps to the plan's shard index by port
  std::vector<MoveNode> nodes;
};

// The cluster as the first shard of `plan` that answers lists it (CLUSTER NODES, parsed).
common::Result<std::vector<common::NodeLine>> ReadClusterNodes(const Access& access,
                                                               const Plan& plan,
                                                               std::chrono::milliseconds timeout);

// Asks the first shard of `plan` that answers for CLUSTER NODES; primaries that are failing are
// left out (their slots cannot move until a replica takes over).
common::Result<LivePrimaries> ReadLivePrimaries(const Access& access, const Plan& plan,
                                                std::chrono::milliseconds timeout);

struct ReshardRequest {
  // Rebalance (the default) or, with `ranges`, an explicit move of them to shard `to_shard`.
  BalanceBy by = BalanceBy::kSlots;
  double threshold = 0.02;
  std::chrono::milliseconds window{5000};  // BalanceBy::kLoad: how long each slot's CPU is counted
  std::vector<common::SlotRange> ranges;
  int to_shard = -1;
  std::set<int> drain_shards;  // scale in: these shards give every slot away
  bool dry_run = false;
  MovePath path = MovePath::kAuto;
  std::function<void(const MoveProgress&)> on_progress;
  const std::atomic<bool>* stop = nullptr;
};

// One planned move, in shard terms for people and in node terms for the mover.
struct PlannedMove {
  int source_shard = -1;
  int target_shard = -1;
  MoveTask task;
  int slots = 0;
};

// BalanceBy::kLoad: what was measured, per primary (by shard) and for the hot slots.
struct LoadView {
  struct Primary {
    int shard = -1;     // -1: another host's node
    std::string node;   // host:port
    double before = 0;  // CPU µs its slots used in the window
    double after = 0;   // predicted once the moves are done
  };
  struct Hot {
    int slot = 0;
    int shard = -1;
    std::string node;
    double share = 0;  // its load over one primary's fair share
  };
  std::chrono::milliseconds window{0};
  std::vector<Primary> primaries;
  std::vector<Hot> hot_slots;  // hottest first; each stays alone on its primary
};

struct ReshardResult {
  std::vector<OpenSlot> open_slots;  // found at the start (finished unless dry_run)
  std::optional<LoadView> load;      // --by load only
  std::vector<PlannedMove> moves;    // empty: already balanced
  std::optional<MoveReport> report;  // set when moves ran
  // --by load, on a deployment with replicas and a shardproxy: the proxy's hot keys whose reads
  // are >= 90% of their requests (replicas could serve them), and its --read-from now. Unset
  // otherwise, or when the proxy did not answer.
  std::optional<std::vector<ProxyHotKey>> read_mostly_keys;
  std::string proxy_read_from;
};

// Finishes open moves, then plans and (unless dry_run) runs the moves. Errors name the step: a
// target shard that is not a primary now, a node that does not answer, a move that failed (and
// how far it got).
common::Result<ReshardResult> Reshard(const Access& access, const Plan& plan,
                                      const ReshardRequest& request);

// `up --join`: when one of this deployment's primaries owns no slot (it just joined, or an earlier
// share was interrupted), rebalances the whole cluster so every primary, ours and other hosts',
// owns its share, keys and all. A no-op result (no moves) when all of ours own slots.
common::Result<ReshardResult> TakeShare(const Access& access, const Plan& plan,
                                        const std::function<void(const MoveProgress&)>& progress);

// Valkey's atomic slot migrations (CLUSTER MIGRATESLOTS) run on in the server after the move that
// started them is killed, and end by themselves; a move planned meanwhile is refused ("I am
// already migrating slot 0") or plans from a slot map about to change. So a move waits (at most
// 10 minutes; "stopped" when `stop` is set) until none that a primary of `plan` exports runs.
common::Status WaitForAtomicMoves(const Access& access, const Plan& plan,
                                  const std::atomic<bool>* stop);

// The moves an interrupted run left open, and whether they can be finished (CheckRoomToFinish:
// a "usage: " error when one does not fit in its target): what a dry run says of them.
common::Result<std::vector<OpenSlot>> SeeInterruptedMoves(const Access& access, const Plan& plan);

// Finishes moves an interrupted run left open (no-op when none), for `up` and `scale`.
common::Result<std::vector<OpenSlot>> FinishInterruptedMoves(const Access& access,
                                                             const Plan& plan);

// `shardctl rebalance` (by slots or keys, within a threshold) and `shardctl move-slots` (the
// request's ranges to its to_shard): loads the deployment, then Reshard. A request the cluster
// cannot serve (no such shard, --migration atomic without it) is a usage fault; one stopped by
// request.stop is Fault::kInterrupted (what moved stays moved, no slot is left open).
Outcome<ReshardResult> Rebalance(const Spec& spec, const ReshardRequest& request);

}  // namespace shardctl::launcher
