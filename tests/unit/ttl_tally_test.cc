#include "launcher/cluster/ttl_tally.h"

#include <gtest/gtest.h>

#include <limits>

namespace shardctl::launcher {
namespace {

using std::chrono::milliseconds;

TEST(TtlTallyTest, KeysWithoutATtlNeverCountAsExpired) {
  TtlTally tally;
  tally.Add(-1);
  tally.Add(0);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(1'000'000'000)), 0u);
}

TEST(TtlTallyTest, ATtlCountsOnlyOnceItMayHaveRunOut) {
  TtlTally tally;
  tally.Add(3'600'000);  // an hour
  tally.Add(1'500);
  tally.Add(1);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(0)), 0u);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(1)), 1u);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(999)), 1u);
  // 1,500 ms is in the bucket from 1,024: counted from then on, never before its bucket starts.
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(1'024)), 2u);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(60'000)), 2u);
  EXPECT_EQ(tally.MayHaveExpired(milliseconds(3'600'000)), 3u);
}

TEST(TtlTallyTest, ItErrsTowardsMayHaveExpiredNeverTheOtherWay) {
  for (int64_t ttl : std::initializer_list<int64_t>{1, 2, 3, 1000, 1023, 1024, 1025, 86'400'000,
                                                    std::numeric_limits<int64_t>::max()}) {
    TtlTally tally;
    tally.Add(ttl);
    if (ttl < std::numeric_limits<int64_t>::max()) {
      EXPECT_EQ(tally.MayHaveExpired(milliseconds(ttl)), 1u) << ttl;
    }
    EXPECT_EQ(tally.MayHaveExpired(milliseconds(ttl / 2 - 1)), 0u) << ttl;
  }
}

TEST(TtlTallyTest, MergedTalliesAddUp) {
  TtlTally a, b;
  a.Add(10);
  b.Add(10);
  b.Add(100'000);
  a.Merge(b);
  EXPECT_EQ(a.MayHaveExpired(milliseconds(20)), 2u);
  EXPECT_EQ(a.MayHaveExpired(milliseconds(200'000)), 3u);
}

}  // namespace
}  // namespace shardctl::launcher
