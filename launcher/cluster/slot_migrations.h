// Valkey 9's atomic slot migration jobs, as CLUSTER GETSLOTMIGRATIONS lists them on either end:
// the slot mover polls its own job, and a backup must not be cut while one runs (the target
// holds a copy of the slots' keys, hidden from DBSIZE and SCAN but written to its snapshots).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

// One job: "name", "operation" (IMPORT or EXPORT), "slot_ranges", "source_node", "target_node",
// "state", "message", ... (a map per job, which RESP2 flattens to key, value, ...).
using SlotMigrationJob = std::map<std::string, std::string>;

// The jobs in a reply as RedisConnection gives it (array elements joined with '\n').
std::vector<SlotMigrationJob> ParseSlotMigrationJobs(const std::string& text);

// `state` is an end: the job will not change the slots or their keys again.
bool SlotMigrationFinished(const std::string& state);

// `job`'s field, or "" when it has none.
std::string JobField(const SlotMigrationJob& job, const std::string& key);

// The jobs `node` lists, recent finished ones included; none on an engine without atomic slot
// migration (Redis, Valkey before 9), which answers the command as unknown.
common::Result<std::vector<SlotMigrationJob>> ListSlotMigrations(RedisConnection& node);

// Cancels every migration `node` takes part in; the slots stay with their source. Valkey 9.1
// takes the command bare and refuses the ALL its own help shows, so ALL is sent only where the
// bare form is refused.
common::Status CancelSlotMigrations(RedisConnection& node);

}  // namespace shardctl::launcher
