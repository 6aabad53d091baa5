#include "launcher/ops/restore_placement.h"

#include <bitset>

namespace shardctl::launcher {
namespace {

using SlotSet = std::bitset<16384>;

SlotSet SetOf(const std::vector<common::SlotRange>& ranges) {
  SlotSet set;
  for (const auto& range : ranges) {
    for (int slot = range.first; slot <= range.last; ++slot) set.set(static_cast<size_t>(slot));
  }
  return set;
}

Placement NotPlaced(std::string why) { return {.primary_of_file = {}, .why_not = std::move(why)}; }

}  // namespace

Placement PlanPlacement(const std::vector<std::string>& file_slots,
                        const std::vector<std::vector<common::SlotRange>>& primary_slots) {
  if (file_slots.size() != primary_slots.size()) {
    return NotPlaced("the backup has " + std::to_string(file_slots.size()) +
                     " files, the deployment " + std::to_string(primary_slots.size()) +
                     " primaries");
  }
  std::vector<SlotSet> primaries;
  for (const auto& ranges : primary_slots) primaries.push_back(SetOf(ranges));
  std::vector<bool> taken(primaries.size(), false);
  Placement placement;
  for (size_t k = 0; k < file_slots.size(); ++k) {
    auto ranges = common::ParseSlotRanges(file_slots[k]);
    if (!ranges.ok())
      return NotPlaced("file " + std::to_string(k) + ": " + ranges.error().message());
    const SlotSet wanted = SetOf(*ranges);
    size_t match = primaries.size();
    for (size_t p = 0; p < primaries.size(); ++p) {
      if (!taken[p] && primaries[p] == wanted) match = p;
    }
    if (match == primaries.size()) {
      return NotPlaced("no primary serves exactly the slots of file " + std::to_string(k) + " (" +
                       file_slots[k] + ")");
    }
    taken[match] = true;
    placement.primary_of_file.push_back(match);
  }
  return placement;
}

}  // namespace shardctl::launcher
