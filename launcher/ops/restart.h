// What `shardctl restart` does below the command line: one shard restarted through the
// supervisor, with its keys kept. Nothing here prints.
//
//   primary with a live replica ─▶ the replica takes over (CLUSTER FAILOVER), the old primary
//                                  restarts and resyncs as a replica                ("handed-over")
//   primary, AOF persistence     ─▶ SIGTERM flushes the AOF, the new process replays it   ("aof")
//   primary, none / rdb          ─▶ CLIENT PAUSE WRITE, SAVE (writes wait, none is refused), the
//                                  new process loads that snapshot; with persistence none the
//                                  snapshot is deleted once loaded                  ("saved")
//   replica                      ─▶ restarts and resyncs from its primary           ("resynced")
//   --discard-data               ─▶ the shard comes back empty                      ("discarded")
//   restore, same shape          ─▶ no handover; the shard comes back with the backup file
//                                  restore put at ShardPlacedSnapshot() as its data   ("placed")
//
// Then it waits until the shard answers as a new process, has loaded its data, and every node
// reports cluster_state:ok.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// One shard restarted, and how its data was kept.
struct ShardRestart {
  int shard = 0;
  std::optional<pid_t> old_pid;  // none when the shard was waiting to be restarted anyway
  pid_t new_pid = 0;
  std::chrono::milliseconds took{0};  // until every node reported cluster_state:ok
  // "handed-over", "aof", "saved", "resynced", "discarded", "placed", or "none" (nothing was
  // running).
  std::string data;
  std::optional<long long> keys_before;  // the shard's keys as it stopped (primaries)
  std::optional<long long> keys_after;   // the same node's keys once it served again
  // "saved": how long writes were held, from CLIENT PAUSE until the supervisor stopped the shard
  // (the snapshot's time, mostly); after that, writes fail until the new process serves.
  std::optional<std::chrono::milliseconds> write_pause;
};

struct RestartOptions {
  // Run the shard on this engine from now on (recorded for it). One that crash-loops or hangs on it
  // is started again on the engine it ran, when roll_back_engine says so.
  std::optional<Engine> engine;
  bool discard_data = false;  // --discard-data: the shard may come back empty
  // restore: the shard's data is replaced by DeploymentDir::ShardPlacedSnapshot(), already there.
  bool load_placed = false;
  // Set by a signal handler (Ctrl-C): a shard not stopped yet is left running, its writes
  // resumed; one already stopped is seen through.
  const std::atomic<bool>* interrupted = nullptr;
  // Whether a shard that does not start on `engine` goes back to its own: always with a
  // supervisor that records each shard's engine; with an older one only the first shard a command
  // switches (it records one engine for all: going back would undo the shards switched before).
  bool roll_back_engine = true;
};

// Restarts shard `index` of `deployment` through its supervisor, keeping its keys as the header
// says. Errors say which step failed and whether the shard was left running as it was.
common::Result<ShardRestart> RestartShard(const Access& access, const DeploymentDir& dir,
                                          const Deployment& deployment, int index,
                                          const RestartOptions& options);

// `shardctl restart SHARD` / `restart --rolling`: one entry for every step.
//
//   LoadTarget (a supervisor must run it) ─▶ the shard exists ─▶ --engine can read the data
//   ─▶ TLS files a restarted shard would load ─▶ restart.lock ─▶ RestartShard, one at a time
struct RestartRequest {
  Spec spec;
  std::optional<int> shard;   // one shard; nullopt: --rolling, every shard in order
  bool engine_given = false;  // --engine was given: spec.engine from now on
  bool discard_data = false;  // --discard-data
  const std::atomic<bool>* interrupted = nullptr;         // Ctrl-C: no later shard is touched
  std::function<void(const ShardRestart&)> on_restarted;  // each shard once it serves again
};

struct RestartReport {
  std::vector<ShardRestart> restarted;
};

// A shard that does not exist, an engine that cannot read the data, TLS files no peer would
// accept: usage faults, nothing restarted. A restart that fails stops there (runtime); Ctrl-C
// stops before the next shard (Fault::kInterrupted, saying how far it got).
Outcome<RestartReport> Restart(const RestartRequest& request);

}  // namespace shardctl::launcher
