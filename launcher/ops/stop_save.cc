#include "launcher/ops/stop_save.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>

#include "launcher/ops/shard_snapshot.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

using namespace std::chrono_literals;

// How long a saved primary's writes stay held past the last renewal: a down killed (kill -9)
// between its save and the stop holds them no longer than that. Renewed well inside it.
constexpr auto kStopHold = 10s;
constexpr auto kRenewEvery = 3s;

// The running shards of this host that are primaries now (failovers may have swapped roles).
// A shard that does not answer cannot be told apart: the error says what to do.
Outcome<std::vector<const ShardPlan*>> RunningPrimaries(const Access& access,
                                                        const DeploymentDir& dir,
                                                        const Deployment& deployment) {
  std::vector<const ShardPlan*> primaries;
  for (const auto& shard : deployment.plan.shards) {
    auto process = ReadProcessId(dir.ShardPidFile(shard.index));
    if (!process || !IsRunning(*process)) continue;
    kill(process->pid, SIGCONT);
    auto state = InspectShard(access, deployment.plan.bind, shard.port);
    if (!state.ok()) {
      return Failure(Fault::kRuntime,
                     "shard " + std::to_string(shard.index) + " does not answer (" +
                         state.error().message() +
                         "), so its keys cannot be saved before the stop; nothing was stopped "
                         "(run down again once it answers, or down --no-save to stop without "
                         "saving: writes since its last snapshot are lost)");
    }
    if (state->primary) primaries.push_back(&shard);
  }
  return primaries;
}

}  // namespace

SavedForStop::SavedForStop(const Access& access, std::string host)
    : access_(access), host_(std::move(host)), renewer_([this] { RenewUntilDone(); }) {}

SavedForStop::~SavedForStop() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  renewer_.join();
}

void SavedForStop::Hold(int port) {
  std::lock_guard lock(mutex_);
  held_.push_back(port);
}

void SavedForStop::RenewUntilDone() {
  std::unique_lock lock(mutex_);
  while (!done_changed_.wait_for(lock, kRenewEvery, [this] { return done_; })) {
    const std::vector<int> ports = held_;
    lock.unlock();
    for (int port : ports) KeepWritesHeld(access_, host_, port, kStopHold);
    lock.lock();
  }
}

Outcome<std::unique_ptr<SavedForStop>> SavedForStop::Take(
    const Access& access, const DeploymentDir& dir, const Deployment& deployment,
    const std::function<void(const std::string&)>& progress, const std::atomic<bool>* interrupted) {
  auto primaries = RunningPrimaries(access, dir, deployment);
  if (!primaries.ok()) return primaries.error();
  auto saved = std::make_unique<SavedForStop>(access, deployment.plan.bind);
  if (primaries->empty()) return saved;
  if (progress) {
    progress("saving " + std::to_string(primaries->size()) + " primaries before the stop");
  }
  std::mutex mutex;
  std::optional<common::Error> failure;
  std::atomic<size_t> next = 0;
  auto save_shards = [&] {
    for (size_t k = next++; k < primaries->size(); k = next++) {
      const ShardPlan& shard = *(*primaries)[k];
      auto snapshot = PauseAndSnapshot(access, deployment.plan.bind, shard.port, shard.index,
                                       interrupted, kStopHold);
      std::lock_guard lock(mutex);
      if (snapshot.ok()) {
        saved->Hold(shard.port);
      } else if (!failure) {
        failure = snapshot.error();
      }
    }
  };
  std::vector<std::thread> savers;
  const size_t at_once = static_cast<size_t>(std::max(1, deployment.durability.fork_limit));
  for (size_t i = 0; i < std::min(at_once, primaries->size()); ++i) {
    savers.emplace_back(save_shards);
  }
  for (auto& saver : savers) saver.join();
  const bool stopped_by_user = interrupted != nullptr && interrupted->load();
  if (!failure && !stopped_by_user) return saved;
  saved.reset();  // no more renewals before the pauses are lifted
  for (const ShardPlan* shard : *primaries) Unpause(access, deployment.plan.bind, shard->port);
  if (stopped_by_user) {
    return Failure(Fault::kInterrupted,
                   "interrupted while saving the primaries: nothing was stopped, and writes "
                   "resumed");
  }
  const bool snapshot_failed =
      failure->message().find("rdb_last_bgsave_status:err") != std::string::npos;
  return Failure(Fault::kRuntime,
                 failure->message() + "; nothing was stopped, and writes resumed (" +
                     (snapshot_failed ? "free space in its data directory and run down again"
                                      : "run down again") +
                     ", or down --no-save to stop without saving: writes since its last "
                     "snapshot are lost)");
}

}  // namespace shardctl::launcher
