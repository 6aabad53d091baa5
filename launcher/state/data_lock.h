// DataLock: one command at a time that writes a deployment's keys, moves its slots or backs it up
// (restore, import, scale, rebalance, move-slots, backup: kData). Two at once would mix datasets
// that each checked the deployment was empty, move slots under a copy that routes by them, or cut
// a backup of a half-copied or half-moved keyspace (files whose keys are not of their slots).
// Snapshots have a lock of their own (backup, save: kSnapshots): a save during a backup counted
// the backup's forks as its own, but a save may run during a long live import. Restarting shards
// has one too (restart, a restore placing files: kRestarts), so two never snapshot or stop the
// same shard at once.
//
// The lock is flock() on <deployment>/data.lock (snapshot.lock, restart.lock), held for the
// command's life: the kernel drops it when the process ends, however it ends (kill -9 included), so
// it never outlives its holder. The file names the holder (pid and command) for the second
// command's refusal. The descriptor is close-on-exec: the scratch servers a restore starts never
// hold it.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

class DataLock {
 public:
  enum class Kind { kData, kSnapshots, kRestarts };
  // Takes the lock for `command` ("restore", "import", ...), or says who holds it.
  static common::Result<DataLock> Take(const DeploymentDir& dir, std::string_view command,
                                       Kind kind = Kind::kData);
  // Who holds it now, as the file names them ("pid 42, shardctl rebalance"); "" when nobody does
  // (by /proc/locks) or the note names no live process.
  static std::string HolderOf(const DeploymentDir& dir, Kind kind = Kind::kData);
  DataLock(DataLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  DataLock& operator=(DataLock&& other) noexcept;
  DataLock(const DataLock&) = delete;
  DataLock& operator=(const DataLock&) = delete;
  ~DataLock() { Release(); }

 private:
  explicit DataLock(int fd) : fd_(fd) {}
  void Release();
  int fd_ = -1;
};

}  // namespace shardctl::launcher
