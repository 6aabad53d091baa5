// Copying every key of one node into a cluster, by value: SCAN the source, read each key with its
// PTTL, write it on the primary that owns its slot with the TTL kept. Strings go by GET and SET
// (DUMP would LZF-compress them on the source, most of the source's cost); every other type by
// DUMP and RESTORE REPLACE, so the engine serializes it itself and nothing here knows an RDB
// encoding. `restore` copies from a scratch server that loaded a backup file, `import` from the
// instance a user runs today.
//
//   scanner: SCAN cursor COUNT batch ──▶ [ bounded queue of key batches ]
//   workers (N, each with its own connections):
//     PTTL + GET (DUMP for what is not a string) of a batch, pipelined on the source ──▶ SETs and
//     RESTOREs grouped by slot owner, sent to every owner before any reply is read; those replies
//     are read after the next batch's values, so the source and the primaries work at once
//
// SET and RESTORE REPLACE make a copy that is run again (after a crash) end where one run would:
// every key once, with the source's value.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "common/cluster_text.h"
#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

struct KeyCopyOptions {
  Access source_access;  // how to log in to the source (its password, its TLS)
  Access target_access;  // and to the cluster's primaries
  int workers = 4;       // read/write connections at once; the scan is one cursor
  int batch = 256;       // keys per SCAN COUNT and per pipelined round
  std::chrono::milliseconds timeout{30000};  // per reply
  // Totals so far, after every batch (called from the workers, serialized).
  std::function<void(uint64_t keys, uint64_t bytes)> on_progress;
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C) to stop after the batches in hand
};

struct KeyCopyReport {
  uint64_t keys = 0;      // keys restored on the cluster
  uint64_t bytes = 0;     // their values' bytes (DUMP payloads for all but strings)
  uint64_t vanished = 0;  // keys the scan saw that expired or were deleted before their read
};

// Copies every key of db 0 of `source` to the primaries `target` routes its slot to. The first
// failure stops the copy and is returned naming the key and node; keys already copied stay.
common::Result<KeyCopyReport> CopyKeys(const common::Endpoint& source,
                                       const common::SlotTable& target,
                                       const KeyCopyOptions& options);

}  // namespace shardctl::launcher
