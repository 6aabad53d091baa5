// Whether slot moves fit in the memory of the primaries they go to, judged before anything moves.
// A MIGRATE into a primary at its maxmemory fails with OOM part way through a slot, which is left
// MIGRATING on one side and IMPORTING on the other, and running the command again fails the same
// way; a refusal up front moves nothing.
//
//   INFO memory + DBSIZE per primary ─┐
//   COUNTKEYSINSLOT per moved slot ────┼─▶ WhyMovesDoNotFit() ── the first primary out of room
//   the planned moves ────────────────┘
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/slot_balance.h"
#include "launcher/cluster/slot_mover.h"

namespace shardctl::launcher {

// A primary's memory as INFO memory and DBSIZE report it.
struct PrimaryMemory {
  std::string name;            // "shard 0", or host:port for a primary that is not ours
  uint64_t used = 0;           // used_memory less mem_not_counted_for_evict, as the engine counts
  uint64_t maxmemory = 0;      // 0: no cap, or an allkeys-* policy (it evicts): anything fits
  uint64_t bytes_per_key = 0;  // used_memory_dataset / DBSIZE: what an average key costs it
};

// The share of a target's maxmemory its projected use may reach: the per-key cost is an average
// and a MIGRATE batch is held in the target's buffers while it is restored.
inline constexpr double kMoveMemoryBudget = 0.9;
// Finishing a move that was left open may take its target closer to its maxmemory: a slot left
// open is worse than a full shard. Not all the way: the estimate is an average, and the last
// MIGRATE batches need buffer room while they are restored.
inline constexpr double kFinishMemoryBudget = 0.95;

// The first primary that would pass `budget` (a share) of its maxmemory once every move into it
// has landed (what it holds now plus each incoming key at its source's bytes per key; what it
// gives away is not subtracted, since moves may land first).
struct OutOfRoom {
  size_t primary = 0;  // index into the memory table
  uint64_t projected = 0;
  uint64_t incoming_keys = 0;
  uint64_t incoming_bytes = 0;
};

// `memory` is in owner order (SlotMove::source / target index it); keys_moved[i] is the number
// of keys moves[i] carries.
std::optional<OutOfRoom> FirstOutOfRoom(const std::vector<PrimaryMemory>& memory,
                                        const std::vector<SlotMove>& moves,
                                        const std::vector<uint64_t>& keys_moved, double budget);

// Why planned moves do not fit (kMoveMemoryBudget): FirstOutOfRoom in words, with what to do
// instead, or nullopt.
std::optional<std::string> WhyMovesDoNotFit(const std::vector<PrimaryMemory>& memory,
                                            const std::vector<SlotMove>& moves,
                                            const std::vector<uint64_t>& keys_moved);

// Why the moves that slots were left open in (one SlotMove of one slot each, in `moves`) cannot
// be finished: the keys still on each source would take its target past kFinishMemoryBudget of
// its maxmemory. The usual cause is a move that ran out of memory part way, or one
// stopped while its target filled up.
std::optional<std::string> WhyOpenMovesCannotFinish(const std::vector<PrimaryMemory>& memory,
                                                    const std::vector<SlotMove>& moves,
                                                    const std::vector<uint64_t>& keys_moved);

// Asks the sources and targets of `moves` (`nodes` and `owners` in owner order) for their memory
// and each source for the keys of its moved slots, then WhyMovesDoNotFit. The error is "usage:
// <why>" (the request does not fit the deployment), or the node that could not be asked.
common::Status CheckRoomForMoves(const Access& access, const std::vector<SlotOwner>& owners,
                                 const std::vector<MoveNode>& nodes,
                                 const std::vector<SlotMove>& moves);

// The same for finishing the moves `open` slots were left in, before any key of them moves (a
// finish that runs out of memory part way fails again the same way). `nodes` are the live
// primaries, `owners` in the same order; a slot whose marker names a node that is not one of
// them is not checked (it is cleared, not moved).
common::Status CheckRoomToFinish(const Access& access, const std::vector<SlotOwner>& owners,
                                 const std::vector<MoveNode>& nodes,
                                 const std::vector<OpenSlot>& open);

}  // namespace shardctl::launcher
