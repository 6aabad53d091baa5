// The load generator's random numbers: small, fast and seeded, so a seed replays a run.
#pragma once

#include <cstdint>

namespace shardctl::launcher {

// A small fast PRNG (SplitMix64); a UniformRandomBitGenerator for <random>.
class SplitMix64 {
 public:
  using result_type = uint64_t;
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }
  uint64_t operator()();
  // Uniform in [0, bound) (bound > 0).
  uint64_t Below(uint64_t bound);
  // Uniform in [0, 1).
  double Fraction();

 private:
  uint64_t state_;
};

}  // namespace shardctl::launcher
