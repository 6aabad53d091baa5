// What `shardctl save` watches below the command line: every shard's fork counter, before the
// supervisor is asked to save every shard and until each has saved. Nothing here prints.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// A shard's forks as INFO shows them.
struct ForkCount {
  long long forks = -1;     // INFO stats total_forks; -1 when the shard did not answer
  bool forking = false;     // a BGSAVE or AOF rewrite is in progress
  std::string last_status;  // "ok" / "err" of the last BGSAVE (BGREWRITEAOF with aof)
};

// Every shard's fork count, by shard index.
std::vector<ForkCount> ObserveForks(const Access& access, const Plan& plan);

struct SaveReport {
  int failed = 0;           // shards whose save did not end "ok"
  int most_forks_seen = 0;  // the most shards seen forking at once
};

// How a save is going, after every poll: shards saved so far, of `total`, and forking now.
using SaveProgress = std::function<void(size_t saved, size_t total, int forking)>;

// Polls every shard until each has forked since `before` and finished, for up to 30 minutes
// from `started`; the error says how many shards were not saved by then. `progress` (if set)
// hears after each poll.
common::Result<SaveReport> WaitForSaves(const Access& access, const Plan& plan,
                                        const std::vector<ForkCount>& before,
                                        std::chrono::steady_clock::time_point started,
                                        const SaveProgress& progress = {});

// `shardctl save`: asks the supervisor's fork scheduler to save every shard once, then waits
// until all are done. A deployment that keeps nothing on disk is a usage fault.
struct SaveDone {
  SaveReport saves;
  size_t shards = 0;
  int fork_limit = 1;
  std::chrono::milliseconds took{0};
};
// `progress` hears (saved, total, forking now, fork limit) while the saves run.
Outcome<SaveDone> Save(const Spec& spec,
                       const std::function<void(size_t, size_t, int, int)>& progress);

}  // namespace shardctl::launcher
