// Moving slots between primaries of a live cluster, keys and all, while clients keep writing.
//
//   RunMoves(tasks)                    one thread per running task; tasks whose nodes are busy
//     ├─ tasks with disjoint nodes  →  wait (a node takes part in one move at a time)
//     ├─ both nodes atomic-capable  →  atomic path: CLUSTER MIGRATESLOTS on the source (Valkey
//     │                                 9+), polled with CLUSTER GETSLOTMIGRATIONS until done
//     └─ otherwise                  →  MIGRATE path, per batch of slots:
//          1. target: SETSLOT s IMPORTING <source>    (all slots of the batch, pipelined)
//          2. source: SETSLOT s MIGRATING <target>
//          3. source: GETKEYSINSLOT, then MIGRATE ... KEYS k1..kN, several in flight, until
//             every slot of the batch is empty (new keys go to the target via ASK meanwhile)
//          4. SETSLOT s NODE <target> on the target, then the source, then every other primary
//             (redis-cli's order: the target owns the slot before the source lets go)
//
// Stopping (Ctrl-C) lets the batch in hand finish, so no slot is left MIGRATING/IMPORTING; a crash
// can leave some, and FinishOpenSlots completes those moves on the next run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/slots.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

struct MoveNode {
  std::string id;  // cluster node ID
  std::string host;
  int port = 0;
  friend bool operator==(const MoveNode&, const MoveNode&) = default;
};

struct MoveTask {
  MoveNode source;
  MoveNode target;
  std::vector<common::SlotRange> ranges;
};

// Totals over every task, reported as work is done.
struct MoveProgress {
  int slots_total = 0;
  int slots_moved = 0;
  uint64_t keys_total = 0;  // counted before the move starts (writes during it add more)
  uint64_t keys_moved = 0;
  uint64_t bytes_total = 0;  // estimated: keys times the source's average bytes per key
  uint64_t bytes_moved = 0;
  int tasks_running = 0;
};

enum class MovePath { kAuto, kMigrate, kAtomic };

struct MoverOptions {
  Access access;  // how every connection of the move logs in (and its TLS)
  // Every primary of the cluster: step 4 tells all of them who owns a moved slot.
  std::vector<MoveNode> primaries;
  MovePath path = MovePath::kAuto;  // kAuto: atomic when both nodes have it, else MIGRATE
  int parallel = 8;                 // tasks at once (each node in one task at a time)
  int slots_per_batch = 64;
  int keys_per_migrate = 200;
  int migrates_in_flight = 4;
  // Per MIGRATE, for big keys. The source serves nothing else while it waits: migrates_in_flight
  // of them timing out against a target that stopped answering (20 s), or one key retried alone
  // (15 s), stay below the 33 s after which the supervisor kills a silent shard (the defaults of
  // --health-timeout and --hang-grace; shorter ones there are for tests of healing).
  std::chrono::milliseconds migrate_timeout{5000};
  std::chrono::milliseconds reply_timeout{30000};  // per command on our connections
  // Called from mover threads, serialized, after every batch.
  std::function<void(const MoveProgress&)> on_progress;
  // Set (e.g. by SIGINT) to stop after the batches in hand; RunMoves then returns an error
  // saying how far it got.
  const std::atomic<bool>* stop = nullptr;
};

struct MoveReport {
  MoveProgress progress;
  std::vector<std::string> paths;  // per task: "atomic" or "migrate"
  std::chrono::milliseconds elapsed{0};
};

// Runs every task. The first failure stops new work and is returned with its task named
// ("slots 100-200 from 127.0.0.1:7000 to 127.0.0.1:7003: MIGRATE: ..."); slots already moved stay
// moved.
common::Result<MoveReport> RunMoves(const std::vector<MoveTask>& tasks,
                                    const MoverOptions& options);

// True when `node` has Valkey's atomic slot migration (CLUSTER MIGRATESLOTS), by asking it for the
// command, not by its name or version.
common::Result<bool> HasAtomicMigration(const Access& access, const MoveNode& node,
                                        std::chrono::milliseconds timeout);

// A slot marked MIGRATING on `source` or IMPORTING on `target`, as left by an interrupted move.
struct OpenSlot {
  int slot = 0;
  MoveNode source;
  MoveNode target;
  friend bool operator==(const OpenSlot&, const OpenSlot&) = default;
};

// The open slots among `primaries` (each asked for its own markers in CLUSTER NODES).
common::Result<std::vector<OpenSlot>> FindOpenSlots(const Access& access,
                                                    const std::vector<MoveNode>& primaries,
                                                    std::chrono::milliseconds timeout);

// Finishes each open slot's move toward its target (the keys still on the source follow, then
// every primary is told the target owns it). Clears a marker naming a node that is gone.
common::Status FinishOpenSlots(const std::vector<OpenSlot>& open, const MoverOptions& options);

}  // namespace shardctl::launcher
