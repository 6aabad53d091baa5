// ProxyKeeper: the deployment's shardproxy (`up --proxy-port`), run and healed by the supervisor.
//
//   Supervisor::Run ── cluster ready ──▶ Start(): adopt the proxy in proxy.pid if it still runs,
//                                        else spawn it and wait until it answers PING
//   ProcessWatcher: it exited ──▶ restart after RestartPolicy's backoff (crash loops slow down)
//   StopAll ──▶ Stop(): SIGTERM, SIGKILL after a grace; no restarts afterwards
//
// Lives on the supervisor's loop thread, watched by the same ProcessWatcher as the shards.
#pragma once

#include <spdlog/spdlog.h>
#include <uv.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/process.h"
#include "launcher/supervisor/process_watcher.h"

namespace shardctl::launcher {

// shardproxy's command line for a deployment: every primary as a seed, the deployment's bind
// address with the proxy port, and `auth_file` when the shards have a password. Pure.
std::vector<std::string> ProxyArgv(const Deployment& deployment,
                                   const std::filesystem::path& auth_file);

// The text of shardproxy's --auth-file for a deployment with a password: clients log in with the
// shards' password and the proxy logs in to the shards with it. Pure.
std::string ProxyAuthText(const AuthConfig& auth);

// Where `up` finds shardproxy: $SHARDCTL_PROXY_BINARY, else next to the running shardctl, else
// $PATH. The error says how to fix it.
common::Result<std::string> FindProxyBinary();

class ProxyKeeper {
 public:
  // `access` (which must outlive the keeper) is how it checks that the proxy answers.
  ProxyKeeper(uv_loop_t* loop, const Deployment& deployment, const SharedAccess& access,
              const DeploymentDir& dir, std::shared_ptr<spdlog::logger> log);
  ProxyKeeper(const ProxyKeeper&) = delete;
  ProxyKeeper& operator=(const ProxyKeeper&) = delete;

  // Adopts or spawns the proxy. A spawned proxy must answer PING within a few seconds, else the
  // error carries the end of proxy.log.
  common::Status Start();
  // Stops the proxy (if this keeper runs or adopted one) and stops healing it.
  void Stop();
  // For the control socket's status reply.
  nlohmann::json Status() const;

 private:
  common::Result<ProcessId> Spawn();
  void OnExit(const ProcessWatcher::Exit& exit);
  void OnRestartDue();

  const Deployment& deployment_;
  const SharedAccess& access_;
  DeploymentDir dir_;
  std::shared_ptr<spdlog::logger> log_;
  ProcessWatcher watcher_;
  bool stopped_ = false;
  std::string state_ = "starting";
};

}  // namespace shardctl::launcher
