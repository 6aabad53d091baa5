// Redis Functions libraries are not keys: a copy by key (import, a restore onto another shape)
// leaves them behind, and every FCALL the applications make then fails with "Function not
// found". They go as the engine serializes them: FUNCTION DUMP on the source, FUNCTION RESTORE
// ... REPLACE on every primary of the cluster (each primary holds its own; replicas follow).
#pragma once

#include "common/cluster_text.h"
#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

// Copies `source`'s libraries to every primary of `target`. A source that has no FUNCTION
// command (before Redis 7) has none to copy; any other failure names the side and the command.
common::Status CopyFunctions(const common::Endpoint& source, const Access& source_access,
                             const common::SlotTable& target, const Access& target_access);

}  // namespace shardctl::launcher
