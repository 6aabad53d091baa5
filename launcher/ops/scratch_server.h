// A throwaway server on 127.0.0.1 that loads one RDB file, so its keys can be read over RESP:
// `restore` lets the engine load a backup's file and copies keys from there (shardctl has no RDB
// parser of its own). Stopped, and its directory removed, when the object goes.
//
//   <work_dir>/dump.rdb   a symbolic link to the file (nothing is copied)
//   <work_dir>/pid        "pid start_time", so a run after a crash stops what this one left
//   <work_dir>/server.log the engine's words when it refuses the file
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <utility>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

// What a scratch server does with keys whose TTL runs out while it serves them.
enum class ScratchExpiry {
  kAsUsual,  // skipped when loaded, expired while it runs
  // Kept, as a replica keeps them until its primary deletes them: loaded as a replica (of a port
  // nobody listens on), then made a primary in the engine's import-mode (Valkey 8.1+), which
  // expires nothing. A client that says CLIENT IMPORT-SOURCE ON reads them with their expire
  // times, past ones too (import --live: the source may have extended them since its snapshot).
  kHeld,
};

class ScratchServer {
 public:
  // Starts `engine` on a free loopback port with `rdb_file` as its data, no persistence and no
  // memory cap, and waits until it has loaded the file (at most `load_timeout`). An engine that
  // refuses the file is an error quoting its log ("Can't handle RDB format version 12").
  static common::Result<ScratchServer> Start(const Engine& engine,
                                             const std::filesystem::path& rdb_file,
                                             const std::filesystem::path& work_dir,
                                             std::chrono::milliseconds load_timeout,
                                             ScratchExpiry expiry = ScratchExpiry::kAsUsual);
  ScratchServer(ScratchServer&& other) noexcept
      : process_(other.process_),
        port_(other.port_),
        work_dir_(std::exchange(other.work_dir_, {})) {}
  ScratchServer& operator=(ScratchServer&&) = delete;
  ~ScratchServer();

  common::Endpoint endpoint() const { return {"127.0.0.1", port_}; }

 private:
  ScratchServer(ProcessId process, int port, std::filesystem::path work_dir)
      : process_(process), port_(port), work_dir_(std::move(work_dir)) {}

  ProcessId process_;
  int port_ = 0;
  std::filesystem::path work_dir_;  // empty once moved from
};

// Stops a scratch server a crashed run left in `work_dir` (its pid file names it) and removes
// the directory.
void RemoveScratchDir(const std::filesystem::path& work_dir);

// Where a deployment's scratch servers work: a restore's, one directory per backup file under
// the root; a live import's, one directory.
std::filesystem::path RestoreScratchRoot(const DeploymentDir& dir);
std::filesystem::path LiveImportScratchDir(const DeploymentDir& dir);

// Stops every scratch server a killed restore or live import of the deployment left, and
// removes their directories. `down` does: nothing of a deployment runs after it, and a purge
// would delete the only record of them.
void StopLeftScratchServers(const DeploymentDir& dir);

}  // namespace shardctl::launcher
