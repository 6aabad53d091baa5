// Commands that concern the whole keyspace, not one key: sent to every primary (or to any one)
// and their replies made into one. Pure: requests and reply frames in, frames out.
//
//   DBSIZE ──▶ every primary ──▶ :3 :5 :2 ──MergeFanOut(kSumIntegers)──▶ :10
//   SCAN 0 ──▶ shard 0 "SCAN 0" ──▶ "17" + keys ──RewriteScanReply──▶ cursor 17<<10|0
//   SCAN c ──DecodeScanCursor──▶ (shard c&1023, cursor c>>10); a shard's 0 moves on to the next
//            shard, the last shard's 0 ends the iteration: every key is returned exactly once
//            while the slot map and the key set stay the same (Redis' SCAN guarantee per shard).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::proxy {

enum class FanOutMerge {
  kSumIntegers,       // DBSIZE: the counts added up
  kConcatArrays,      // KEYS: every shard's keys, one array
  kAllOk,             // FLUSHALL, FLUSHDB, SCRIPT FLUSH, FUNCTION FLUSH/DELETE: +OK if all are
  kSameReply,         // SCRIPT LOAD, FUNCTION LOAD: every shard must answer the same (sha, name)
  kAndIntegerArrays,  // SCRIPT EXISTS: 1 only where every shard has the script
  kAnyNonNull,        // RANDOMKEY: a non-null reply, looking from a rotating shard
  kFirst,             // CONFIG GET, FUNCTION LIST: one shard speaks for all
  kMinInteger,        // WAIT: the fewest replicas any shard counted
  kUniqueArrays,      // PUBSUB CHANNELS/SHARDCHANNELS: every shard's names, each once
  kSumPairs,          // PUBSUB NUMSUB/SHARDNUMSUB: name, count pairs, counts added by position
  kAnyOk,             // SCRIPT KILL, FUNCTION KILL: +OK if one shard stopped a script, else the
                      // error of a shard that has one running (BUSY: the other kind, UNKILLABLE),
                      // else the first shard's (NOTBUSY when none was running)
  kRunningScript,     // FUNCTION STATS: the reply of the shard running a script, else the first
  kHistograms,        // LATENCY HISTOGRAM: MergeLatencyHistograms
  kNewestEntries,     // SLOWLOG GET: every shard's entries, newest first, at most `limit`
};

struct FanOutPlan {
  bool every_shard = true;  // false: any one shard will do
  FanOutMerge merge = FanOutMerge::kFirst;
  int64_t limit = -1;  // kNewestEntries: how many entries the client asked for (-1: all)
};

// How to run a fan-out command (args[0] is the command; the table said RouteKind::kFanOut).
// Server-wide commands that change state (CONFIG SET, CONFIG RESETSTAT, FUNCTION RESTORE, SAVE)
// run on every primary and fail as a whole: the first shard's error is the client's. Errors are
// RESP error texts, for subcommands whose answer would describe one shard only.
common::Result<FanOutPlan> PlanFanOut(std::span<const std::string_view> args);

// One reply from the shards' replies (one complete frame each, in shard order). Any error reply
// is passed through as is (the first one); a reply of an unexpected shape becomes
// "-ERR shardproxy: ..." naming the problem. `start` rotates kAnyNonNull's search; `limit` is
// FanOutPlan::limit.
std::string MergeFanOut(FanOutMerge merge, std::span<const std::string_view> replies,
                        size_t start = 0, int64_t limit = -1);

// SLOWLOG GET from every shard's reply: the entries (Redis' [id, unix time, microseconds, args,
// client, name] arrays) of all shards, newest first by their unix time, at most `limit` (-1: all).
std::string MergeNewestEntries(std::span<const std::string_view> replies, int64_t limit);

// LATENCY HISTOGRAM from every shard's reply (RESP2 arrays or RESP3 maps, answered in the same
// shape): each command once; a keyed command's calls and buckets summed, a command the proxy
// sends to every shard (CONFIG, FLUSHALL, ...) counted once: the shard that counted most
// (latency_histogram.cc).
std::string MergeLatencyHistograms(std::span<const std::string_view> replies);

// The proxy's SCAN cursor: which shard, and that shard's own cursor.
struct ScanPosition {
  size_t shard = 0;
  uint64_t cursor = 0;
  friend bool operator==(const ScanPosition&, const ScanPosition&) = default;
};
inline constexpr int kScanShardBits = 10;  // up to 1024 primaries, as shardctl plans

// Decodes a client's cursor; "ERR invalid cursor" (Redis' words) for text that is not one, or
// that names a shard the cluster does not have.
common::Result<ScanPosition> DecodeScanCursor(std::string_view text, size_t shards);
// The cursor the client sees for `position`.
std::string EncodeScanCursor(ScanPosition position);

// Rewrites shard `shard`'s SCAN reply ("*2 <cursor> <keys>") so its cursor is the proxy's: the
// shard's next cursor, or the next shard's start when the shard is done, or "0" after the last.
std::string RewriteScanReply(std::string_view reply, size_t shard, size_t shards);

}  // namespace shardctl::proxy
