// A deployment's directory: everything shardctl knows about a deployment lives here, so any
// shardctl process (a new supervisor, `status`, `down`) can pick up where another left off.
//
//   <state-root>/<name>/
//     deployment.json     the plan and the engine, written by `up`
//     supervisor.lock     flock()ed by the live supervisor for its whole life
//     supervisor.pid      "pid start_time" of the supervisor
//     supervisor.log      the supervisor's log (spdlog, rotated)
//     control.sock        the supervisor's control socket (JSON lines)
//     shards/<i>/         redis.conf, nodes.conf, server.log, pid ("pid start_time"), data
//     proxy.pid, proxy.log  shardproxy's identity and output, when the deployment has a proxy
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/engine.h"
#include "launcher/plan.h"
#include "launcher/process.h"

namespace shardctl::launcher {

class DeploymentDir {
 public:
  DeploymentDir(std::filesystem::path state_root, const std::string& name)
      : root_(std::move(state_root) / name) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path DeploymentFile() const { return root_ / "deployment.json"; }
  std::filesystem::path LockFile() const { return root_ / "supervisor.lock"; }
  std::filesystem::path SupervisorPidFile() const { return root_ / "supervisor.pid"; }
  std::filesystem::path SupervisorLog() const { return root_ / "supervisor.log"; }
  std::filesystem::path SocketPath() const { return root_ / "control.sock"; }
  std::filesystem::path ShardDir(int index) const {
    return root_ / "shards" / std::to_string(index);
  }
  std::filesystem::path ShardConfig(int index) const { return ShardDir(index) / "redis.conf"; }
  std::filesystem::path ShardLog(int index) const { return ShardDir(index) / "server.log"; }
  std::filesystem::path ShardPidFile(int index) const { return ShardDir(index) / "pid"; }
  std::filesystem::path ProxyPidFile() const { return root_ / "proxy.pid"; }
  std::filesystem::path ProxyLog() const { return root_ / "proxy.log"; }

 private:
  std::filesystem::path root_;
};

// The shardproxy the supervisor runs in front of the cluster (`up --proxy-port`).
struct ProxyConfig {
  int port = 0;                       // 0: no proxy
  int threads = 0;                    // 0: shardproxy's default
  std::string read_from = "primary";  // shardproxy --read-from
  std::string binary;                 // resolved by `up`
  bool enabled() const { return port != 0; }
  friend bool operator==(const ProxyConfig&, const ProxyConfig&) = default;
};

// What `up` records about a deployment.
struct Deployment {
  Plan plan;
  Engine engine;
  Supervision supervision;
  Durability durability;
  ProxyConfig proxy{};
};

// Creates `dir` (and parents) and proves it is writable; the error names the directory and the fix.
common::Status EnsureWritableDir(const std::filesystem::path& dir);

// Writes via a temporary file and rename, so readers never see half a file.
common::Status WriteFileAtomically(const std::filesystem::path& path, const std::string& content);

common::Result<std::string> ReadWholeFile(const std::filesystem::path& path);

common::Status WriteDeployment(const DeploymentDir& dir, const Deployment& deployment);
common::Result<Deployment> ReadDeployment(const DeploymentDir& dir);

common::Status WriteProcessId(const std::filesystem::path& path, const ProcessId& process);
// nullopt when the file is missing or unreadable.
std::optional<ProcessId> ReadProcessId(const std::filesystem::path& path);

// The last `lines` lines of a log file (for error messages), "" when unreadable.
std::string TailOfFile(const std::filesystem::path& path, int lines);

}  // namespace shardctl::launcher
