// The cluster a data command (backup, restore, import) works on: the primaries that serve the
// slots, in slot order, and the table that routes a key to its primary.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/plan.h"

namespace shardctl::launcher {

struct ServingCluster {
  std::vector<common::NodeLine> primaries;  // each serving slots, by its first slot
  common::SlotTable table;
};

// As the first shard that answers sees it. An error when the cluster is not ok: a slot without
// an owner, or a primary failing (a copy would miss or misroute its keys).
common::Result<ServingCluster> ReadServingCluster(const Access& access, const Plan& plan);
// ReadServingCluster() again every 200 ms until the cluster is ok and every primary answers, or
// `patience` has passed (then its last error): for a run again after a kill, which may have left
// a primary restarting.
common::Result<ServingCluster> WaitForServingCluster(const Access& access, const Plan& plan,
                                                     std::chrono::milliseconds patience);

// One connection to each primary, in order.
common::Result<std::vector<RedisConnection>> ConnectPrimaries(
    const Access& access, const std::vector<common::NodeLine>& primaries);

// DBSIZE of each primary, in order.
common::Result<std::vector<uint64_t>> CountKeys(const Access& access,
                                                const std::vector<common::NodeLine>& primaries);

// Sum of CountKeys.
common::Result<uint64_t> TotalKeys(const Access& access,
                                   const std::vector<common::NodeLine>& primaries);

// How keys left the primaries by themselves, from INFO stats (expired_keys, evicted_keys), one
// entry per primary in the order given.
struct KeyDepartures {
  std::vector<uint64_t> expired;
  std::vector<uint64_t> evicted;
  // The departures since `before` (the same primaries). A primary whose counters went back has
  // restarted since: its count starts from 0 again.
  KeyDepartures Since(const KeyDepartures& before) const;
  uint64_t TotalExpired() const;
  uint64_t TotalEvicted() const;
};

common::Result<KeyDepartures> ReadKeyDepartures(const Access& access,
                                                const std::vector<common::NodeLine>& primaries);

}  // namespace shardctl::launcher
