// Internals of the supervisor, shared by supervisor.cc (shard lifecycle) and
// supervisor_control.cc (the control socket). Not for other modules.
#pragma once

#include <spdlog/spdlog.h>
#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "launcher/failover.h"
#include "launcher/fork_scheduler.h"
#include "launcher/health_checker.h"
#include "launcher/proxy_keeper.h"
#include "launcher/restart_policy.h"
#include "launcher/supervisor.h"

namespace shardctl::launcher {

using SteadyClock = std::chrono::steady_clock;

// Heap-allocated libuv handles derive from this and put themselves in handle->data, so that any
// handle can be closed with the right callback (DeleteOwnedHandle). Handles embedded in the
// Supervisor keep data == nullptr and reach it through loop->data.
struct OwnedHandle {
  virtual ~OwnedHandle() = default;
};
void DeleteOwnedHandle(uv_handle_t* handle);

struct ShardSlot;

// Watches one process's pidfd: readable means the process ended.
struct ExitWatch : OwnedHandle {
  ~ExitWatch() override;
  uv_poll_t poll;
  int pidfd = -1;
  ShardSlot* slot = nullptr;
};

struct RestartTimer : OwnedHandle {
  uv_timer_t timer;
  ShardSlot* slot = nullptr;
};

// One shard as the supervisor tracks it.
struct ShardSlot {
  int index = 0;
  ProcessId process;      // pid 0 while no process runs
  bool is_child = false;  // spawned by this supervisor (exit status known) or adopted
  SteadyClock::time_point started;
  std::string state = "starting";  // starting, ok, unresponsive, restarting, stopped
  RestartPolicy policy;
  int restarts = 0;
  std::string last_exit;  // "killed by signal 9", "" if never
  int64_t last_exit_unix_ms = 0;
  bool restart_requested = false;  // an operator's restart: respawn at once when it exits
  SteadyClock::time_point restart_kill_deadline;
  bool hung_kill_sent = false;
  ExitWatch* watch = nullptr;
  RestartTimer* restart_timer = nullptr;
};

// A connection on the control socket.
struct ControlClient : OwnedHandle {
  uv_pipe_t pipe;
  std::string buffer;
};

class Supervisor {
 public:
  Supervisor(const DeploymentDir& dir, EventSink events);
  int Run();

  // Control requests (supervisor_control.cc). `stop_after` asks for shutdown once replied.
  nlohmann::json Handle(const std::string& line, bool& stop_after);
  common::Status Listen();
  void BeginShutdown();

  // Lifecycle (supervisor.cc).
  void OnProcessExit(ShardSlot& slot);
  void OnRestartTimer(ShardSlot& slot);
  void OnHealthTick();
  void RequestStop(int signal_number);

 private:
  nlohmann::json StatusReply() const;
  nlohmann::json RestartReply(const nlohmann::json& request);
  common::Status TakeLock();
  void InstallSignalsAndTimers();
  common::Result<nlohmann::json> StartFresh();
  common::Result<nlohmann::json> Adopt();
  void Watch(ShardSlot& slot);
  void HandleExit(ShardSlot& slot, const std::string& how);
  void Respawn(ShardSlot& slot);
  // When the slot's process is (was) a primary owning slots with a live replica, promotes that
  // replica. Returns true when one took over. Blocks up to a few seconds.
  bool HandOverPrimary(const ShardSlot& slot, FailoverMode mode);
  void StopShards();
  // Stops the health checker and every shard, once; exits seen afterwards are not crashes.
  void StopAll();
  void RotateShardLogs();
  int Finish(int code);

  DeploymentDir dir_;
  EventSink events_;
  Deployment deployment_;
  std::vector<std::unique_ptr<ShardSlot>> slots_;
  std::unique_ptr<HealthChecker> health_;
  std::unique_ptr<ForkScheduler> forks_;  // only with persistence
  std::unique_ptr<ProxyKeeper> proxy_;    // only with --proxy-port
  std::shared_ptr<spdlog::logger> log_;
  int lock_fd_ = -1;
  // Value-initialized: data must start as nullptr, which BeginShutdown() reads to pick the close
  // callback (libuv's init functions leave data untouched).
  uv_loop_t loop_{};
  uv_pipe_t server_{};
  uv_signal_t signals_[2]{};
  uv_timer_t health_timer_{};
  int health_ticks_ = 0;
  bool stop_requested_ = false;
  bool shutting_down_ = false;  // shards are being (or have been) stopped: exits are expected
  bool closing_ = false;        // handles are being closed: the loop is about to end
};

}  // namespace shardctl::launcher
