// How many copied keys had a TTL short enough to be gone by now. A copy that ran to the end is
// checked by counting what the primaries hold: every key copied must be there, except those whose
// TTL ran out since (the engine drops them, which is no loss). Counting every key with a TTL as
// "may be gone" would let a lost shard of keys with hour-long TTLs pass, so the tally keeps how
// long each TTL was, in powers of two of milliseconds: a check errs towards "may have expired",
// never the other way.
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>

namespace shardctl::launcher {

class TtlTally {
 public:
  // A key copied with `ttl_ms` left to live (0 or less: none).
  void Add(int64_t ttl_ms) {
    if (ttl_ms <= 0) return;
    ++by_log2_[static_cast<size_t>(std::bit_width(static_cast<uint64_t>(ttl_ms)) - 1)];
  }
  void Merge(const TtlTally& other) {
    for (size_t b = 0; b < by_log2_.size(); ++b) by_log2_[b] += other.by_log2_[b];
  }
  // Keys whose TTL was at most `elapsed` (give the time since the copy began): these may have
  // expired, every other key must still be there.
  uint64_t MayHaveExpired(std::chrono::milliseconds elapsed) const {
    uint64_t keys = 0;
    // Bucket b holds TTLs in [2^b, 2^(b+1)); any of them may be gone once 2^b ms have passed.
    for (size_t b = 0; b < by_log2_.size() && (uint64_t{1} << b) <= Ms(elapsed); ++b) {
      keys += by_log2_[b];
    }
    return keys;
  }

 private:
  static uint64_t Ms(std::chrono::milliseconds elapsed) {
    return elapsed.count() > 0 ? static_cast<uint64_t>(elapsed.count()) : 0;
  }
  std::array<uint64_t, 63> by_log2_{};
};

}  // namespace shardctl::launcher
