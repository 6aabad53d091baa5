#include "launcher/cluster/slot_mover.h"

#include <condition_variable>
#include <map>
#include <set>
#include <thread>

#include "common/cluster_text.h"
#include "launcher/cluster/slot_balance.h"
#include "launcher/cluster/slot_mover_internal.h"

namespace shardctl::launcher {
namespace mover_internal {

void ProgressSink::SetTotals(int slots, uint64_t keys, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  progress_.slots_total = slots;
  progress_.keys_total = keys;
  progress_.bytes_total = bytes;
}

void ProgressSink::Add(int slots, uint64_t keys, uint64_t bytes_per_key) {
  std::lock_guard lock(mutex_);
  progress_.slots_moved += slots;
  progress_.keys_moved += keys;
  progress_.bytes_moved += keys * bytes_per_key;
  if (options_.on_progress) options_.on_progress(progress_);
}

void ProgressSink::TaskStarted(int delta) {
  std::lock_guard lock(mutex_);
  progress_.tasks_running += delta;
}

MoveProgress ProgressSink::Snapshot() {
  std::lock_guard lock(mutex_);
  return progress_;
}

common::Result<RedisConnection> ConnectTo(const MoveNode& node, const MoverOptions& options) {
  return RedisConnection::Connect(options.access, node.host, node.port, options.reply_timeout);
}

std::string NodeName(const MoveNode& node) { return common::FormatEndpoint(node.host, node.port); }

std::vector<int> SlotsOf(const std::vector<common::SlotRange>& ranges) {
  std::vector<int> slots;
  for (const auto& range : ranges) {
    for (int slot = range.first; slot <= range.last; ++slot) slots.push_back(slot);
  }
  return slots;
}

common::Result<uint64_t> CountKeys(RedisConnection& node, const std::vector<int>& slots) {
  constexpr size_t kPerPipeline = 1024;
  uint64_t keys = 0;
  for (size_t at = 0; at < slots.size(); at += kPerPipeline) {
    std::vector<Command> counts;
    for (size_t i = at; i < std::min(slots.size(), at + kPerPipeline); ++i) {
      counts.push_back({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slots[i])});
    }
    auto replies = node.Pipeline(counts);
    if (!replies.ok()) return replies.error();
    for (const auto& reply : *replies) {
      if (!reply.ok())
        return common::Error(node.address() + ": COUNTKEYSINSLOT: " + reply.error().message());
      keys += common::ParseInteger<uint64_t>(*reply).value_or(0);
    }
  }
  return keys;
}

uint64_t BytesPerKey(RedisConnection& node) {
  auto info = node.Run({"INFO", "memory"});
  auto size = node.Run({"DBSIZE"});
  if (!info.ok() || !size.ok()) return 0;
  const auto keys = common::ParseInteger<uint64_t>(*size).value_or(0);
  return keys == 0 ? 0 : InfoNumber<uint64_t>(*info, "used_memory_dataset") / keys;
}

}  // namespace mover_internal

namespace {

using mover_internal::ProgressSink;

bool UseAtomic(const MoveTask& task, const MoverOptions& options) {
  if (options.path != MovePath::kAuto) return options.path == MovePath::kAtomic;
  for (const MoveNode* node : {&task.source, &task.target}) {
    auto atomic = HasAtomicMigration(options.access, *node, options.reply_timeout);
    if (!atomic.ok() || !*atomic) return false;
  }
  return true;
}

// Totals for the progress line: every slot, and the keys and bytes the sources hold in them now.
void CountTotals(const std::vector<MoveTask>& tasks, const MoverOptions& options,
                 ProgressSink& sink) {
  int slots = 0;
  uint64_t keys = 0, bytes = 0;
  for (const auto& task : tasks) {
    const auto task_slots = mover_internal::SlotsOf(task.ranges);
    slots += static_cast<int>(task_slots.size());
    auto source = mover_internal::ConnectTo(task.source, options);
    if (!source.ok()) continue;
    auto task_keys = mover_internal::CountKeys(*source, task_slots);
    if (!task_keys.ok()) continue;
    keys += *task_keys;
    bytes += *task_keys * mover_internal::BytesPerKey(*source);
  }
  sink.SetTotals(slots, keys, bytes);
}

// Starts tasks as their nodes come free, at most options.parallel at once; stops starting new
// ones after the first failure or a stop request.
class TaskScheduler {
 public:
  TaskScheduler(const std::vector<MoveTask>& tasks, const MoverOptions& options, ProgressSink& sink)
      : tasks_(tasks), options_(options), sink_(sink), paths_(tasks.size()) {}

  common::Status Run() {
    std::vector<bool> started(tasks_.size(), false);
    std::vector<std::thread> threads;
    std::unique_lock lock(mutex_);
    while (true) {
      const bool halted = error_ || (options_.stop != nullptr && options_.stop->load());
      size_t unstarted = 0;
      for (size_t i = 0; i < tasks_.size(); ++i) {
        if (started[i]) continue;
        ++unstarted;
        if (halted || running_ >= options_.parallel || Busy(tasks_[i])) continue;
        started[i] = true;
        --unstarted;
        Claim(tasks_[i], true);
        ++running_;
        threads.emplace_back([this, i] { RunTask(i); });
      }
      if (running_ == 0 && (unstarted == 0 || halted)) break;
      done_.wait(lock);
    }
    lock.unlock();
    for (auto& thread : threads) thread.join();
    if (error_) return *error_;
    if (options_.stop != nullptr && options_.stop->load()) return common::Error("stopped");
    return common::Ok();
  }

  std::vector<std::string> paths() const { return paths_; }

 private:
  bool Busy(const MoveTask& task) const {
    return busy_.count(task.source.id) || busy_.count(task.target.id);
  }
  void Claim(const MoveTask& task, bool claim) {
    for (const auto* id : {&task.source.id, &task.target.id}) {
      if (claim)
        busy_.insert(*id);
      else
        busy_.erase(*id);
    }
  }

  void RunTask(size_t i) {
    const MoveTask& task = tasks_[i];
    sink_.TaskStarted(1);
    const bool atomic = UseAtomic(task, options_);
    auto status = atomic ? mover_internal::AtomicTask(task, options_, sink_)
                         : mover_internal::MigrateTask(task, options_, sink_);
    sink_.TaskStarted(-1);
    std::lock_guard lock(mutex_);
    paths_[i] = atomic ? "atomic" : "migrate";
    if (!status.ok() && !error_ && status.error().message() != "stopped") {
      error_ =
          common::Error("slots " + common::FormatSlotRanges(task.ranges) + " from " +
                        mover_internal::NodeName(task.source) + " to " +
                        mover_internal::NodeName(task.target) + ": " + status.error().message());
    }
    Claim(task, false);
    --running_;
    done_.notify_all();
  }

  const std::vector<MoveTask>& tasks_;
  const MoverOptions& options_;
  ProgressSink& sink_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::set<std::string> busy_;
  int running_ = 0;
  std::optional<common::Error> error_;
  std::vector<std::string> paths_;
};

}  // namespace

namespace {

// --migration atomic asked of an engine without CLUSTER MIGRATESLOTS (Redis, Valkey before 9):
// refused before any slot moves, naming the node and the path that works ("usage: " marks it a
// usage error for the CLI, as scale's are).
common::Status CheckAtomicAvailable(const std::vector<MoveTask>& tasks,
                                    const MoverOptions& options) {
  if (options.path != MovePath::kAtomic) return common::Ok();
  for (const MoveTask& task : tasks) {
    for (const MoveNode* node : {&task.source, &task.target}) {
      auto atomic = HasAtomicMigration(options.access, *node, options.reply_timeout);
      if (!atomic.ok()) return atomic.error().Context(mover_internal::NodeName(*node));
      if (!*atomic) {
        return common::Error("usage: --migration atomic: " + mover_internal::NodeName(*node) +
                             " has no atomic slot migration (CLUSTER MIGRATESLOTS, Valkey 9 and "
                             "newer); use --migration migrate, or auto, which picks what every "
                             "node has; nothing was moved");
      }
    }
  }
  return common::Ok();
}

}  // namespace

common::Result<MoveReport> RunMoves(const std::vector<MoveTask>& tasks,
                                    const MoverOptions& options) {
  if (auto available = CheckAtomicAvailable(tasks, options); !available.ok()) {
    return available.error();
  }
  const auto start = std::chrono::steady_clock::now();
  ProgressSink sink(options);
  CountTotals(tasks, options, sink);
  TaskScheduler scheduler(tasks, options, sink);
  auto status = scheduler.Run();
  if (!status.ok()) {
    const MoveProgress progress = sink.Snapshot();
    return common::Error(status.error().message() + " (" + std::to_string(progress.slots_moved) +
                         " of " + std::to_string(progress.slots_total) +
                         " slots moved; run the command again to finish)");
  }
  return MoveReport{.progress = sink.Snapshot(),
                    .paths = scheduler.paths(),
                    .elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)};
}

common::Result<bool> HasAtomicMigration(const Access& access, const MoveNode& node,
                                        std::chrono::milliseconds timeout) {
  auto connection = RedisConnection::Connect(access, node.host, node.port, timeout);
  if (!connection.ok()) return connection.error();
  // COMMAND INFO answers nil (empty text here) for a command the server does not have.
  auto info = connection->Run({"COMMAND", "INFO", "CLUSTER|MIGRATESLOTS"});
  if (!info.ok()) return info.error();
  return info->find("migrateslots") != std::string::npos;
}

}  // namespace shardctl::launcher
