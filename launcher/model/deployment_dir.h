// Where a deployment's files live. Pure path arithmetic: reading and writing them is state/ and
// os/. Everything shardctl knows about a deployment lives here, so any shardctl process (a new
// supervisor, `status`, `down`) can pick up where another left off.
//
//   <state-root>/<name>/
//     deployment.json     the plan and the engine, written by `up`
//     up.lock             flock()ed by a running `up`, so two `up`s of one deployment serialise
//     supervisor.lock     flock()ed by the live supervisor for its whole life
//     supervisor.pid      "pid start_time" of the supervisor
//     supervisor.log      the supervisor's log (spdlog, rotated)
//     control.sock        the supervisor's control socket (JSON lines)
//     shards/<i>/         redis.conf, nodes.conf, server.log, pid ("pid start_time"), data
//     proxy.pid, proxy.log  shardproxy's identity and output, when the deployment has a proxy
//     password            the shards' password (mode 0600), when `up --password-file` set one
//     backup.pid          a running `backup` (it may hold snapshot children stopped)
//     data.lock           flock()ed by the one command changing the data or the shape, or
//                         backing it up (restore, import, scale, rebalance, move-slots,
//                         backup: state/data_lock.h)
//     snapshot.lock       flock()ed by the one command forking snapshots (backup, save)
//     proxy.auth          shardproxy's --auth-file (mode 0600): the same password both ways
//   Every file is mode 0600 and the directory 0700: the configs hold the password.
#pragma once

#include <filesystem>
#include <string>

#include "launcher/model/spec.h"

namespace shardctl::launcher {

class DeploymentDir {
 public:
  DeploymentDir(std::filesystem::path state_root, const std::string& name)
      : root_(std::move(state_root) / name) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path DeploymentFile() const { return root_ / "deployment.json"; }
  std::filesystem::path UpLockFile() const { return root_ / "up.lock"; }
  std::filesystem::path LockFile() const { return root_ / "supervisor.lock"; }
  std::filesystem::path SupervisorPidFile() const { return root_ / "supervisor.pid"; }
  std::filesystem::path SupervisorLog() const { return root_ / "supervisor.log"; }
  std::filesystem::path SupervisorOutput() const { return root_ / "supervisor.out"; }
  std::filesystem::path SocketPath() const { return root_ / "control.sock"; }
  std::filesystem::path ShardDir(int index) const {
    return root_ / "shards" / std::to_string(index);
  }
  std::filesystem::path ShardConfig(int index) const { return ShardDir(index) / "redis.conf"; }
  std::filesystem::path ShardLog(int index) const { return ShardDir(index) / "server.log"; }
  std::filesystem::path ShardPidFile(int index) const { return ShardDir(index) / "pid"; }
  // Written by `restart` while the snapshot it saved in the shard's dump.rdb carries the shard's
  // keys across its restart (the restart's process id): the supervisor keeps that file while the
  // process lives, and deletes it as stale after a crash otherwise (persistence none).
  std::filesystem::path ShardRestartMarker(int index) const {
    return ShardDir(index) / "restart.pid";
  }
  // A backup's file put beside the shard by `restore` (same shape): the supervisor makes it the
  // shard's dump.rdb when the shard next starts.
  std::filesystem::path ShardPlacedSnapshot(int index) const {
    return ShardDir(index) / "restore.rdb";
  }
  // Resume markers (ops/resume_marker.h): a restore or an import into this deployment was cut
  // short while these exist, and its keys are partly copied.
  std::filesystem::path RestoreMarkerFile() const { return root_ / "restore.json"; }
  std::filesystem::path ImportMarkerFile() const { return root_ / "import.json"; }
  std::filesystem::path ProxyPidFile() const { return root_ / "proxy.pid"; }
  std::filesystem::path ProxyLog() const { return root_ / "proxy.log"; }
  std::filesystem::path PasswordFile() const { return root_ / "password"; }
  // "pid start_time" of a running `backup`, which may hold snapshot children stopped.
  std::filesystem::path BackupPidFile() const { return root_ / "backup.pid"; }
  std::filesystem::path ProxyAuthFile() const { return root_ / "proxy.auth"; }
  // Copies of the TLS files the shards serve (written by `up` and each successful reload-tls):
  // what a new CA must still verify, and what a shard goes back to when new files fail it.
  std::filesystem::path TlsInUseDir() const { return root_ / "tls-in-use"; }

 private:
  std::filesystem::path root_;
};

// The deployment directory the spec names (state dir + name).
inline DeploymentDir DirOf(const Spec& spec) {
  return DeploymentDir(spec.state_dir.value_or(DefaultStateDir()), spec.name);
}

}  // namespace shardctl::launcher
