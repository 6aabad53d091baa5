// The cut of a backup: every primary's snapshot started inside one write pause (backup.h says how
// a backup goes), and what keeps a cut from being taken (a save running, Valkey's atomic slot
// migrations).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/deployment.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct Cut {
  std::vector<SnapshotLink> links;
  std::vector<uint64_t> keys;
  std::set<int> moving;  // slots in the middle of a move at the cut (BackupManifest::moving_slots)
  std::chrono::milliseconds pause{0};
  bool realtime = false;         // the cut ran at real-time priority (RealtimeSection)
  std::string realtime_refusal;  // why not, as the kernel said ("" when it did)
};

// Waits (bounded) until no primary is forking: a snapshot asked for during another fork would
// wait for it, and the pause with it. `progress` is told what it waits for.
common::Status WaitForNoFork(std::vector<RedisConnection>& connections,
                             const std::function<void(const std::string&)>& progress);

// Valkey's atomic slot migrations as the primaries list them. While one runs, the target holds a
// copy of the slots' keys that DBSIZE and SCAN do not show but its snapshot does: a cut then has
// those keys in two files, one copy behind the other (a restore would put back whichever it
// copied last). So a backup is not cut while one runs, and is cut again if one began meanwhile.
struct AtomicMigrations {
  std::set<std::string> names;          // every job listed, finished ones too
  std::vector<std::string> unfinished;  // "slots 15495-15495, snapshotting, from 127.0.0.1:7001"
};

common::Result<AtomicMigrations> SeeAtomicMigrations(std::vector<RedisConnection>& control);

// The refusal while a migration runs: the operator's to wait for, nothing written yet.
Failure MigrationUnderWay(const AtomicMigrations& seen);

// One attempt at the cut of `primaries` (`control`: a connection to each), which run `engine`:
// pause, count, start every fork, unpause. Writes are resumed on every path out. `forked(k)` is
// called when primary k has forked and says whether its child was seen (it is called again until
// it is). Each snapshot is in the engine's own format (what its own version loads).
common::Result<Cut> TakeCut(const Access& access, const Engine& engine,
                            const std::vector<common::NodeLine>& primaries,
                            std::vector<RedisConnection>& control,
                            const std::function<bool(size_t)>& forked);

}  // namespace shardctl::launcher
