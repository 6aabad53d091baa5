// LatencyHistogram: a high-dynamic-range histogram of latencies in nanoseconds for the load
// generator. Log-linear buckets: values below 128 are exact; above, every power of two is split
// into 64 equal buckets, so a bucket is at most 1/64 of its values wide and the midpoint reported
// for it is within 0.8% of any value it holds. Fixed size (no allocation while recording), so each
// generator thread records into its own and the threads' histograms are merged at the end.
#pragma once

#include <array>
#include <cstdint>

namespace shardctl::launcher {

class LatencyHistogram {
 public:
  // Buckets: 128 exact ones, then 64 per power of two from 2^7 up to 2^63.
  static constexpr int kSubBucketBits = 6;
  static constexpr int kBucketCount = 128 + (63 - 6) * 64;

  // Counts one value (any uint64 fits).
  void Record(uint64_t value);
  // Adds every count of `other` to this one.
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const { return count_ == 0 ? 0 : sum_ / static_cast<double>(count_); }

  // The value at `percentile` (0..100): the representative value of the bucket holding the
  // ceil(percentile% of count)-th smallest value, clamped to [min, max] so that p100 is exactly the
  // maximum. 0 when empty.
  uint64_t ValueAtPercentile(double percentile) const;

  // The bucket a value falls in, and the range of values a bucket holds (inclusive).
  static int BucketOf(uint64_t value);
  static uint64_t BucketLow(int bucket);
  static uint64_t BucketHigh(int bucket);

 private:
  std::array<uint64_t, kBucketCount> counts_{};
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double sum_ = 0;  // a double: a uint64 of nanoseconds could overflow on long runs
};

}  // namespace shardctl::launcher
