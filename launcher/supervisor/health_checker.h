// Pings every shard from a background thread and publishes when each one last answered.
//
// A shard stopped with SIGSTOP (or stuck in a slow command) still accepts TCP connections, so only
// a PING with a timeout tells. The pings are blocking (hiredis with timeouts), which is why they
// run on their own thread: a hung shard must not stall the supervisor's loop. The loop reads the
// published times; nothing else is shared.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launcher/cluster/access.h"

namespace shardctl::launcher {

// How often every shard is pinged. A PING round trip costs the supervisor ~20 µs of CPU (most of
// it the kernel's loopback TCP and waking the shard), so rounds spread out as shards grow, 25 ms
// per shard (40 shards: once a second, ~0.1% of a core), but never so far apart that a hung shard
// is noticed late: at most a third of `health_timeout`, and never more often than every 250 ms.
std::chrono::milliseconds HealthPingInterval(size_t shards,
                                             std::chrono::milliseconds health_timeout);

class HealthChecker {
 public:
  using Clock = std::chrono::steady_clock;

  // Pings host:ports[i] every `interval`, each PING (and connect) bounded by `timeout`,
  // connecting with what `access` holds at the time (it must outlive the checker).
  HealthChecker(const SharedAccess& access, std::string host, std::vector<int> ports,
                std::chrono::milliseconds interval, std::chrono::milliseconds timeout);
  ~HealthChecker();  // stops and joins the thread

  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  void Start();
  void Stop();

  // When shard `index` last answered PING; Clock::time_point{} if it has not since MarkFresh.
  Clock::time_point LastAnswer(int index) const;
  // When the round of PINGs it last answered with PONG (not an error such as -LOADING) began:
  // it serves its data. A round's start, not the reply's arrival: a PONG the previous process
  // sent must not count for a process started while the reply was read.
  Clock::time_point LastServed(int index) const;
  // Carries LastServed over from a previous checker.
  void MarkServed(int index, Clock::time_point when);
  // Counts the shard as having answered at `when` (e.g. its start), so "unresponsive" is measured
  // from then and not from a previous life.
  void MarkFresh(int index, Clock::time_point when);

 private:
  void Loop();

  const SharedAccess& access_;
  std::string host_;
  std::vector<int> ports_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<std::atomic<Clock::rep>[]> last_answer_;  // Clock ticks since its epoch
  std::unique_ptr<std::atomic<Clock::rep>[]> last_served_;  // the same, PONG only
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shardctl::launcher
