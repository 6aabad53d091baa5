// Internals of the supervisor, shared by supervisor.cc (shard lifecycle) and control.cc (the
// control socket). Private to the supervisor module (architecture_test checks *_internal.h).
#pragma once

#include <spdlog/spdlog.h>
#include <uv.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/uv/handle.h"
#include "common/uv/http_server.h"
#include "launcher/cluster/failover.h"
#include "launcher/supervisor/fork_scheduler.h"
#include "launcher/supervisor/health_checker.h"
#include "launcher/supervisor/metrics_poller.h"
#include "launcher/supervisor/process_watcher.h"
#include "launcher/supervisor/proxy_keeper.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {

using SteadyClock = std::chrono::steady_clock;

class Supervisor;

// One shard as the supervisor tracks it: its process (watched, restarted with backoff) and what
// the health checks and the operator's restarts have made of it.
struct ShardSlot {
  ShardSlot(Supervisor& supervisor, uv_loop_t* loop, int shard_index);
  int index = 0;         // the shard's name: its port, data directory and log follow from it
  int position = 0;      // its place in the plan's shard list and the health checker's port list
  bool checked = false;  // the health checker has its position (false for a shard just added)
  ProcessWatcher watcher;
  std::string state = "starting";  // starting, ok, unresponsive, restarting, disk-full, stopped
  bool restart_requested = false;  // an operator's restart: respawn at once when it exits
  bool discard_data = false;       // ... and delete its snapshot and AOF first (--discard-data)
  bool load_placed = false;        // ... and start from the backup file restore placed beside it
  SteadyClock::time_point restart_kill_deadline;
  bool hung_kill_sent = false;
  bool unreplaceable_said = false;          // "silent, but no replica can take over" logged once
  SteadyClock::time_point next_fail_check;  // when KillIfFailedWhileSilent may ask peers again
};

// A live peer's CLUSTER NODES, and one shard's own line in it.
struct PeerView {
  std::vector<common::NodeLine> nodes;
  common::NodeLine me;
};

// A connection on the control socket.
struct ControlClient : common::uv::OwnedHandle {
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
  void OnShardExit(ShardSlot& slot, const ProcessWatcher::Exit& exit);
  void OnRestartDue(ShardSlot& slot);
  // --discard-data: the shard's snapshot and AOF go before it starts again (empty).
  void DiscardShardData(int index);
  // Without persistence, the shard's dump.rdb when it is stale: a crashed shard starts empty by
  // contract, and a file there is the snapshot a `restart` carried (left behind when the command
  // died midway) or a replica's full sync; loaded at the next crash it would bring back old
  // values and deleted keys. Kept while the restart that wrote it runs (ShardRestartMarker).
  // `always`: at the crash of a process that served (the file is then older than the writes it
  // took); else only one older than the shard's pid file (its last process started with it).
  void DiscardStaleSnapshot(int index, bool always);
  // Deletes the shard's snapshot and AOF and makes the file `restore` placed its dump.rdb, so the
  // next process loads the backup. Logs and returns false when there is no such file.
  bool LoadPlacedSnapshot(int index);
  // Pure: whether a replica can take over what the shard in `view` serves (a replica, or a
  // primary without slots, has nothing of its own to lose).
  static bool Replaceable(const PeerView& view);
  // Why the replica at `replica` may not take its primary's place (WhyNotPromotable, or that it
  // did not answer INFO), or nullopt when it may.
  std::optional<std::string> WhyNotPromotableAt(const common::Endpoint& replica) const;
  // True while a placed restore runs (it holds the restart lock) and holds the replica at
  // `replica` from failing over (cluster-replica-no-failover yes): the replica has not resynced
  // from its primary's newly loaded data, so promoted it would bring back what the primary held
  // before the restore. Neither the takeover nor the kill of a silent primary counts on it.
  bool HeldByARestore(const common::Endpoint& replica) const;
  // Whether one of the replicas of the primary in `view` may take its place.
  bool HasPromotableReplica(const PeerView& view) const;

  // True (and the slot set to "disk-full", said once in the log) when the shard's data directory
  // has no room: it is then restarted by RetryDiskFull once space is freed, not by its backoff.
  bool HoldForDiskSpace(ShardSlot& slot, const std::string& how);
  void RetryDiskFull();
  void OnHealthTick();
  void RequestStop(int signal_number);

 private:
  nlohmann::json StatusReply() const;
  nlohmann::json RestartReply(const nlohmann::json& request);
  // `scale`: takes a new plan whose kept shards are unchanged; stops and deletes the removed
  // shards (emptied and forgotten by the caller), starts the added ones fresh, records the plan.
  nlohmann::json ReshapeReply(const nlohmann::json& request);
  ShardSlot* SlotOf(int index);
  // Numbers the slots in plan order and points the health checks, fork scheduler and metrics
  // poller at the plan's ports.
  void RestartChecks();
  // Start-up (Run), in order: the log, the loop and a slot per shard; the lock; the pid file;
  // then, once the shards are up, the proxy, health checks, fork scheduler and health timer.
  void OpenLogAndLoop();
  common::Status TakeLock();
  void RecordPid();
  void InstallSignalsAndTimers();
  common::Status StartProxyAndChecks(nlohmann::json& ready);
  // The Prometheus endpoint (supervisor_metrics.cc): binds --metrics-port and starts polling the
  // shards; nothing when the deployment has no metrics port. MetricsText() is the scrape's body.
  common::Status StartMetrics();
  // A new poller for the current plan (after `reshape`); nothing without --metrics-port.
  void RestartMetricsPoller();
  std::string MetricsText() const;
  common::Result<nlohmann::json> StartFresh();
  common::Result<nlohmann::json> Adopt();
  void Respawn(ShardSlot& slot);
  // When the slot's process is (was) a primary owning slots with a live replica, promotes that
  // replica. Returns true when one took over. Blocks up to a few seconds.
  bool HandOverPrimary(const ShardSlot& slot, FailoverMode mode);
  // What a live peer says of `slot`'s node; nullopt when it has no node ID yet or no peer answers.
  std::optional<PeerView> AskPeersAbout(const ShardSlot& slot) const;
  // A shard silent for a second or more whose node the cluster has marked failed is killed at
  // once (asking a peer at most every health tick while it stays silent), not after hang-grace.
  void KillIfFailedWhileSilent(ShardSlot& slot, SteadyClock::time_point now,
                               SteadyClock::duration silent);
  void StopShards();
  // Stops the health checker and every shard, once; exits seen afterwards are not crashes.
  void StopAll();
  void RotateShardLogs();
  void ContinueHeldSnapshots();
  void ReleaseLeftExpiryHold();
  int Finish(int code);

  DeploymentDir dir_;
  EventSink events_;
  Deployment deployment_;
  // How every connection to the shards logs in; threads below read it, reload-tls replaces it.
  // Declared before them so that it outlives them.
  SharedAccess access_{Access{}};
  std::vector<std::unique_ptr<ShardSlot>> slots_;
  std::unique_ptr<HealthChecker> health_;
  std::unique_ptr<ForkScheduler> forks_;                           // only with persistence
  std::unique_ptr<ProxyKeeper> proxy_;                             // only with --proxy-port
  std::unique_ptr<MetricsPoller> metrics_poller_;                  // only with --metrics-port
  std::unique_ptr<common::uv::MetricsHttpServer> metrics_server_;  // only with --metrics-port
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
  bool shutting_down_ = false;    // shards are being (or have been) stopped: exits are expected
  bool save_at_shutdown_ = true;  // persistence rdb: the shards save as they stop (not: --no-save)
  bool closing_ = false;          // handles are being closed: the loop is about to end
};

}  // namespace shardctl::launcher
