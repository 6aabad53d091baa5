// Where a live import (`import --live`) stands, in <deployment>/import-live/progress.json: the
// importing process rewrites it every second; `status`, the supervisor's /metrics and
// `import --cutover` read it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

struct LiveImportProgress {
  std::string source;
  // snapshot, copying, following, cutover, done, failed; stopped: its process is gone;
  // stalled: following, but silent for 5 s (stuck on a node that does not answer)
  std::string phase;
  int pid = 0;
  uint64_t keys = 0;           // copied from the snapshot
  uint64_t commands = 0;       // stream commands applied
  uint64_t co_located = 0;     // of them, with keys in several slots (cluster/repl_apply.h)
  int64_t applied_offset = 0;  // the source's replication offset applied up to
  int64_t source_offset = 0;   // the source's own offset, last seen
  int64_t lag_bytes = 0;
  int64_t lag_ms = 0;
  int64_t updated_unix_ms = 0;
  std::string error;  // failed: why
  // The primaries expire nothing until the import ends (cluster/expiry_hold.h, Valkey 8.1+).
  bool expiry_held = false;
};

std::filesystem::path LiveImportDir(const DeploymentDir& dir);
// While the primaries hold expiry for a live import (cluster/expiry_hold.h),
// <deployment>/import-live/expiry-held names its process and every node it set import-mode on
// (a deployment that spans hosts: theirs too). One killed before it let them go leaves the file
// naming a dead process, and whoever finds it so sets import-mode back to no on those nodes (the
// supervisor, or the next live import), then removes it.
struct ExpiryHold {
  ProcessId holder;
  std::vector<common::Endpoint> nodes;
};
common::Status WriteExpiryHold(const DeploymentDir& dir, const ExpiryHold& hold);
std::optional<ExpiryHold> ReadExpiryHold(const DeploymentDir& dir);  // nullopt: none
void RemoveExpiryHold(const DeploymentDir& dir);

// The progress of a live import of this deployment whose process still runs, that ended in the
// last minute, or whose process is gone before its cutover (phase "stopped"); a following import
// silent for 5 s is "stalled" with its lag at least that long. nullopt when there is none.
std::optional<LiveImportProgress> ReadLiveImport(const DeploymentDir& dir);

// Stamps `progress` with the time and writes it (atomically).
common::Status WriteLiveImport(const DeploymentDir& dir, LiveImportProgress& progress);

}  // namespace shardctl::launcher
