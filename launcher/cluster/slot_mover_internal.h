// Private to launcher/cluster's slot mover (slot_mover.cc, slot_migrate.cc,
// slot_migrate_atomic.cc): the per-task workers and their shared progress counter.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/slot_mover.h"

namespace shardctl::launcher::mover_internal {

// Totals shared by every task thread; each change is reported through on_progress, serialized.
class ProgressSink {
 public:
  explicit ProgressSink(const MoverOptions& options) : options_(options) {}
  void SetTotals(int slots, uint64_t keys, uint64_t bytes);
  void Add(int slots, uint64_t keys, uint64_t bytes_per_key);
  void TaskStarted(int delta);
  MoveProgress Snapshot();

 private:
  const MoverOptions& options_;
  std::mutex mutex_;
  MoveProgress progress_;
};

common::Result<RedisConnection> ConnectTo(const MoveNode& node, const MoverOptions& options);

// "127.0.0.1:7000".
std::string NodeName(const MoveNode& node);

// Every slot of `ranges`, in order.
std::vector<int> SlotsOf(const std::vector<common::SlotRange>& ranges);

// The keys in `slots` on `node` (CLUSTER COUNTKEYSINSLOT, pipelined).
common::Result<uint64_t> CountKeys(RedisConnection& node, const std::vector<int>& slots);

// Average bytes per key on `node` (INFO memory's used_memory_dataset over DBSIZE), 0 when empty.
uint64_t BytesPerKey(RedisConnection& node);

// One task's MIGRATE-path worker: connections to its source and target (and, for announcing the
// new owner, every other primary).
class SlotMigration {
 public:
  static common::Result<SlotMigration> Open(const MoveTask& task, const MoverOptions& options);

  // Moves `slots` (all owned by the source) to the target: steps 1-4 of slot_mover.h. With
  // `resuming`, refusals of steps 1-2 that mean "already done" are ignored (finishing a move an
  // earlier run started).
  common::Status MoveBatch(const std::vector<int>& slots, ProgressSink& sink, bool resuming);

  uint64_t bytes_per_key() const { return bytes_per_key_; }
  RedisConnection& source() { return source_; }

 private:
  SlotMigration(const MoveTask& task, const MoverOptions& options, RedisConnection source,
                RedisConnection target)
      : task_(task), options_(options), source_(std::move(source)), target_(std::move(target)) {}

  common::Status MarkSlots(RedisConnection& node, const std::vector<int>& slots, const char* state,
                           const std::string& peer_id, bool resuming);
  common::Status EmptySlots(const std::vector<int>& slots, ProgressSink& sink);
  common::Result<uint64_t> MigrateKeys(const std::vector<std::vector<std::string>>& chunks,
                                       bool one_by_one);
  // Why the move stops when the target does not answer a PING of its own within twice the
  // MIGRATE timeout (stopped, hung); "" when it answers.
  std::string TargetSilent() const;
  common::Status AnnounceOwner(const std::vector<int>& slots);

  const MoveTask& task_;
  const MoverOptions& options_;
  RedisConnection source_;
  RedisConnection target_;
  std::vector<std::optional<RedisConnection>> others_;  // parallel to options_.primaries
  // Finishing a move an earlier run left open: MIGRATE with REPLACE (see MigrateKeys).
  bool resuming_ = false;
  uint64_t bytes_per_key_ = 0;
};

// Runs `task` on the MIGRATE path, batch by batch, until done or options.stop.
common::Status MigrateTask(const MoveTask& task, const MoverOptions& options, ProgressSink& sink);

// Runs `task` with Valkey's atomic slot migration and waits for it to succeed.
common::Status AtomicTask(const MoveTask& task, const MoverOptions& options, ProgressSink& sink);

}  // namespace shardctl::launcher::mover_internal
