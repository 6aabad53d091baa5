#include "launcher/cluster/slot_balance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>

#include "common/numbers.h"

namespace shardctl::launcher {
namespace {

// Slots nobody serves mean their primary did not answer (stopped, hung, restarting): handing its
// slots to another node would orphan the keys it still holds, so nothing is moved.
constexpr const char* kOwnerNotAnswering =
    "the primary that serves them did not answer (see shardctl status: wait for it, restart it, "
    "or let its replica take over, then run this again); nothing was moved";

using common::AppendSlot;
using common::kSlotCount;
using common::SlotRange;

constexpr int kNobody = -1;

// owner position of each slot, kNobody where none.
using OwnerOfSlot = std::array<int, kSlotCount>;

OwnerOfSlot OwnerOfEachSlot(const std::vector<SlotOwner>& owners) {
  OwnerOfSlot owner_of;
  owner_of.fill(kNobody);
  for (size_t i = 0; i < owners.size(); ++i) {
    for (const auto& range : owners[i].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) owner_of[slot] = static_cast<int>(i);
    }
  }
  return owner_of;
}

// The ranges of slots nobody owns, "" when every slot has an owner.
std::string Unowned(const OwnerOfSlot& owner_of) {
  std::vector<SlotRange> missing;
  for (int slot = 0; slot < kSlotCount; ++slot) {
    if (owner_of[slot] == kNobody) AppendSlot(missing, slot);
  }
  return FormatSlotRanges(missing);
}

// Each slot's weight. Weighted balancing adds a thousandth of the mean to every slot, so empty
// slots still spread evenly instead of piling up on one primary.
std::vector<double> EffectiveWeights(const std::vector<double>& weights) {
  if (weights.empty()) return std::vector<double>(kSlotCount, 1.0);
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const double floor = std::max(total, 1.0) / kSlotCount * 1e-3;
  std::vector<double> effective(weights);
  for (double& weight : effective) weight += floor;
  return effective;
}

// What each owner should hold once balanced: the total split evenly over receivers. Counting
// slots, the split is in whole slots and the remainder goes to the receivers holding most now.
std::vector<double> DesiredLoads(const std::vector<SlotOwner>& owners,
                                 const std::vector<double>& loads, bool whole_slots) {
  std::vector<int> receivers;
  for (size_t i = 0; i < owners.size(); ++i) {
    if (!owners[i].drain) receivers.push_back(static_cast<int>(i));
  }
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  std::vector<double> desired(owners.size(), 0.0);
  const int count = static_cast<int>(receivers.size());
  if (!whole_slots) {
    for (int i : receivers) desired[i] = total / count;
    return desired;
  }
  std::stable_sort(receivers.begin(), receivers.end(),
                   [&](int a, int b) { return loads[a] > loads[b]; });
  for (int rank = 0; rank < count; ++rank) {
    desired[receivers[rank]] = kSlotCount / count + (rank < kSlotCount % count ? 1 : 0);
  }
  return desired;
}

// True when moving is called for: a drained owner, a receiver with nothing, or a receiver further
// than `threshold` of its share from it.
bool OutOfBalance(const BalanceRequest& request, const std::vector<double>& loads,
                  const std::vector<double>& desired) {
  for (size_t i = 0; i < request.owners.size(); ++i) {
    const SlotOwner& owner = request.owners[i];
    if (owner.drain) {
      int owned = 0;
      for (const auto& range : owner.slots) owned += range.size();
      if (owned > static_cast<int>(owner.keep.size())) return true;
      continue;
    }
    if (owner.slots.empty()) return true;
    const double off = std::abs(loads[i] - desired[i]);
    if (off > request.threshold * desired[i] && off >= 0.5) return true;
  }
  return false;
}

struct Given {
  int slot;
  int source;
};

// Slots donors give: all of a drained owner's, and an overloaded owner's from its highest slot
// down while giving one brings it closer to its share.
std::vector<Given> SlotsToGive(const OwnerOfSlot& owner_of, const std::vector<SlotOwner>& owners,
                               std::vector<double>& loads, const std::vector<double>& desired,
                               const std::vector<double>& weights) {
  std::vector<Given> given;
  for (int slot = kSlotCount - 1; slot >= 0; --slot) {
    const int source = owner_of[slot];
    const double weight = weights[slot];
    const auto& keep = owners[source].keep;
    if (std::find(keep.begin(), keep.end(), slot) != keep.end()) continue;
    if (owners[source].drain || loads[source] - weight / 2 >= desired[source]) {
      given.push_back({slot, source});
      loads[source] -= weight;
    }
  }
  std::reverse(given.begin(), given.end());
  return given;
}

// The receiver that lacks the most.
int NeediestReceiver(const std::vector<SlotOwner>& owners, const std::vector<double>& loads,
                     const std::vector<double>& desired) {
  int best = kNobody;
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i].drain) continue;
    if (best == kNobody || desired[i] - loads[i] > desired[best] - loads[best]) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

// Groups (slot, source, target) assignments into moves, in order of first appearance.
class MoveCollector {
 public:
  void Add(int slot, int source, int target) {
    auto [it, fresh] = position_.try_emplace({source, target}, static_cast<int>(moves_.size()));
    if (fresh) moves_.push_back({.source = source, .target = target, .ranges = {}});
    AppendSlot(moves_[it->second].ranges, slot);
  }
  std::vector<SlotMove> Take() { return std::move(moves_); }

 private:
  std::map<std::pair<int, int>, int> position_;
  std::vector<SlotMove> moves_;
};

}  // namespace

const char* BalanceByName(BalanceBy by) {
  switch (by) {
    case BalanceBy::kSlots:
      return "slots";
    case BalanceBy::kKeys:
      return "keys";
    case BalanceBy::kMemory:
      return "memory";
    case BalanceBy::kLoad:
      return "load";
  }
  return "slots";
}

common::Result<BalanceBy> ParseBalanceBy(const std::string& text) {
  for (BalanceBy by : {BalanceBy::kSlots, BalanceBy::kKeys, BalanceBy::kMemory, BalanceBy::kLoad}) {
    if (text == BalanceByName(by)) return by;
  }
  return common::Error("--by " + text +
                       ": not a balance measure (use slots, keys, memory or load)");
}

int SlotMove::SlotCount() const {
  int count = 0;
  for (const auto& range : ranges) count += range.size();
  return count;
}

std::vector<double> OwnerLoads(const std::vector<SlotOwner>& owners,
                               const std::vector<double>& weights) {
  std::vector<double> loads(owners.size(), 0.0);
  for (size_t i = 0; i < owners.size(); ++i) {
    for (const auto& range : owners[i].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        loads[i] += weights.empty() ? 1.0 : weights[slot];
      }
    }
  }
  return loads;
}

common::Result<std::vector<SlotMove>> PlanBalance(const BalanceRequest& request) {
  const auto& owners = request.owners;
  if (std::none_of(owners.begin(), owners.end(), [](const SlotOwner& o) { return !o.drain; })) {
    return common::Error("no primary left to take the slots (keep at least one shard)");
  }
  if (!request.slot_weights.empty() && request.slot_weights.size() != kSlotCount) {
    return common::Error("slot weights: need 16384, got " +
                         std::to_string(request.slot_weights.size()));
  }
  const OwnerOfSlot owner_of = OwnerOfEachSlot(owners);
  if (const std::string missing = Unowned(owner_of); !missing.empty()) {
    return common::Error("slots " + missing + " have no live owner: " + kOwnerNotAnswering);
  }
  const bool whole_slots = request.slot_weights.empty();
  const std::vector<double> weights = EffectiveWeights(request.slot_weights);
  std::vector<double> loads = OwnerLoads(owners, weights);
  const std::vector<double> desired = DesiredLoads(owners, loads, whole_slots);
  if (!OutOfBalance(request, loads, desired)) return std::vector<SlotMove>{};

  MoveCollector moves;
  int receiver = kNobody;
  for (const Given& give : SlotsToGive(owner_of, owners, loads, desired, weights)) {
    const double weight = weights[give.slot];
    // Stay with one receiver while it still lacks about this much: contiguous ranges.
    if (receiver == kNobody || desired[receiver] - loads[receiver] < weight / 2) {
      receiver = NeediestReceiver(owners, loads, desired);
    }
    loads[receiver] += weight;
    if (receiver != give.source) moves.Add(give.slot, give.source, receiver);
  }
  return moves.Take();
}

common::Result<std::vector<SlotMove>> PlanExplicitMove(const std::vector<SlotOwner>& owners,
                                                       const std::vector<SlotRange>& ranges,
                                                       int target) {
  if (target < 0 || target >= static_cast<int>(owners.size())) {
    return common::Error("no such primary to move slots to");
  }
  const OwnerOfSlot owner_of = OwnerOfEachSlot(owners);
  MoveCollector moves;
  for (const auto& range : ranges) {
    for (int slot = range.first; slot <= range.last; ++slot) {
      if (owner_of[slot] == kNobody) {
        return common::Error("slot " + std::to_string(slot) +
                             " has no live owner: " + kOwnerNotAnswering);
      }
      // Already there: moving again is a no-op, so the command can be repeated safely.
      if (owner_of[slot] != target) moves.Add(slot, owner_of[slot], target);
    }
  }
  return moves.Take();
}

}  // namespace shardctl::launcher
