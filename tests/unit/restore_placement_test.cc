// PlanPlacement: a backup goes back file by file only onto primaries serving exactly its files'
// slots; every other shape is copied key by key, with the reason said.
#include "launcher/ops/restore_placement.h"

#include <gtest/gtest.h>

#include "common/slots.h"

namespace shardctl::launcher {
namespace {

using common::SlotRange;

std::vector<std::vector<SlotRange>> Even(int primaries) {
  std::vector<std::vector<SlotRange>> ranges;
  for (const auto& range : common::SplitSlotsEvenly(primaries)) ranges.push_back({range});
  return ranges;
}

std::vector<std::string> FilesOf(const std::vector<std::vector<SlotRange>>& primaries) {
  std::vector<std::string> files;
  for (const auto& ranges : primaries) files.push_back(common::FormatSlotRanges(ranges));
  return files;
}

TEST(RestorePlacementTest, SameEvenSplitPlacesFileKOnPrimaryK) {
  for (int shards : {1, 3, 40}) {
    const Placement placement = PlanPlacement(FilesOf(Even(shards)), Even(shards));
    ASSERT_TRUE(placement.ok()) << placement.why_not;
    ASSERT_EQ(placement.primary_of_file.size(), static_cast<size_t>(shards));
    for (size_t k = 0; k < placement.primary_of_file.size(); ++k) {
      EXPECT_EQ(placement.primary_of_file[k], k);
    }
  }
}

TEST(RestorePlacementTest, PrimariesListedInAnotherOrderAreMatchedBySlots) {
  auto primaries = Even(3);
  std::swap(primaries[0], primaries[2]);
  const Placement placement = PlanPlacement(FilesOf(Even(3)), primaries);
  ASSERT_TRUE(placement.ok()) << placement.why_not;
  EXPECT_EQ(placement.primary_of_file, (std::vector<size_t>{2, 1, 0}));
}

TEST(RestorePlacementTest, SlotSetsCompareNotTheirSpelling) {
  const std::vector<std::vector<SlotRange>> primaries = {{{0, 8191}}, {{8192, 16383}}};
  const Placement placement = PlanPlacement({"0-4095,4096-8191", "8192-16383"}, primaries);
  ASSERT_TRUE(placement.ok()) << placement.why_not;
  EXPECT_EQ(placement.primary_of_file, (std::vector<size_t>{0, 1}));
}

TEST(RestorePlacementTest, OtherShapesAreCopiedWithTheReason) {
  struct Case {
    std::vector<std::string> files;
    std::vector<std::vector<SlotRange>> primaries;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {FilesOf(Even(3)), Even(8), "the backup has 3 files, the deployment 8 primaries"},
      {FilesOf(Even(2)), Even(1), "the backup has 2 files, the deployment 1 primaries"},
      // Same count, slots moved since (a rebalance): file 0's slots are split over two primaries.
      {{"0-8191", "8192-16383"},
       {{{0, 8000}}, {{8001, 16383}}},
       "no primary serves exactly the slots of file 0 (0-8191)"},
      // Two files cannot both go to one primary.
      {{"0-99", "0-99"},
       {{{0, 99}}, {{100, 16383}}},
       "no primary serves exactly the slots of file 1"},
      {{"x", "8192-16383"}, Even(2), "file 0: "},
  };
  for (const auto& c : cases) {
    const Placement placement = PlanPlacement(c.files, c.primaries);
    EXPECT_FALSE(placement.ok());
    EXPECT_TRUE(placement.primary_of_file.empty());
    EXPECT_NE(placement.why_not.find(c.reason), std::string::npos) << placement.why_not;
  }
}

}  // namespace
}  // namespace shardctl::launcher
