// The atomic path of the slot mover: Valkey 9's CLUSTER MIGRATESLOTS. The source streams the
// slots' data to the target as a replication snapshot plus the writes since, then hands the slots
// over in one step, so clients see no ASK window and no half-moved slot survives a failure.
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "launcher/cluster/slot_migrations.h"
#include "launcher/cluster/slot_mover_internal.h"

namespace shardctl::launcher::mover_internal {
namespace {

using common::Error;
using common::Result;
using common::Status;

constexpr std::chrono::milliseconds kPollEvery{20};
// A migration job whose state has not changed for this long is reported as stuck.
constexpr std::chrono::minutes kStuckAfter{5};

using Job = SlotMigrationJob;

Command MigrateSlots(const MoveTask& task) {
  Command command = {"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE"};
  for (const auto& range : task.ranges) {
    command.push_back(std::to_string(range.first));
    command.push_back(std::to_string(range.last));
  }
  command.push_back("NODE");
  command.push_back(task.target.id);
  return command;
}

// Our job: an export to the task's target that was not listed before we started it.
const Job* FindOurJob(const std::vector<Job>& jobs, const std::set<std::string>& before,
                      const std::string& target_id) {
  for (const auto& job : jobs) {
    auto field = [&](const char* key) { return JobField(job, key); };
    if (field("operation") == "EXPORT" && field("target_node") == target_id &&
        !before.count(field("name"))) {
      return &job;
    }
  }
  return nullptr;
}

// Our job's state as the source lists it now ("" when it cannot be read).
std::string OurJobState(RedisConnection& source, const std::set<std::string>& before,
                        const std::string& target_id) {
  auto jobs = ListSlotMigrations(source);
  if (!jobs.ok()) return "";
  const Job* job = FindOurJob(*jobs, before, target_id);
  return job != nullptr ? JobField(*job, "state") : "";
}

}  // namespace

Status AtomicTask(const MoveTask& task, const MoverOptions& options, ProgressSink& sink) {
  auto source = ConnectTo(task.source, options);
  if (!source.ok()) return source.error();
  const std::vector<int> slots = SlotsOf(task.ranges);
  auto keys = CountKeys(*source, slots);
  if (!keys.ok()) return keys.error();
  const uint64_t bytes_per_key = BytesPerKey(*source);
  auto listed = ListSlotMigrations(*source);
  if (!listed.ok())
    return Error(source->address() + ": GETSLOTMIGRATIONS: " + listed.error().message());
  std::set<std::string> before;
  for (const auto& job : *listed) before.insert(JobField(job, "name"));
  if (auto started = source->Run(MigrateSlots(task)); !started.ok()) {
    return Error(source->address() + ": CLUSTER MIGRATESLOTS: " + started.error().message());
  }
  std::string last_state;
  auto changed_at = std::chrono::steady_clock::now();
  while (true) {
    if (options.stop != nullptr && options.stop->load()) {
      // Cancelled, the slots stay with the source: nothing is half-moved. A job that ended
      // before the cancel reached it is refused as "No migrations ongoing"; one that succeeded
      // has moved the slots, and is counted so that the progress shown after Ctrl-C matches the
      // slot map.
      auto cancelled = CancelSlotMigrations(*source);
      const std::string state = OurJobState(*source, before, task.target.id);
      if (state == "success") sink.Add(static_cast<int>(slots.size()), *keys, bytes_per_key);
      if (!cancelled.ok() && !SlotMigrationFinished(state)) {
        return Error("stopped, but the atomic slot migration on " + source->address() +
                     " could not be cancelled (" + cancelled.error().message() +
                     "): it may still finish by itself");
      }
      return Error("stopped");
    }
    auto jobs = ListSlotMigrations(*source);
    if (!jobs.ok())
      return Error(source->address() + ": GETSLOTMIGRATIONS: " + jobs.error().message());
    const Job* job = FindOurJob(*jobs, before, task.target.id);
    const std::string state = job ? JobField(*job, "state") : "";
    if (state == "success") break;
    if (SlotMigrationFinished(state)) {
      return Error(source->address() + ": atomic slot migration " + state + ": " +
                   JobField(*job, "message"));
    }
    const auto now = std::chrono::steady_clock::now();
    if (state != last_state) last_state = state, changed_at = now;
    if (now - changed_at > kStuckAfter) {
      return Error(source->address() + ": atomic slot migration stuck in state '" + state + "'");
    }
    std::this_thread::sleep_for(kPollEvery);
  }
  sink.Add(static_cast<int>(slots.size()), *keys, bytes_per_key);
  return common::Ok();
}

}  // namespace shardctl::launcher::mover_internal
