#include "launcher/bench/workload.h"

#include <algorithm>
#include <cmath>

#include "common/numbers.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

namespace {

Workload Preset(std::string_view name) {
  if (name == "set-then-get") {
    return {.name = "set-then-get",
            .value_size = {1024, 0, 1024, 1024},
            .get_keyspace = 3000000,
            .set_keyspace = 3000000,
            .set_then_get = true};
  }
  if (name == "redis-vs-dragonfly") {
    return {.name = "redis-vs-dragonfly",
            .value_size = {256, 0, 256, 256},
            .get_keyspace = 1000000,
            .set_keyspace = 1000000,
            .pipeline = 30,
            .set_then_get = true};
  }
  if (name == "mixed-80-20") {
    // GETs range over 25% more keys than were written, so ~80% of them hit.
    return {.name = "mixed-80-20",
            .get_fraction = 0.8,
            .value_size = {1024, 340, 4, 2048},
            .get_keyspace = 3750000,
            .set_keyspace = 3000000,
            .populate = true};
  }
  return {.name = "custom",
          .get_fraction = 0.5,
          .value_size = {256, 0, 256, 256},
          .get_keyspace = 100000,
          .set_keyspace = 100000};
}

uint64_t Scaled(uint64_t keys, double scale) {
  return std::max<uint64_t>(1,
                            static_cast<uint64_t>(std::llround(static_cast<double>(keys) * scale)));
}

}  // namespace

const std::vector<std::string_view>& WorkloadNames() {
  static const std::vector<std::string_view> names = {"set-then-get", "redis-vs-dragonfly",
                                                      "mixed-80-20", "custom"};
  return names;
}

Result<Workload> ResolveWorkload(std::string_view name, double scale,
                                 const WorkloadOverrides& overrides) {
  const auto& names = WorkloadNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    return Error("unknown workload \"" + std::string(name) +
                 "\" (one of set-then-get, redis-vs-dragonfly, mixed-80-20, custom)");
  }
  if (!(scale > 0) || scale > 1000) {
    return Error("--scale must be above 0 and at most 1000 (e.g. --scale 0.01)");
  }
  Workload workload = Preset(name);
  workload.get_keyspace = Scaled(workload.get_keyspace, scale);
  workload.set_keyspace = Scaled(workload.set_keyspace, scale);
  if (overrides.get_fraction) {
    workload.get_fraction = *overrides.get_fraction;
    workload.set_then_get = false;  // an explicit mix replaces the SET-then-GET phases
  }
  if (overrides.value_size) {
    workload.value_size = {*overrides.value_size, 0, *overrides.value_size, *overrides.value_size};
  }
  if (overrides.keyspace) {
    workload.get_keyspace = *overrides.keyspace;
    workload.set_keyspace = *overrides.keyspace;
  }
  if (overrides.pipeline) workload.pipeline = *overrides.pipeline;
  if (overrides.populate) workload.populate = true;
  return workload;
}

Result<double> ParseRatio(std::string_view text) {
  auto bad = [&] {
    return Error("bad --ratio \"" + std::string(text) +
                 "\" (write GET:SET as whole numbers, e.g. 1:4 for 20% GETs, 0:1 for SETs only)");
  };
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  auto parse = [](std::string_view part, uint64_t& out) {
    std::optional<uint64_t> value = common::ParseInteger<uint64_t>(part);
    if (value) out = *value;
    return value.has_value();
  };
  uint64_t gets = 0;
  uint64_t sets = 0;
  if (!parse(text.substr(0, colon), gets) || !parse(text.substr(colon + 1), sets)) return bad();
  if (gets + sets == 0 || gets > 1000000 || sets > 1000000) return bad();
  return static_cast<double>(gets) / static_cast<double>(gets + sets);
}

std::vector<Phase> PhasesOf(const Workload& workload) {
  std::vector<Phase> phases;
  if (workload.populate) {
    phases.push_back({.name = "populate",
                      .get_fraction = 0,
                      .sequential = true,
                      .keys = workload.set_keyspace,
                      .measured = false});
  }
  if (workload.set_then_get) {
    phases.push_back(
        {.name = "set", .get_fraction = 0, .sequential = true, .keys = workload.set_keyspace});
    phases.push_back({.name = "get", .get_fraction = 1});
  } else {
    phases.push_back({.name = "mixed", .get_fraction = workload.get_fraction});
  }
  return phases;
}

std::string_view KeyName(uint64_t n, KeyBuffer& buffer) {
  buffer = {'k', 'e', 'y', ':'};
  for (size_t i = kKeyLength; i > 4; --i) {
    buffer[i - 1] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  return {buffer.data(), buffer.size()};
}

OpSource::OpSource(const Workload& workload, const Phase& phase, int index, int senders,
                   uint64_t seed)
    : workload_(workload),
      phase_(phase),
      random_(seed),
      get_keys_(workload.keys, workload.get_keyspace, workload.key_seed),
      set_keys_(workload.keys, workload.set_keyspace, workload.key_seed) {
  if (phase.sequential) {
    uint64_t share = phase.keys / static_cast<uint64_t>(senders);
    uint64_t rest = phase.keys % static_cast<uint64_t>(senders);
    auto i = static_cast<uint64_t>(index);
    next_key_ = i * share + std::min(i, rest);
    end_key_ = next_key_ + share + (i < rest ? 1 : 0);
  }
}

uint32_t OpSource::ValueSizeSample() {
  const ValueSize& size = workload_.value_size;
  if (size.stddev == 0) return size.mean;
  // Box-Muller: one normal sample from two uniform ones.
  double u1 = 1.0 - random_.Fraction();  // (0, 1]: log is finite
  double u2 = random_.Fraction();
  double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  double value = std::round(size.mean + normal * size.stddev);
  return static_cast<uint32_t>(std::clamp(value, double(size.min), double(size.max)));
}

std::optional<Op> OpSource::Next() {
  if (phase_.sequential) {
    if (next_key_ >= end_key_) return std::nullopt;
    return Op{.get = false, .key = next_key_++, .value_size = ValueSizeSample()};
  }
  bool get = phase_.get_fraction >= 1 || random_.Fraction() < phase_.get_fraction;
  if (get) return Op{.get = true, .key = get_keys_.Pick(random_)};
  return Op{.get = false, .key = set_keys_.Pick(random_), .value_size = ValueSizeSample()};
}

}  // namespace shardctl::launcher
