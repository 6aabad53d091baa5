// DataLock: one command at a time that writes a deployment's keys, moves its slots or snapshots
// it (restore, import, scale, rebalance, move-slots, backup, save). Two at once would mix
// datasets that each checked the deployment was empty, move slots under a copy that routes by
// them, cut a backup of a half-copied or half-moved keyspace (files whose keys are not of their
// slots), or count one command's snapshot forks as the other's.
//
// The lock is flock() on <deployment>/data.lock, held for the command's life: the kernel drops
// it when the process ends, however it ends (kill -9 included), so it never outlives its
// holder. The file names the holder (pid and command) for the second command's refusal. The
// descriptor is close-on-exec: the scratch servers a restore starts never hold it.
#pragma once

#include <string_view>
#include <utility>

#include "common/result.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

class DataLock {
 public:
  // Takes the lock for `command` ("restore", "import", ...), or says who holds it.
  static common::Result<DataLock> Take(const DeploymentDir& dir, std::string_view command);
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
