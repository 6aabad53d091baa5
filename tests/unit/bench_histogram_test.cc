#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "launcher/bench/histogram.h"

namespace shardctl::launcher {
namespace {

TEST(BenchHistogramTest, EmptyReportsZero) {
  LatencyHistogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.ValueAtPercentile(50), 0u);
  EXPECT_EQ(histogram.max(), 0u);
  EXPECT_EQ(histogram.min(), 0u);
  EXPECT_EQ(histogram.Mean(), 0);
}

// Buckets tile the whole uint64 range: each starts right after the previous one ends.
TEST(BenchHistogramTest, BucketsAreContiguousAndOrdered) {
  EXPECT_EQ(LatencyHistogram::BucketLow(0), 0u);
  for (int bucket = 1; bucket < LatencyHistogram::kBucketCount; ++bucket) {
    ASSERT_EQ(LatencyHistogram::BucketLow(bucket), LatencyHistogram::BucketHigh(bucket - 1) + 1)
        << "bucket " << bucket;
  }
  EXPECT_EQ(LatencyHistogram::BucketHigh(LatencyHistogram::kBucketCount - 1), UINT64_MAX);
}

struct BucketCase {
  uint64_t value;
  int bucket;
};

class BenchBucketTest : public testing::TestWithParam<BucketCase> {};

TEST_P(BenchBucketTest, ValueLandsInItsBucket) {
  const auto& param = GetParam();
  int bucket = LatencyHistogram::BucketOf(param.value);
  EXPECT_EQ(bucket, param.bucket);
  EXPECT_LE(LatencyHistogram::BucketLow(bucket), param.value);
  EXPECT_GE(LatencyHistogram::BucketHigh(bucket), param.value);
}

INSTANTIATE_TEST_SUITE_P(Values, BenchBucketTest,
                         testing::Values(BucketCase{0, 0}, BucketCase{1, 1}, BucketCase{127, 127},
                                         BucketCase{128, 128},  // first 2-wide bucket
                                         BucketCase{129, 128}, BucketCase{130, 129},
                                         BucketCase{255, 191}, BucketCase{256, 192},
                                         BucketCase{UINT64_MAX,
                                                    LatencyHistogram::kBucketCount - 1}));

// Every representative value is within 1% of the values its bucket holds.
TEST(BenchHistogramTest, RelativeErrorBelowOnePercent) {
  for (uint64_t value : std::vector<uint64_t>{1, 99, 128, 1000, 12345, 999999, 1234567890123ull,
                                              (1ull << 40) + 17, UINT64_MAX / 3}) {
    LatencyHistogram histogram;
    histogram.Record(value);
    histogram.Record(UINT64_MAX);  // so the clamp to max does not hide the bucket's midpoint
    histogram.Record(0);
    uint64_t reported = histogram.ValueAtPercentile(50);
    double error = std::fabs(static_cast<double>(reported) - static_cast<double>(value)) /
                   static_cast<double>(value);
    EXPECT_LT(error, 0.01) << "value " << value << " reported as " << reported;
  }
}

TEST(BenchHistogramTest, PercentilesOfUniformValues) {
  LatencyHistogram histogram;
  for (uint64_t value = 1; value <= 100000; ++value) histogram.Record(value * 1000);
  struct Expect {
    double percentile;
    double value;
  };
  for (auto [percentile, value] : std::vector<Expect>{
           {50, 50000000}, {90, 90000000}, {99, 99000000}, {99.9, 99900000}, {0, 1000}}) {
    double reported = static_cast<double>(histogram.ValueAtPercentile(percentile));
    EXPECT_NEAR(reported, value, value * 0.01) << "p" << percentile;
  }
  EXPECT_EQ(histogram.ValueAtPercentile(100), 100000000u);
  EXPECT_EQ(histogram.max(), 100000000u);
  EXPECT_EQ(histogram.min(), 1000u);
  EXPECT_NEAR(histogram.Mean(), 50000500, 1);
}

// Merging per-thread histograms gives what one histogram of all values gives.
TEST(BenchHistogramTest, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram whole;
  LatencyHistogram odd;
  LatencyHistogram even;
  for (uint64_t value = 0; value < 50000; ++value) {
    uint64_t sample = value * value % 9999991;
    whole.Record(sample);
    (value % 2 ? odd : even).Record(sample);
  }
  odd.Merge(even);
  EXPECT_EQ(odd.count(), whole.count());
  EXPECT_EQ(odd.max(), whole.max());
  EXPECT_EQ(odd.min(), whole.min());
  for (double percentile : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    EXPECT_EQ(odd.ValueAtPercentile(percentile), whole.ValueAtPercentile(percentile));
  }
}

TEST(BenchHistogramTest, MergingAnEmptyOneChangesNothing) {
  LatencyHistogram histogram;
  histogram.Record(500);
  histogram.Merge(LatencyHistogram());
  EXPECT_EQ(histogram.count(), 1u);
  EXPECT_EQ(histogram.min(), 500u);
  EXPECT_EQ(histogram.ValueAtPercentile(50), 500u);
}

}  // namespace
}  // namespace shardctl::launcher
