// Which slots move where: the pure half of rebalancing, scaling and explicit moves. The cluster's
// current owners (and optionally a weight per slot) in, a list of source -> target moves out; no
// sockets, so every rule is table-tested. The moving itself is cluster/slot_mover.h.
//
// Rules:
//   - Balanced means every receiving primary's load (slot count, keys or bytes) is its share of the
//     total; with --threshold, nothing moves unless some primary is further than that fraction of
//     its share from it (redis-cli's rebalance rule, so the tools agree on "already balanced").
//   - Only what must move moves: donors give from their highest slots down, receivers take in slot
//     order, so ranges stay contiguous and each move is a few ranges, not thousands of slots.
//   - Drained primaries give everything but the slots they keep; they never receive.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "common/slots.h"

namespace shardctl::launcher {

enum class BalanceBy { kSlots, kKeys, kMemory, kLoad };

// "slots" / "keys" / "memory" / "load".
const char* BalanceByName(BalanceBy by);
common::Result<BalanceBy> ParseBalanceBy(const std::string& text);

// A primary as the balancer sees it.
struct SlotOwner {
  std::string id;                        // cluster node ID
  int shard = -1;                        // shardctl's shard index, -1 when not ours
  std::vector<common::SlotRange> slots;  // what it owns now
  bool drain = false;                    // give every slot away, receive none
  std::vector<int> keep;                 // ... but these: a drained owner keeps them (hot slots)
};

// first..last of `source`'s slots go to `target` (positions in the owner list).
struct SlotMove {
  int source = 0;
  int target = 0;
  std::vector<common::SlotRange> ranges;
  int SlotCount() const;
  friend bool operator==(const SlotMove&, const SlotMove&) = default;
};

struct BalanceRequest {
  std::vector<SlotOwner> owners;
  // Weight of each of the 16384 slots (keys in it, or estimated bytes); empty = every slot 1.
  std::vector<double> slot_weights;
  // Nothing moves unless some receiver's load is further than this fraction of its share from
  // it (0.02 for 2%). Ignored when a primary is drained or owns nothing (it must be fixed).
  double threshold = 0;
};

// The moves that balance the owners. Empty when already balanced within the threshold. Errors:
// no receiving primary, or an unassigned slot (fix the cluster first).
common::Result<std::vector<SlotMove>> PlanBalance(const BalanceRequest& request);

// The load of each owner under `weights` (slot counts when empty), in owner order.
std::vector<double> OwnerLoads(const std::vector<SlotOwner>& owners,
                               const std::vector<double>& weights);

// The moves that give `ranges` to owners[target]. Every range must be owned by some other owner;
// errors name a slot nobody owns, a slot the target already owns, and ranges that overlap.
common::Result<std::vector<SlotMove>> PlanExplicitMove(const std::vector<SlotOwner>& owners,
                                                       const std::vector<common::SlotRange>& ranges,
                                                       int target);

}  // namespace shardctl::launcher
