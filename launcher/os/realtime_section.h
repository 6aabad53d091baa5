// A short stretch of the calling thread at real-time priority, for work whose every millisecond
// someone else waits on: a backup's cut holds every primary's writes until it has started every
// fork. On a host whose CPUs are busy (shards, their snapshot children, clients) a fairly
// scheduled shardctl waits its turn behind all of them each time a reply wakes it; measured with
// 40 primaries on 2 vCPUs, that wait was most of the pause (docs/benchmarks.md).
#pragma once

namespace shardctl::launcher {

// Raises the calling thread to SCHED_FIFO at the lowest real-time priority for the object's
// lifetime, and puts back the policy it had when destroyed. Needs CAP_SYS_NICE (root) or an
// RLIMIT_RTPRIO above 0; without either the thread stays as it was and raised() says so. Only
// this thread changes (not the process, its session or its children), so a shardctl killed
// inside the section leaves nothing raised behind. Keep the section short and blocking: a
// real-time thread that spins takes a CPU from everything fairly scheduled.
class RealtimeSection {
 public:
  RealtimeSection();
  ~RealtimeSection();
  RealtimeSection(const RealtimeSection&) = delete;
  RealtimeSection& operator=(const RealtimeSection&) = delete;

  bool raised() const { return raised_; }

 private:
  bool raised_ = false;
  int old_policy_ = 0;
  int old_priority_ = 0;
};

}  // namespace shardctl::launcher
