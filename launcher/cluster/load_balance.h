// `rebalance --by load`: which slots move so that every primary's measured load (CPU µs its
// slots used over a window, from CLUSTER SLOT-STATS) is near the mean. Pure, table-tested.
//
//   - A slot hotter than one primary's fair share (the total over the primaries) cannot be split:
//     moving it only moves the hot spot. It stays where it is, named, and its primary gives every
//     other slot away and takes none, so it serves that slot alone.
//   - The other slots are balanced by load over the other primaries (slot_balance.h: nothing
//     moves unless some primary is further than `threshold` from its share; donors give from
//     their highest slots, ranges stay contiguous).
#pragma once

#include <vector>

#include "common/result.h"
#include "launcher/cluster/slot_balance.h"

namespace shardctl::launcher {

struct HotSlot {
  int slot = 0;
  int owner = 0;     // position in the owner list
  double share = 0;  // its load over one primary's fair share (> 1)
  friend bool operator==(const HotSlot&, const HotSlot&) = default;
};

struct LoadPlan {
  std::vector<SlotMove> moves;
  std::vector<HotSlot> hot;    // hottest first
  std::vector<double> before;  // each owner's load now
  std::vector<double> after;   // and once the moves are done (the prediction)
};

// `slot_load`: 16384 loads (CPU µs in the window). Errors: no load at all (nothing measured), or
// what PlanBalance refuses (an unowned slot).
common::Result<LoadPlan> PlanLoadBalance(const std::vector<SlotOwner>& owners,
                                         const std::vector<double>& slot_load, double threshold);

}  // namespace shardctl::launcher
