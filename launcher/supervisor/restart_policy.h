// When to restart a shard that exited: a pure policy (time is passed in), unit-tested on its own.
//
// A shard that ran for a while and then died is restarted at once: recovery time is what users
// see. A shard that dies again soon after each restart is crash-looping: restarts back off
// exponentially (kBaseDelay, doubling, capped at kMaxDelay) so a broken shard never makes the
// supervisor spin a core, and `status` shows "crashloop".
#pragma once

#include <chrono>
#include <cstdint>

namespace shardctl::launcher {

class RestartPolicy {
 public:
  using Duration = std::chrono::milliseconds;

  static constexpr Duration kBaseDelay{250};
  static constexpr Duration kMaxDelay{30'000};
  // A run this long proves the last restart worked: the next exit starts the count afresh.
  static constexpr Duration kStableAfter{30'000};
  // This many quick exits in a row make a crash loop.
  static constexpr int kCrashLoopExits = 3;

  // Records an exit after the process had been running for `uptime`; returns how long to wait
  // before starting it again.
  Duration OnExit(Duration uptime);

  // True while the last kCrashLoopExits exits all came quickly after their starts.
  bool InCrashLoop() const { return quick_exits_ >= kCrashLoopExits; }
  int quick_exits() const { return quick_exits_; }
  // Forgets the history (an operator's explicit restart).
  void Reset() { quick_exits_ = 0; }

 private:
  int quick_exits_ = 0;  // consecutive exits with uptime < kStableAfter
};

// A shard whose data directory's filesystem has less than this free is not restarted when it
// exits (it would only fail again: Redis exits on an AOF write error with appendfsync always) until
// space is freed. Pure.
inline constexpr uint64_t kDiskFullBelowBytes = uint64_t{4} << 20;
inline bool IsDiskFull(uint64_t available_bytes) { return available_bytes < kDiskFullBelowBytes; }

}  // namespace shardctl::launcher
