// How the fuzz targets split one input into the pieces they feed a parser: the sizes come from
// the input's own hash, so a crash replays with the same pieces.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace shardctl::fuzz {

// FNV-1a of the input, odd so that the xorshift in NextChunkSize never sticks at 0.
inline uint64_t ChunkSeed(std::string_view input) {
  uint64_t seed = 1469598103934665603ull;
  for (unsigned char byte : input) seed = (seed ^ byte) * 1099511628211ull;
  return seed | 1;
}

// The size of the next piece of `remaining` bytes: all of them when `seed` is 0, else mostly 1 to
// 9 bytes (splits inside every header and length) and now and then up to 4 KiB.
inline size_t NextChunkSize(uint64_t& seed, size_t remaining) {
  if (seed == 0) return remaining;
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return std::min<size_t>(remaining, 1 + seed % ((seed >> 32) % 4 == 0 ? 4096 : 9));
}

}  // namespace shardctl::fuzz
