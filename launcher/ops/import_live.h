// `import --live`: the source's keys as of one snapshot, then every write it makes after, until
// `import --cutover` (or Ctrl-C) asks to stop once the cluster has caught up.
//
//   source ──PSYNC──▶ snapshot ──▶ <dir>/import-live/source-<i>.rdb ──scratch server──▶ key_copy
//      │                                                    (the stream meanwhile spooled to disk)
//      └── writes after the snapshot ──▶ spool ──ReplStreamParser──▶ ReplPlanner ──▶ ReplApplier
//                                                 (from the snapshot's offset: none missed or
//                                                 twice)
//
// Every second <dir>/import-live/progress.json says where it is (phase, offsets, lag in bytes and
// ms), which `status` and `/metrics` show. `import --cutover` writes <dir>/import-live/cutover
// and waits for the follower to report that it caught up (lag 0) and stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "launcher/cluster/access.h"
#include "launcher/ops/import.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/serving_cluster.h"
#include "launcher/ops/target.h"
#include "launcher/state/import_progress.h"

namespace shardctl::launcher {

// Follows `sources` into the deployment until cutover or Ctrl-C: one standalone primary, or
// every primary of a source cluster (`report.source_is_cluster`), each by its own replication
// stream. Keys of different source primaries are in different slots, so their streams apply in
// any interleaving; a source cluster that moves slots or fails over meanwhile stops the import
// with an error (the same key would then arrive on two streams in no common order).
Outcome<ImportReport> FollowSource(const ImportRequest& request, const Access& source_access,
                                   const std::vector<common::Endpoint>& sources,
                                   const Target& target, const ServingCluster& serving,
                                   ImportReport report);

// `import --cutover`: asks the running live import to finish and waits for its report.
Outcome<ImportReport> Cutover(const Target& target);

}  // namespace shardctl::launcher
