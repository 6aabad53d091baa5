// Which engines count load per slot: CLUSTER SLOT-STATS and the setting
// cluster-slot-stats-enabled (its CPU and network counters count only while it is yes).
#pragma once

#include "launcher/model/deployment.h"

namespace shardctl::launcher {

// Pure: Valkey 8 and newer, Redis 8.2 and newer. RenderShardConfig turns the counters on there.
bool HasSlotStats(const Engine& engine);

}  // namespace shardctl::launcher
