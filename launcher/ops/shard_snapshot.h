// One shard's keys kept across its restart, over RESP (restart.h says when each path is taken).
// Nothing here prints.
//
//   PauseAndSnapshot: CLIENT PAUSE WRITE (writes wait, none is refused; renewed while it works)
//                     ─▶ BGSAVE (after any fork already running) ─▶ until it ends ok
//   WaitUntilServing: loading:0, and a replica linked to its primary with its sync done
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "common/result.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

// What a running shard is before it stops.
struct ShardState {
  bool primary = false;
  long long connected_replicas = 0;
  long long keys = 0;
};

// Asks the shard at host:port; an error when it does not answer INFO and DBSIZE.
common::Result<ShardState> InspectShard(const Access& access, const std::string& host, int port);

// How long writes stay held after PauseAndSnapshot returns, unless the shard exits first.
inline constexpr int kPauseSeconds = 30;

// Holds the shard's writes and snapshots it in the background (BGSAVE: the shard keeps answering
// PING and the cluster bus, so neither the supervisor nor its peers take it for hung). On success
// the pause stays (for `hold` after the last renewal, or until the process exits), so no
// write is acknowledged after the snapshot; returns the keys it holds. On failure the pause is
// lifted and the error names the shard and why (a full disk: rdb_last_bgsave_status:err).
// `interrupted` (may be null) set while it works lifts the pause and ends it with an error.
common::Result<long long> PauseAndSnapshot(
    const Access& access, const std::string& host, int port, int index,
    const std::atomic<bool>* interrupted,
    std::chrono::seconds hold = std::chrono::seconds(kPauseSeconds));

// Lifts a pause PauseAndSnapshot left (the restart was refused).
void Unpause(const Access& access, const std::string& host, int port);

// Renews a pause PauseAndSnapshot left for another `hold` (nothing when the shard is gone).
void KeepWritesHeld(const Access& access, const std::string& host, int port,
                    std::chrono::seconds hold);

// Waits until the shard serves its data: loaded (loading:0) and, for a replica, linked to its
// primary with the full sync done. Returns its key count.
common::Result<long long> WaitUntilServing(const Access& access, const std::string& host, int port);

}  // namespace shardctl::launcher
