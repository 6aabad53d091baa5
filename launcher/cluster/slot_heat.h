// Which slots are hot, from two readings of the counters: CLUSTER SLOT-STATS on the primaries
// (key-count always; cpu-usec and network bytes while cluster-slot-stats-enabled is yes) and, when
// a shardproxy routes for the deployment, its per-slot request counts (PROXY SLOTS). Pure: the
// readings come in, the hottest slots and each primary's share of the work come out.
//
//   SlotReading (before) ─┐
//   SlotReading (after) ──┴─▶ HottestSlots() ─▶ busiest first (CPU, then requests), `limit` of them
//   INFO total_commands_processed (before, after) ─▶ LoadShares() ─▶ each primary's fraction
//
// A figure with no source stays nullopt (shown "-", JSON null): never a made-up number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/slot_stats.h"

namespace shardctl::launcher {

// Parses PROXY SLOTS as RedisConnection::Run gives it: "slot\nrequests\nslot\nrequests...",
// cumulative requests since the proxy started, nonzero slots only. Errors name what is malformed.
common::Result<std::map<int, uint64_t>> ParseProxySlots(const std::string& text);

// The deployment's per-slot counters at one moment.
struct SlotReading {
  std::vector<int> owner;  // shard index owning each of the 16384 slots, -1 unknown
  // By slot, from the owner's SLOT-STATS; empty when the engine has none (Redis 7.0).
  std::map<int, SlotStat> stats;
  bool cpu_counted = false;  // cluster-slot-stats-enabled was yes on every primary
  // What the primaries spent executing commands (INFO commandstats usec, summed), when `stats`
  // holds only some slots: the CPU share's denominator. Without it, the slots' own sum is.
  std::optional<uint64_t> executed_usec;
  // The proxy's cumulative requests per slot; nullopt when no proxy answered PROXY SLOTS.
  std::optional<std::map<int, uint64_t>> proxy;
};

// One slot over an interval.
struct SlotHeat {
  int slot = 0;
  int shard = -1;                        // its owner at the end of the interval
  std::optional<double> ops_per_second;  // requests the proxy routed to it
  std::optional<double> cpu_share;       // its cpu-usec / all slots' cpu-usec, 0..1
  std::optional<uint64_t> keys;          // at the end of the interval
  std::optional<double> bytes_in_per_second;
  std::optional<double> bytes_out_per_second;
  friend bool operator==(const SlotHeat&, const SlotHeat&) = default;
};

// The `limit` slots that took the most CPU between `before` and `after` (`seconds` apart), then
// the most proxied requests; slots that did nothing are left out. A counter that went down (the
// slot moved, the proxy restarted) counts from zero.
std::vector<SlotHeat> HottestSlots(const SlotReading& before, const SlotReading& after,
                                   double seconds, size_t limit);

// Pure: the usec of every cmdstat_* line of INFO commandstats, summed.
uint64_t CommandUsec(const std::string& commandstats);

// Each primary's fraction of the commands the primaries processed between two readings of
// INFO total_commands_processed (by position; nullopt: not a primary or did not answer). The
// shares of the primaries that answered both times sum to 1; all nullopt when they did nothing.
std::vector<std::optional<double>> LoadShares(const std::vector<std::optional<uint64_t>>& before,
                                              const std::vector<std::optional<uint64_t>>& after);

}  // namespace shardctl::launcher
