// A short stretch of the calling thread at real-time priority, for work whose every millisecond
// someone else waits on: a backup's cut holds every primary's writes until it has started every
// fork. On a host whose CPUs are busy (shards, their snapshot children, clients) a fairly
// scheduled shardctl waits its turn behind all of them each time a reply wakes it (measured with
// 40 primaries on 2 vCPUs: 35 ms of a 101 ms pause, docs/benchmarks.md).
#pragma once

#include <string>

namespace shardctl::launcher {

// Raises the calling thread from a fair policy (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE) to
// SCHED_FIFO at the lowest real-time priority for the object's lifetime, and on destruction puts
// back the policy, priority and nice value it had before. A thread already real-time (chrt -f,
// chrt -r) is left as it is and counts as raised.
//
// The kernel allows it with CAP_SYS_NICE in the host's namespace (root, outside a rootless
// container) or an RLIMIT_RTPRIO above 0 (`ulimit -r`, limits.conf rtprio), and not where
// real-time threads are kept out (a cgroup with no rt_runtime, systemd's RestrictRealtime=); then
// the thread stays as it was and raised() is false. Only this thread changes, so a shardctl
// killed inside the section leaves nothing raised; but a thread or process created inside it
// would inherit the policy, so create none there. Keep the section short and blocking: a
// real-time thread that spins takes its CPU from every fairly scheduled task on it.
class RealtimeSection {
 public:
  RealtimeSection();
  ~RealtimeSection();
  RealtimeSection(const RealtimeSection&) = delete;
  RealtimeSection& operator=(const RealtimeSection&) = delete;

  bool raised() const { return raised_; }
  // Why the thread was not raised ("Operation not permitted"); "" when it was.
  const std::string& refusal() const { return refusal_; }

 private:
  bool raised_ = false;
  bool changed_ = false;  // raised here (not already real-time): to put back
  int old_policy_ = 0;
  int old_priority_ = 0;
  std::string refusal_;
};

}  // namespace shardctl::launcher
