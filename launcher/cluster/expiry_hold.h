// Holding expiry on a deployment's primaries while `import --live` catches up with its source.
//
// A key is copied with its TTL, and the source's writes reach the cluster later, by the lag. A key
// whose TTL runs out here within that lag is gone before the write that extended it on the source
// (a session's EXPIRE, an INCR) arrives: the EXPIRE then finds nothing, and the INCR starts again
// from 1. A replica has no such window: it expires nothing itself and waits for its primary's DEL.
// Valkey 8.1+ makes a primary behave so with `import-mode yes`: it expires and evicts nothing,
// and a client that says CLIENT IMPORT-SOURCE ON reads and writes keys past their TTL as if they
// were not (other clients see them as expired). The source's own expiry arrives in its stream as
// DEL, so the cluster keeps what the source keeps; once the import ends, `import-mode no` lets
// the primaries expire what is due.
//
// Redis (7.0, 8.2) has no such mode: there the window stays (ops/import_live.cc warns).
#pragma once

#include <chrono>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

inline const Command kImportSourceOn = {"CLIENT", "IMPORT-SOURCE", "ON"};

// CLIENT IMPORT-SOURCE ON, answered: `connection` reads and writes keys past their TTL.
common::Status DeclareImportSource(RedisConnection& connection);

// True when the engine behind `node` has import-mode (its CONFIG GET knows the name).
common::Result<bool> CanHoldExpiry(const Access& access, const common::Endpoint& node);

// CONFIG SET import-mode yes (`held`) or no on every one of `nodes`, each given `timeout` to
// answer; all are tried, the error names those that did not take it.
common::Status SetExpiryHeld(const Access& access, const std::vector<common::Endpoint>& nodes,
                             bool held,
                             std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace shardctl::launcher
