// Workloads of the load generator: the presets (--workload), their scaling (--scale) and
// per-flag overrides, the phases a run goes through, and the keys, operations and value sizes
// each request uses. Pure: randomness comes from a seeded SplitMix64, so a seed replays a run.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "launcher/bench/key_distribution.h"
#include "launcher/bench/split_mix.h"

namespace shardctl::launcher {

// Value sizes: fixed (stddev 0) or normally distributed around `mean`, clipped to [min, max].
struct ValueSize {
  uint32_t mean = 256;
  uint32_t stddev = 0;
  uint32_t min = 256;
  uint32_t max = 256;
  friend bool operator==(const ValueSize&, const ValueSize&) = default;
};

// What a run does, after presets, scaling and overrides.
struct Workload {
  std::string name;           // set-then-get, redis-vs-dragonfly, mixed-80-20 or custom
  double get_fraction = 0.5;  // of the requests of a mixed phase
  ValueSize value_size;
  uint64_t get_keyspace = 0;  // GETs pick keys 0..get_keyspace-1
  uint64_t set_keyspace = 0;  // SETs pick keys 0..set_keyspace-1
  int pipeline = 1;           // the preset's default depth, unless --pipeline says otherwise
  bool populate = false;      // write every SET key once, unmeasured, before the run
  bool set_then_get = false;  // one SET per key first, then only GETs
  KeyDistribution keys;       // how random phases pick keys (--key-distribution)
  uint64_t key_seed = 1;      // which keys are the hot ones (--seed): the same in every run
};

// Flags that change a preset.
struct WorkloadOverrides {
  std::optional<double> get_fraction;  // --ratio
  std::optional<uint32_t> value_size;  // --value-size (a fixed size)
  std::optional<uint64_t> keyspace;    // --keyspace (both key spaces)
  std::optional<int> pipeline;         // --pipeline
  bool populate = false;               // --populate
};

// The names --workload accepts.
const std::vector<std::string_view>& WorkloadNames();

// The preset `name`, its key spaces multiplied by `scale` (> 0; at least one key), then
// `overrides` applied. Errors name the unknown preset and list the known ones.
common::Result<Workload> ResolveWorkload(std::string_view name, double scale,
                                         const WorkloadOverrides& overrides);

// Parses --ratio "GET:SET" ("1:4" is 20% GETs). Both whole numbers, not both 0.
common::Result<double> ParseRatio(std::string_view text);

// One stretch of a run. Sequential phases write each key of their key space once and end;
// random ones run until the run's bound.
struct Phase {
  std::string name;  // "populate", "set", "get" or "mixed"
  double get_fraction = 0;
  bool sequential = false;
  uint64_t keys = 0;     // sequential phases: how many keys they write
  bool measured = true;  // populate is not part of the results
  friend bool operator==(const Phase&, const Phase&) = default;
};

// The phases of `workload`, in order.
std::vector<Phase> PhasesOf(const Workload& workload);

// Keys are "key:" and 12 digits, like redis-benchmark's -r keys.
inline constexpr size_t kKeyLength = 16;
using KeyBuffer = std::array<char, kKeyLength>;
// Writes key `n` (n < 10^12; larger wrap) into `buffer` and returns a view of it.
std::string_view KeyName(uint64_t n, KeyBuffer& buffer);

// One request to make.
struct Op {
  bool get = false;
  uint64_t key = 0;
  uint32_t value_size = 0;  // SETs only
};

// The requests of one phase for one generator thread. A sequential phase's keys are split among
// `senders` threads: thread `index` writes its own contiguous share once.
class OpSource {
 public:
  OpSource(const Workload& workload, const Phase& phase, int index, int senders, uint64_t seed);
  // The next request, or nullopt when a sequential phase has written its share.
  std::optional<Op> Next();

 private:
  uint32_t ValueSizeSample();

  const Workload& workload_;
  const Phase& phase_;
  SplitMix64 random_;
  KeyPicker get_keys_;
  KeyPicker set_keys_;
  uint64_t next_key_ = 0;
  uint64_t end_key_ = 0;
};

}  // namespace shardctl::launcher
