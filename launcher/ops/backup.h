// `shardctl backup --to DIR`: every primary's data as of one instant, in one directory.
//
//   1. every primary: a snapshot link (REPLCONF rdb-only), no fork already running
//   2. CLIENT PAUSE WRITE on every primary (writes wait, none is refused), DBSIZE
//   3. PSYNC on every link; each primary forks its snapshot in the turn it answers +FULLRESYNC
//   4. this host's snapshot children beyond the fork limit are stopped (snapshot_gate.h), then
//      CLIENT UNPAUSE: the pause lasted only as long as it took to start the forks
//   5. each snapshot streams into DIR/shard-<k>.rdb (checksummed), at most fork-limit children
//      working at once, then DIR/manifest.json
//
// A fork that does not start within the pause's bound (another save started in between) ends the
// attempt: writes resume, and it is tried again. Nothing is written to the shards' disks.
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

struct BackupRequest {
  Spec spec;
  std::filesystem::path to;  // new, or an empty directory
  std::function<void(const std::string&)> on_progress;
  const std::atomic<bool>* interrupted = nullptr;  // Ctrl-C: stop, remove what was written
  // How long to wait, rather than refuse at once, while another command holds the deployment's
  // data or snapshots or an atomic slot migration runs (--wait).
  std::chrono::milliseconds wait{0};
};

struct BackupReport {
  std::filesystem::path dir;
  BackupManifest manifest;
  int attempts = 1;                  // pauses it took to start every fork inside one
  bool cut_realtime = false;         // the cut ran at real-time priority (os/realtime_section.h)
  std::string cut_realtime_refusal;  // why not ("Operation not permitted"); "" when it did
  int fork_limit = 1;
  int most_copying = 0;               // the most of this host's snapshot children that ran at once
  std::chrono::milliseconds checked{0};  // reading every file back with the engine's checker
  std::chrono::milliseconds took{0};  // from start to end, the wait included
  std::chrono::milliseconds waited{0};  // of that, waiting with --wait for another command
  std::string warning;  // what the operator should know of what was backed up ("" for nothing)
};

Outcome<BackupReport> Backup(const BackupRequest& request);

}  // namespace shardctl::launcher
