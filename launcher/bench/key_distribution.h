// How the load generator picks keys (--key-distribution). Pure: randomness comes from the
// caller's seeded SplitMix64.
//
//   uniform        every key of the key space equally often (the default)
//   zipf:S         key of popularity rank r (1 = hottest) with weight 1/r^S over the whole key
//                  space: a long tail, which spreads evenly over slots and shards
//   hotkeys:N:P    N hot keys take P% of the requests, the rest uniform: what piles up on one
//                  shard in real traffic
//
// Ranks become key numbers through a permutation fixed by the seed, so the hot keys are spread
// over the key space (not key 0..N-1) and are the same keys in every run with that seed: every
// configuration of one `bench compare` meets the same hot keys.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "launcher/bench/split_mix.h"

namespace shardctl::launcher {

struct KeyDistribution {
  enum class Kind { kUniform, kZipf, kHotKeys };
  Kind kind = Kind::kUniform;
  double exponent = 0;     // zipf: S > 0
  uint64_t hot_keys = 0;   // hotkeys: N >= 1
  double hot_percent = 0;  // hotkeys: P in (0, 100]
  // "uniform", "zipf:0.99", "hotkeys:8:40": what the flag takes, for reports.
  std::string ToString() const;
  friend bool operator==(const KeyDistribution&, const KeyDistribution&) = default;
};

// Parses the flag's value; errors say what is wrong and show the accepted forms.
common::Result<KeyDistribution> ParseKeyDistribution(std::string_view text);

// Draws key numbers 0..keyspace-1 from a distribution.
class KeyPicker {
 public:
  // `keyspace` >= 1. `seed` fixes which keys the ranks are.
  KeyPicker(const KeyDistribution& distribution, uint64_t keyspace, uint64_t seed);
  uint64_t Pick(SplitMix64& random) const;
  // The key of popularity rank `rank` (0 = the hottest): the permutation, for tests and reports.
  uint64_t KeyOfRank(uint64_t rank) const;

 private:
  uint64_t ZipfRank(SplitMix64& random) const;  // 0-based

  KeyDistribution distribution_;
  uint64_t keyspace_;
  uint64_t multiplier_ = 1;  // the permutation: key = (rank * multiplier + offset) mod keyspace
  uint64_t offset_ = 0;
  // Rejection-inversion sampling of the zipf distribution (Hörmann and Derflinger, 1996): H is
  // the integral of x^-S, and these are its values at the ends of the sampled interval.
  double h_integral_first_ = 0;
  double h_integral_last_ = 0;
  double accept_margin_ = 0;
};

}  // namespace shardctl::launcher
