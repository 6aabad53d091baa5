// ProcessWatcher: one process the supervisor keeps alive, a shard or the proxy alike.
//
//   Watch(process) ── pidfd readable (it ended) ──▶ reap (our child) ──▶ on_exit({how, uptime})
//        ▲                                                                   │ the owner decides:
//        │                                        RestartIn(policy().OnExit(uptime)), or nothing
//        └── owner spawns again ◀── on_restart_due ◀── timer ◀──────────────┘
//
// A pidfd works for children and adopted processes alike (SIGCHLD only tells about children, and
// a new supervisor adopts shards it did not start). The watcher also keeps what `status` shows of
// the process: restarts, the last exit and its time, the crash-loop backoff (RestartPolicy).
//
// Lives on the supervisor's loop thread. Its libuv handles are OwnedHandles, so the supervisor's
// final uv_walk may close and free them; whichever goes first, the watcher or its handles, the
// other is told.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "launcher/os/process.h"
#include "launcher/supervisor/restart_policy.h"

namespace shardctl::launcher {

class ProcessWatcher {
 public:
  using Clock = std::chrono::steady_clock;

  struct Exit {
    std::string how;  // "killed by signal 9", "exited with status 1", "could not start: ..."
    std::chrono::milliseconds uptime{0};
  };
  // Called on the loop thread when the watched process ended (or could not start).
  using ExitCallback = std::function<void(const Exit&)>;
  // Called when the delay given to RestartIn() has passed: the owner starts the process again.
  using DueCallback = std::function<void()>;

  ProcessWatcher(uv_loop_t* loop, ExitCallback on_exit, DueCallback on_restart_due);
  ~ProcessWatcher();
  ProcessWatcher(const ProcessWatcher&) = delete;
  ProcessWatcher& operator=(const ProcessWatcher&) = delete;

  // Watches `process` from now on; `is_child`: we spawned it, so its exit status can be reaped.
  // `restarted` counts a restart. When the process is already gone, on_exit runs at once.
  void Watch(const ProcessId& process, bool is_child, bool restarted);
  // A start that failed: counted and reported like an exit after no uptime.
  void StartFailed(const std::string& why);
  // Stops watching without a callback: the owner stops (or has stopped) the process itself.
  void Forget();
  // Calls on_restart_due after `delay`, replacing any pending restart.
  void RestartIn(std::chrono::milliseconds delay);
  void CancelRestart();

  const ProcessId& process() const { return process_; }
  bool running() const { return process_.pid != 0; }
  bool is_child() const { return is_child_; }
  Clock::time_point started() const { return started_; }
  // Counts the process as started at `when` (an adopted one, whose start we did not see).
  void set_started(Clock::time_point when) { started_ = when; }
  int restarts() const { return restarts_; }
  const std::string& last_exit() const { return last_exit_; }
  int64_t last_exit_unix_ms() const { return last_exit_unix_ms_; }
  RestartPolicy& policy() { return policy_; }
  // In a crash loop: the last exits all came quickly, and the process is down or has not yet
  // run long enough to prove the last restart worked.
  bool CrashLooping(Clock::time_point now) const;

 private:
  struct ExitPoll;
  struct RestartTimer;

  void OnPidfdReadable();
  void Ended(std::string how);
  void ClosePoll();

  uv_loop_t* loop_;
  ExitCallback on_exit_;
  DueCallback on_restart_due_;
  ExitPoll* poll_ = nullptr;
  RestartTimer* timer_ = nullptr;
  ProcessId process_;
  bool is_child_ = false;
  Clock::time_point started_;
  int restarts_ = 0;
  std::string last_exit_;
  int64_t last_exit_unix_ms_ = 0;
  RestartPolicy policy_;
};

}  // namespace shardctl::launcher
