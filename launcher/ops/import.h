// `shardctl import --from HOST:PORT`: every key of a running standalone instance (or of every
// primary of another cluster) copied into this deployment, each to its slot's primary, TTLs kept,
// every type (the engines' own DUMP / RESTORE).
//
//   probe the source: engine and version, keys per db, cluster or not
//   problems (each one line, listed by --dry-run, refused before a key is copied):
//     keys in a db other than 0 (a cluster has only db 0), a data format the deployment's engine
//     cannot load, the deployment not empty, the source being the deployment itself
//   copy: one scan per source primary (key_copy.h), several DUMP/RESTORE connections each
//
// An import interrupted (Ctrl-C, kill -9) leaves <deployment>/import.json naming the source and
// its run ids: the same command again copies every key again (REPLACE: none twice) and finishes,
// unless the source has restarted since (then it is refused: the keys left may be the only copy).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct ImportRequest {
  Spec spec;
  std::string from;                                    // HOST:PORT of the source
  std::optional<std::filesystem::path> password_file;  // the source's password
  std::optional<std::filesystem::path> tls_ca;         // speak TLS to the source, trusting this CA
  bool dry_run = false;
  bool live = false;     // follow the source's writes after the copy
  bool cutover = false;  // end a live import
  std::function<void(uint64_t keys, uint64_t of)> on_progress;
  // --live, every second while following: "following: 1200 writes applied, lag 3 ms / 120 bytes".
  std::function<void(const std::string&)> on_following;
  // What the import cannot keep exact but goes on without (said before the copy starts).
  std::function<void(const std::string&)> on_warning;
  const std::atomic<bool>* interrupted = nullptr;
};

struct ImportReport {
  std::string source;         // host:port
  std::string source_engine;  // "redis 7.0.15"
  bool source_is_cluster = false;
  uint64_t source_keys = 0;  // DBSIZE of db 0 (summed over a cluster's primaries) before the copy
  std::vector<std::string> problems;  // what makes the import impossible (dry-run lists them)
  std::vector<std::string> warnings;  // what it cannot keep exact, but goes on without
  // --live: the primaries expire nothing until the cutover (cluster/expiry_hold.h), so a key the
  // source extends while the import catches up is never lost here first.
  bool expiry_held = false;
  bool resumed = false;
  uint64_t keys = 0;      // keys copied
  uint64_t bytes = 0;     // their DUMP payloads' bytes
  uint64_t vanished = 0;  // keys deleted or expired on the source between the scan and their copy
  // --live run again: keys the deployment held that the new snapshot lacks, deleted (left by the
  // cut-short run); only when the marker names the same source processes (resumed_same_source).
  uint64_t stale_removed = 0;
  bool resumed_same_source = false;
  uint64_t keys_after = 0;
  // The source did not change while it was copied (no write, deletion or expiry), so keys_after
  // was checked against its key count: fewer fails the import.
  bool source_unchanged = false;
  std::chrono::milliseconds took{0};
  // --live: what followed the snapshot, and the lag when it stopped (0 after a cutover).
  bool live = false;
  uint64_t commands_applied = 0;
  // Of those, commands with keys in several slots run on one primary with temporary copies of
  // the other slots' keys (RENAME a b, SUNIONSTORE, ...: cluster/repl_apply.h).
  uint64_t commands_co_located = 0;
  int64_t final_lag_bytes = 0;
  int64_t cutover_ms = 0;  // from the cutover request until caught up
};

// A dry run returns the report with its problems; a real run with problems fails with the first.
Outcome<ImportReport> Import(const ImportRequest& request);

}  // namespace shardctl::launcher
