// The copy-out of a backup held to the host's fork limit. A consistent cut needs every primary to
// fork inside one pause; what the limit bounds is how many of those children work at once. The
// children beyond the limit are stopped (SIGSTOP) before writes resume, and each is continued
// (SIGCONT) when an earlier one has streamed its snapshot, so at most `limit` serialize on the host
// and the primaries keep their CPU for their clients. Another host's primary (no child of ours to
// see) is not held.
//
// Nothing stays stopped: the destructor continues every child still held. A backup killed while it
// held some leaves them stopped: the supervisor continues them once no backup runs (backup.pid),
// and so does the next backup before it starts (ContinueStoppedChildren); their primary then ends
// them, as nobody reads their snapshot.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "launcher/os/process.h"

namespace shardctl::launcher {

class SnapshotGate {
 public:
  // For `primaries` snapshots, at most `limit` local children at once.
  SnapshotGate(size_t primaries, int limit);
  ~SnapshotGate();
  SnapshotGate(const SnapshotGate&) = delete;
  SnapshotGate& operator=(const SnapshotGate&) = delete;

  // Primary k has forked `children` (empty: not on this host, or not seen yet: then it may be
  // called again for k). Beyond the limit they are stopped at once, so they do not slow the forks
  // still to come.
  void Forked(size_t k, std::vector<pid_t> children);
  // Blocks until primary k's child runs (at once for one not held).
  void WaitTurn(size_t k);
  // Primary k's snapshot is copied: the next held child continues.
  void Done(size_t k);
  // The most local children that ran at once.
  int most_running() const { return most_running_; }

 private:
  void Release(size_t k);  // with mutex_ held

  std::vector<std::vector<pid_t>> children_;
  int limit_;
  std::mutex mutex_;
  std::condition_variable turn_;
  std::vector<bool> held_;
  int running_ = 0;
  int most_running_ = 0;
};

}  // namespace shardctl::launcher
