// Wall-clock time as the records shardctl writes keep it (deployment files, manifests, the
// supervisor's status): milliseconds since the Unix epoch. Steady clocks measure durations.
#pragma once

#include <chrono>
#include <cstdint>

namespace shardctl::common {

inline int64_t UnixMsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace shardctl::common
