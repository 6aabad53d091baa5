#include "launcher/supervisor/process_watcher.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/uv/handle.h"
#include "common/wall_clock.h"

namespace shardctl::launcher {
namespace {

// Reaps our exited child and says how it ended.
std::string ReapChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "exited (exit status lost)";
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

// Readable once the process ended.
struct ProcessWatcher::ExitPoll : common::uv::OwnedHandle {
  ~ExitPoll() override {
    if (pidfd >= 0) close(pidfd);
    if (watcher != nullptr) watcher->poll_ = nullptr;
  }
  uv_poll_t poll;
  int pidfd = -1;
  ProcessWatcher* watcher = nullptr;
};

struct ProcessWatcher::RestartTimer : common::uv::OwnedHandle {
  ~RestartTimer() override {
    if (watcher != nullptr) watcher->timer_ = nullptr;
  }
  uv_timer_t timer;
  ProcessWatcher* watcher = nullptr;
};

ProcessWatcher::ProcessWatcher(uv_loop_t* loop, ExitCallback on_exit, DueCallback on_restart_due)
    : loop_(loop), on_exit_(std::move(on_exit)), on_restart_due_(std::move(on_restart_due)) {
  timer_ = new RestartTimer();
  timer_->watcher = this;
  uv_timer_init(loop_, &timer_->timer);
  timer_->timer.data = timer_;
}

ProcessWatcher::~ProcessWatcher() {
  ClosePoll();
  if (timer_ != nullptr) {
    timer_->watcher = nullptr;
    common::uv::CloseOwnedHandle(common::uv::AsHandle(&timer_->timer));
  }
}

void ProcessWatcher::Watch(const ProcessId& process, bool is_child, bool restarted) {
  ClosePoll();
  process_ = process;
  is_child_ = is_child;
  started_ = Clock::now();
  if (restarted) ++restarts_;
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, process.pid, 0));
  // Re-check identity after opening: the PID may have been recycled in between.
  if (pidfd < 0 || !IsRunning(process)) {
    if (pidfd >= 0) close(pidfd);
    Ended(is_child ? ReapChild(process.pid) : "exited before it could be watched");
    return;
  }
  poll_ = new ExitPoll();
  poll_->pidfd = pidfd;
  poll_->watcher = this;
  uv_poll_init(loop_, &poll_->poll, pidfd);
  poll_->poll.data = poll_;
  uv_poll_start(&poll_->poll, UV_READABLE, [](uv_poll_t* poll, int, int) {
    auto* fired = static_cast<ExitPoll*>(poll->data);
    if (fired->watcher != nullptr) fired->watcher->OnPidfdReadable();
  });
}

void ProcessWatcher::OnPidfdReadable() {
  ClosePoll();
  if (process_.pid == 0) return;  // forgotten: the owner stopped it
  Ended(is_child_ ? ReapChild(process_.pid) : "exited (adopted process: exit status unknown)");
}

void ProcessWatcher::StartFailed(const std::string& why) {
  started_ = Clock::now();
  Ended("could not start: " + why);
}

void ProcessWatcher::Ended(std::string how) {
  const auto uptime =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
  // We start every process as the leader of its own session: what it forked and left running
  // (an engine that forks and does not exec) must not outlive it, holding its port or data.
  if (process_.pid > 0) {
    const auto left = SessionMembers({process_});
    for (pid_t orphan : left) kill(orphan, SIGKILL);
    if (!left.empty()) {
      how += "; killed " + std::to_string(left.size()) + " process(es) it had forked and left";
    }
  }
  process_ = {};
  last_exit_ = how;
  last_exit_unix_ms_ = common::UnixMsNow();
  on_exit_(Exit{std::move(how), uptime});
}

void ProcessWatcher::Forget() {
  ClosePoll();
  process_ = {};
}

void ProcessWatcher::RestartIn(std::chrono::milliseconds delay) {
  if (timer_ == nullptr) return;  // the loop is shutting down
  uv_timer_start(
      &timer_->timer,
      [](uv_timer_t* timer) {
        auto* fired = static_cast<RestartTimer*>(timer->data);
        if (fired->watcher != nullptr) fired->watcher->on_restart_due_();
      },
      static_cast<uint64_t>(delay.count()), 0);
}

void ProcessWatcher::CancelRestart() {
  if (timer_ != nullptr) uv_timer_stop(&timer_->timer);
}

bool ProcessWatcher::CrashLooping(Clock::time_point now) const {
  return policy_.InCrashLoop() &&
         (process_.pid == 0 || now - started_ < RestartPolicy::kStableAfter);
}

void ProcessWatcher::ClosePoll() {
  if (poll_ == nullptr) return;
  poll_->watcher = nullptr;
  common::uv::CloseOwnedHandle(common::uv::AsHandle(&poll_->poll));
  poll_ = nullptr;
}

}  // namespace shardctl::launcher
