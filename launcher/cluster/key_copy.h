// Copying every key of one node into a cluster, by value: SCAN the source, read each key with its
// PTTL, write it on the primary that owns its slot with the TTL kept. Strings go by GET and SET
// (DUMP would LZF-compress them on the source, most of the source's cost); every other type by
// DUMP and RESTORE REPLACE, so the engine serializes it itself and nothing here knows an RDB
// encoding. `restore` copies from a scratch server that loaded a backup file, `import` from the
// instance a user runs today.
//
//   scanner: SCAN cursor COUNT batch*N, cut into batches ──▶ [ bounded queue of key batches ]
//   workers (N, each with its own connections):
//     PTTL + GET (DUMP for what is not a string) of a batch, pipelined on the source ──▶ SETs and
//     RESTOREs grouped by slot owner, sent to every owner before any reply is read; those replies
//     are read after the next batch's values, so the source and the primaries work at once
//
// Replies are read as RESP frames (frame_link.h): a GET or DUMP reply is written on as the SET or
// RESTORE argument it already is, copied once, never parsed into a reply tree.
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
  // Keys per pipelined round; one SCAN asks for a batch per worker. 1024 rather than 256: each
  // primary then gets a quarter of the batch in one write, and the primaries and this process
  // spend about 1.3 us a key less in reads, writes and wake-ups (docs/benchmarks.md).
  int batch = 1024;
  std::chrono::milliseconds timeout{30000};  // per reply
  // Totals so far, after every batch (called from the workers, serialized).
  std::function<void(uint64_t keys, uint64_t bytes)> on_progress;
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C) to stop after the batches in hand
  // The source and the primaries hold expiry (import-mode, cluster/expiry_hold.h): every
  // connection says CLIENT IMPORT-SOURCE ON, and TTLs go as expire times (PEXPIRETIME, SET PXAT,
  // RESTORE ABSTTL), a past one too: the key stays until a later write says otherwise.
  bool expiry_held = false;
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
