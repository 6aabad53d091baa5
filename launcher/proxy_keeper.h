// ProxyKeeper: the deployment's shardproxy (`up --proxy-port`), run and healed by the supervisor.
//
//   Supervisor::Run ── cluster ready ──▶ Start(): adopt the proxy in proxy.pid if it still runs,
//                                        else spawn it and wait until it answers PING
//   pidfd readable (it exited) ──▶ restart after RestartPolicy's backoff (crash loops slow down)
//   StopAll ──▶ Stop(): SIGTERM, SIGKILL after a grace; no restarts afterwards
//
// Lives on the supervisor's loop thread; its handles are OwnedHandles, so the supervisor's final
// uv_walk closes and frees them.
#pragma once

#include <spdlog/spdlog.h>
#include <uv.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/process.h"
#include "launcher/restart_policy.h"
#include "launcher/state.h"

namespace shardctl::launcher {

struct ProxyExitWatch;
struct ProxyRestartTimer;

// shardproxy's command line for a deployment: every primary as a seed, the deployment's bind
// address with the proxy port. Pure.
std::vector<std::string> ProxyArgv(const Deployment& deployment);

// Where `up` finds shardproxy: $SHARDCTL_PROXY_BINARY, else next to the running shardctl, else
// $PATH. The error says how to fix it.
common::Result<std::string> FindProxyBinary();

class ProxyKeeper {
 public:
  ProxyKeeper(uv_loop_t* loop, const Deployment& deployment, const DeploymentDir& dir,
              std::shared_ptr<spdlog::logger> log);
  ProxyKeeper(const ProxyKeeper&) = delete;
  ProxyKeeper& operator=(const ProxyKeeper&) = delete;

  // Adopts or spawns the proxy. A spawned proxy must answer PING within a few seconds, else the
  // error carries the end of proxy.log.
  common::Status Start();
  // Stops the proxy (if this keeper runs or adopted one) and stops healing it.
  void Stop();
  // For the control socket's status reply.
  nlohmann::json Status() const;

  // Called by the handles' callbacks.
  void OnExit();
  void OnRestartTimer();

 private:
  common::Result<ProcessId> Spawn();
  void Watch();
  std::string Reap();

  uv_loop_t* loop_;
  const Deployment& deployment_;
  DeploymentDir dir_;
  std::shared_ptr<spdlog::logger> log_;
  ProcessId process_;
  bool is_child_ = false;
  bool stopped_ = false;
  std::string state_ = "starting";
  int restarts_ = 0;
  std::string last_exit_;
  std::chrono::steady_clock::time_point started_;
  RestartPolicy policy_;
  ProxyExitWatch* watch_ = nullptr;
  ProxyRestartTimer* restart_timer_ = nullptr;
};

}  // namespace shardctl::launcher
