#include "launcher/bench/split_mix.h"

namespace shardctl::launcher {

__extension__ using Uint128 = unsigned __int128;  // GCC/Clang builtin; -Wpedantic needs the mark

uint64_t SplitMix64::operator()() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::Below(uint64_t bound) {
  // Multiply-shift: unbiased enough for key choice (bias < bound / 2^64).
  return static_cast<uint64_t>((static_cast<Uint128>((*this)()) * bound) >> 64);
}

double SplitMix64::Fraction() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

}  // namespace shardctl::launcher
