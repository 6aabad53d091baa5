#include "launcher/cluster/load_balance.h"

#include <algorithm>
#include <numeric>

namespace shardctl::launcher {
namespace {

using common::kSlotCount;

// Each owner's load once `moves` are done.
std::vector<double> LoadsAfter(const std::vector<SlotOwner>& owners,
                               const std::vector<SlotMove>& moves,
                               const std::vector<double>& slot_load) {
  std::vector<double> loads = OwnerLoads(owners, slot_load);
  for (const auto& move : moves) {
    for (const auto& range : move.ranges) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        loads[static_cast<size_t>(move.source)] -= slot_load[static_cast<size_t>(slot)];
        loads[static_cast<size_t>(move.target)] += slot_load[static_cast<size_t>(slot)];
      }
    }
  }
  return loads;
}

}  // namespace

common::Result<LoadPlan> PlanLoadBalance(const std::vector<SlotOwner>& owners,
                                         const std::vector<double>& slot_load, double threshold) {
  if (slot_load.size() != static_cast<size_t>(kSlotCount)) {
    return common::Error("slot loads: need 16384, got " + std::to_string(slot_load.size()));
  }
  const double total = std::accumulate(slot_load.begin(), slot_load.end(), 0.0);
  if (total <= 0) {
    return common::Error(
        "no load was measured in the window (run it while the deployment serves its usual "
        "traffic, or give it a longer --window)");
  }
  size_t receivers = 0;
  for (const auto& owner : owners) receivers += owner.drain ? 0 : 1;
  const double fair = total / static_cast<double>(std::max<size_t>(receivers, 1));
  LoadPlan plan{.moves = {}, .hot = {}, .before = OwnerLoads(owners, slot_load), .after = {}};
  std::vector<SlotOwner> balanced = owners;
  std::vector<double> weights = slot_load;
  for (size_t owner = 0; owner < owners.size(); ++owner) {
    if (owners[owner].drain) continue;
    for (const auto& range : owners[owner].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        const double load = slot_load[static_cast<size_t>(slot)];
        if (load <= fair) continue;
        plan.hot.push_back({.slot = slot, .owner = static_cast<int>(owner), .share = load / fair});
        SlotOwner& alone = balanced[owner];
        alone.drain = true;
        alone.keep.push_back(slot);
        weights[static_cast<size_t>(slot)] = 0;  // not part of what the others share
      }
    }
  }
  std::sort(plan.hot.begin(), plan.hot.end(), [](const HotSlot& a, const HotSlot& b) {
    return a.share != b.share ? a.share > b.share : a.slot < b.slot;
  });
  // Every primary holding a hot slot: nobody left to share the rest is the cluster's limit, not
  // an error; nothing moves.
  const bool anyone_left =
      std::any_of(balanced.begin(), balanced.end(), [](const SlotOwner& o) { return !o.drain; });
  if (anyone_left) {
    auto moves = PlanBalance({.owners = balanced, .slot_weights = weights, .threshold = threshold});
    if (!moves.ok()) return moves.error();
    plan.moves = std::move(moves).value();
  }
  plan.after = LoadsAfter(owners, plan.moves, slot_load);
  return plan;
}

}  // namespace shardctl::launcher
