#include "launcher/bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace shardctl::launcher {
namespace {

constexpr uint64_t kExactLimit = 128;  // values below are their own bucket
constexpr int kPerPower = 1 << LatencyHistogram::kSubBucketBits;

}  // namespace

int LatencyHistogram::BucketOf(uint64_t value) {
  if (value < kExactLimit) return static_cast<int>(value);
  int top_bit = 63 - std::countl_zero(value);                 // >= 7
  int shift = top_bit - kSubBucketBits;                       // >= 1: width of a bucket is 2^shift
  int within = static_cast<int>(value >> shift) - kPerPower;  // 0..63
  return static_cast<int>(kExactLimit) + (shift - 1) * kPerPower + within;
}

uint64_t LatencyHistogram::BucketLow(int bucket) {
  if (bucket < static_cast<int>(kExactLimit)) return static_cast<uint64_t>(bucket);
  int offset = bucket - static_cast<int>(kExactLimit);
  int shift = offset / kPerPower + 1;
  uint64_t within = static_cast<uint64_t>(offset % kPerPower + kPerPower);
  return within << shift;
}

uint64_t LatencyHistogram::BucketHigh(int bucket) {
  if (bucket < static_cast<int>(kExactLimit)) return static_cast<uint64_t>(bucket);
  int shift = (bucket - static_cast<int>(kExactLimit)) / kPerPower + 1;
  return BucketLow(bucket) + ((uint64_t{1} << shift) - 1);
}

void LatencyHistogram::Record(uint64_t value) {
  ++counts_[static_cast<size_t>(BucketOf(value))];
  ++count_;
  sum_ += static_cast<double>(value);
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  double clamped = std::clamp(percentile, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(clamped / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int bucket = 0; bucket < kBucketCount; ++bucket) {
    seen += counts_[static_cast<size_t>(bucket)];
    if (seen >= rank) {
      uint64_t low = BucketLow(bucket);
      uint64_t middle = low + (BucketHigh(bucket) - low) / 2;
      return std::clamp(middle, min(), max_);
    }
  }
  return max_;
}

}  // namespace shardctl::launcher
