// Per-slot load from the primaries' own counters: CLUSTER SLOT-STATS (Valkey 8+, Redis 8.2+),
// whose CPU figure counts only while cluster-slot-stats-enabled is yes. Redis 7.0 has no such
// counters: the error says so rather than making a number up.
//
//   every primary: CONFIG GET the setting, SET it yes ─▶ SLOT-STATS of its slots and INFO cpu
//   (before) ─▶ the window ─▶ the same again (after) ─▶ the setting put back as it was
//   each slot's load: the CPU µs its commands executed (cpu-usec), plus its part of what its
//   process spent besides executing them (reading, parsing, replying: used_cpu_user+sys minus
//   the slots' cpu-usec), shared by the bytes each slot's requests and replies took. For small
//   commands that part is most of a shard's CPU, so a slot taking many cheap requests counts.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/slot_balance.h"
#include "launcher/cluster/slot_mover.h"

namespace shardctl::launcher {

// One slot's counters as CLUSTER SLOT-STATS gives them.
struct SlotStat {
  uint64_t keys = 0;
  uint64_t cpu_usec = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
  friend bool operator==(const SlotStat&, const SlotStat&) = default;
};

// Parses a SLOT-STATS reply as RedisConnection::Run gives it (the nested arrays' elements one
// per line: slot, then name and value pairs). Errors name what is malformed.
common::Result<std::map<int, SlotStat>> ParseSlotStats(const std::string& text);

// Counters read at one moment: every slot's (by slot number) and each node's process CPU (by
// position in the owner list).
struct LoadSample {
  std::vector<SlotStat> slots;
  std::vector<double> process_cpu_usec;
};

// Each slot's load between two samples, as the header says. Pure.
std::vector<double> SlotLoads(const LoadSample& before, const LoadSample& after,
                              const std::vector<SlotOwner>& owners);

// Turns per-slot counting (cluster-slot-stats-enabled) on where it is off, for as long as it
// lives, and puts each node it switched back to "no" when it goes: let it go out of scope after a
// signal ends the caller's loop, and the nodes are as they were.
class SlotCounting {
 public:
  explicit SlotCounting(Access access) : access_(std::move(access)) {}
  SlotCounting(const SlotCounting&) = delete;
  SlotCounting& operator=(const SlotCounting&) = delete;
  ~SlotCounting();

  // Turns it on at `node` over `connection`: true when on, false when the engine has no per-slot
  // counters (CLUSTER SLOT-STATS: Valkey 8+, Redis 8.2+); errors when the node refuses.
  common::Result<bool> Enable(RedisConnection& connection, const MoveNode& node);

 private:
  Access access_;
  std::vector<MoveNode> switched_;
};

// The CPU µs each of the 16384 slots used over `window`, from `nodes` (each asked for the slots
// `owners` at the same position says it owns). `stop` (may be null) cuts the window short.
common::Result<std::vector<double>> MeasureSlotCpu(const Access& access,
                                                   const std::vector<MoveNode>& nodes,
                                                   const std::vector<SlotOwner>& owners,
                                                   std::chrono::milliseconds window,
                                                   const std::atomic<bool>* stop);

}  // namespace shardctl::launcher
