// restore's fast path, for a backup of this deployment's shape (restore_placement.h decides):
// each file becomes its primary's snapshot and is loaded by the engine itself, all at once.
//
//   replicas kept from taking over (cluster-replica-no-failover yes)
//   ─▶ file k copied beside primary k's data (DeploymentDir::ShardPlacedSnapshot)
//   ─▶ every such primary restarted through the supervisor at once (RestartShard, "placed"):
//      its old data deleted, the file made its dump.rdb, loaded as the process starts
//   ─▶ replicas resync from their restarted primary ─▶ their failover setting put back
//
// A deployment with AOF persistence is not placed (the engine loads its AOF, not an RDB, when it
// starts); its keys are copied instead.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "launcher/ops/backup_manifest.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/restore_placement.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {

// The shard index of each primary, when every one of them is a shard this host runs under a live
// supervisor and the deployment can load an RDB at start; otherwise why not, one clause.
struct LocalPrimaries {
  std::vector<int> shard_of_primary;
  std::string why_not;
};
LocalPrimaries FindLocalPrimaries(const Target& target,
                                  const std::vector<common::NodeLine>& primaries);

struct PlacedRestore {
  uint64_t keys = 0;          // keys the primaries hold once loaded
  uint64_t replica_keys = 0;  // keys their replicas hold once resynced
};

// Loads file k of `manifest` (in `from`) on primaries[placement.primary_of_file[k]]. Errors say
// which shard failed and where its file is; the replicas' setting is put back either way. The
// caller holds the deployment's restart lock (DataLock::Kind::kRestarts).
Outcome<PlacedRestore> RestoreByPlacing(const Target& target, const common::SlotTable& table,
                                        const std::vector<int>& shard_of_primary,
                                        const BackupManifest& manifest,
                                        const std::filesystem::path& from,
                                        const Placement& placement,
                                        const std::function<void(const std::string&)>& progress);

}  // namespace shardctl::launcher
