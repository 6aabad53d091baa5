// `shardctl restore --from DIR`: a backup's keys into this deployment, whatever its shard count
// or engine version (when that engine reads the backup's RDB format).
//
//   check:  manifest, every file's size and SHA-256, the format against the engine, the
//           deployment empty          ── any failure: one line, nothing changed
//   placed: the same shape (each file's slots are one local primary's, no AOF): every primary
//           restarted at once with its file as its snapshot, loaded by the engine; replicas
//           resync (restore_placed.h)
//   copied: any other shape, per file (several at once): a scratch server of the deployment's
//           engine loads it, its keys go to their slots' primaries (DUMP / RESTORE REPLACE, TTLs
//           kept)
//
// A restore interrupted (Ctrl-C, kill -9) leaves <deployment>/restore.json naming the backup: run
// again with the same --from, it loads or copies every key again (none twice) and finishes.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include "launcher/model/spec.h"
#include "launcher/ops/backup_manifest.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct RestoreRequest {
  Spec spec;
  std::filesystem::path from;
  bool dry_run = false;  // check everything, copy nothing
  std::function<void(const std::string&)> on_progress;
  const std::atomic<bool>* interrupted = nullptr;
};

struct RestoreReport {
  BackupManifest manifest;
  size_t target_shards = 0;   // primaries of this deployment
  bool resumed = false;       // a previous restore of this backup was finished
  uint64_t keys = 0;          // keys restored
  uint64_t expired = 0;       // keys of the backup whose TTL ran out before they were copied
  uint64_t keys_after = 0;    // DBSIZE summed over the primaries afterwards
  std::string method;         // "placed" (file by file) or "copied" (key by key)
  std::string why_copied;     // when copied: why the files could not be placed
  uint64_t replica_keys = 0;  // placed: keys the replicas hold once resynced
  std::chrono::milliseconds took{0};
};

Outcome<RestoreReport> Restore(const RestoreRequest& request);

// The manifest of the backup in `dir`, after checking that every file it names is there with its
// size and checksum. Errors are the user's (Fault::kUsage) and name the file.
Outcome<BackupManifest> ReadCheckedBackup(const std::filesystem::path& dir);

}  // namespace shardctl::launcher
