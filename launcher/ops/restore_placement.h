// Whether a backup can go back file by file (restore's fast path): pure, from the manifest's slot
// ranges and the primaries' own. When each file's slots are exactly one primary's, that primary
// loads the file as its own snapshot; otherwise keys are copied to their slots' owners.
#pragma once

#include <string>
#include <vector>

#include "common/slots.h"

namespace shardctl::launcher {

struct Placement {
  // primary_of_file[k]: the index (into the primaries given) of the primary that loads file k.
  // Empty when the backup cannot be placed.
  std::vector<size_t> primary_of_file;
  // Why not, one clause for the report ("the backup has 3 files, the deployment 8 primaries").
  std::string why_not;
  bool ok() const { return why_not.empty(); }
};

// `file_slots`: each file's "slots" as the manifest writes them ("0-5460"); `primary_slots`: the
// ranges each primary serves now. Slot sets are compared, not their spelling ("0-9" equals
// "0-4,5-9").
Placement PlanPlacement(const std::vector<std::string>& file_slots,
                        const std::vector<std::vector<common::SlotRange>>& primary_slots);

}  // namespace shardctl::launcher
