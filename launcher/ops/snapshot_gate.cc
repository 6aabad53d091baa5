#include "launcher/ops/snapshot_gate.h"

#include <signal.h>

#include <algorithm>

namespace shardctl::launcher {

SnapshotGate::SnapshotGate(size_t primaries, int limit)
    : children_(primaries), limit_(std::max(1, limit)), held_(primaries, false) {}

SnapshotGate::~SnapshotGate() {
  std::lock_guard lock(mutex_);
  for (size_t k = 0; k < children_.size(); ++k) {
    if (held_[k]) Release(k);
  }
}

void SnapshotGate::Forked(size_t k, std::vector<pid_t> children) {
  std::lock_guard lock(mutex_);
  children_[k] = std::move(children);
  if (children_[k].empty()) return;
  if (running_ < limit_) {
    most_running_ = std::max(most_running_, ++running_);
    return;
  }
  for (pid_t child : children_[k]) ::kill(child, SIGSTOP);
  held_[k] = true;
}

void SnapshotGate::WaitTurn(size_t k) {
  std::unique_lock lock(mutex_);
  turn_.wait(lock, [&] { return !held_[k]; });
}

void SnapshotGate::Done(size_t k) {
  std::lock_guard lock(mutex_);
  if (children_[k].empty()) return;
  --running_;
  for (size_t next = 0; next < children_.size(); ++next) {
    if (!held_[next]) continue;
    Release(next);
    most_running_ = std::max(most_running_, ++running_);
    break;
  }
}

void SnapshotGate::Release(size_t k) {
  for (pid_t child : children_[k]) ::kill(child, SIGCONT);
  held_[k] = false;
  turn_.notify_all();
}

}  // namespace shardctl::launcher
