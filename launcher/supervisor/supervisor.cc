// The supervisor's shard lifecycle: start or adopt, watch, restart with backoff, detect hangs,
// stop. The control socket is in supervisor_control.cc. See supervisor.h for the flow diagram.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>
#include <utility>

#include "common/duration.h"
#include "launcher/cluster/expiry_hold.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/os/files.h"
#include "launcher/state/data_lock.h"
#include "launcher/state/deployment_store.h"
#include "launcher/state/import_progress.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor_internal.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;

constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr auto kHealthInterval = std::chrono::milliseconds(250);
constexpr auto kPingTimeout = std::chrono::milliseconds(250);
constexpr auto kAdoptHealthyWait = std::chrono::seconds(15);
// A shard silent this long gets its node looked up in a peer's CLUSTER NODES
// (KillIfFailedWhileSilent).
constexpr auto kFailCheckAfter = std::chrono::seconds(1);
constexpr uint64_t kMaxShardLogBytes = 16 << 20;
constexpr int kKeptShardLogs = 3;

Supervisor& Of(uv_handle_t* handle) { return *static_cast<Supervisor*>(handle->loop->data); }

std::string Ms(SteadyClock::duration duration) {
  return common::FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(duration));
}

}  // namespace

ShardSlot::ShardSlot(Supervisor& supervisor, uv_loop_t* loop, int shard_index)
    : index(shard_index),
      watcher(
          loop,
          [&supervisor, this](const ProcessWatcher::Exit& exit) {
            supervisor.OnShardExit(*this, exit);
          },
          [&supervisor, this] { supervisor.OnRestartDue(*this); }) {}

Supervisor::Supervisor(const DeploymentDir& dir, EventSink events)
    : dir_(dir), events_(std::move(events)) {}

common::Status Supervisor::TakeLock() {
  lock_fd_ = open(dir_.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return Error(dir_.LockFile().string() + ": " + strerror(errno));
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Error("deployment \"" + deployment_.plan.name +
                 "\" already has a supervisor (see shardctl status)");
  }
  return common::Ok();
}

void Supervisor::InstallSignalsAndTimers() {
  const int numbers[2] = {SIGTERM, SIGINT};
  for (int i = 0; i < 2; ++i) {
    uv_signal_init(&loop_, &signals_[i]);
    uv_signal_start(
        &signals_[i],
        [](uv_signal_t* handle, int number) {
          Of(reinterpret_cast<uv_handle_t*>(handle)).RequestStop(number);
        },
        numbers[i]);
  }
  uv_timer_init(&loop_, &health_timer_);
}

void Supervisor::RequestStop(int signal_number) {
  if (log_) log_->info("signal {} received: stopping the deployment", signal_number);
  stop_requested_ = true;
  if (health_) BeginShutdown();  // after start-up; during it, the stop check aborts start-up
}

void Supervisor::OnShardExit(ShardSlot& slot, const ProcessWatcher::Exit& exit) {
  if (shutting_down_) {
    slot.state = "stopped";
    return;
  }
  std::chrono::milliseconds delay{0};
  RestartPolicy& policy = slot.watcher.policy();
  if (slot.restart_requested) {
    slot.restart_requested = false;
    policy.Reset();
    log_->info("shard {} {}; restarting it as requested", slot.index, exit.how);
    if (std::exchange(slot.discard_data, false)) DiscardShardData(slot.index);
    if (std::exchange(slot.load_placed, false)) LoadPlacedSnapshot(slot.index);
  } else {
    // Before the dead primary comes back (empty, or with an older snapshot), its replica takes
    // its place; the restarted process then rejoins as a replica.
    HandOverPrimary(slot, FailoverMode::kTakeover);
    // A process that never served (an engine that exits at start) took no write: a snapshot
    // a restart carried to it is still the shard's data, for the restart to roll back with.
    if (health_ && health_->LastServed(slot.position) > slot.watcher.started()) {
      DiscardStaleSnapshot(slot.index, /*always=*/true);
    }
    if (HoldForDiskSpace(slot, exit.how)) return;
    delay = policy.OnExit(exit.uptime);
    log_->warn("shard {} {} after {}; restarting in {}{}", slot.index, exit.how, Ms(exit.uptime),
               Ms(delay), policy.InCrashLoop() ? " (crash loop)" : "");
  }
  slot.state = "restarting";
  slot.watcher.RestartIn(delay);
}

std::optional<PeerView> Supervisor::AskPeersAbout(const ShardSlot& slot) const {
  auto conf = ReadWholeFile(dir_.ShardDir(slot.index) / "nodes.conf");
  auto id = conf.ok() ? MyselfId(*conf) : std::nullopt;
  if (!id) return std::nullopt;
  for (const auto& other : slots_) {  // any live peer knows who replicates whom
    if (other.get() == &slot || !other->watcher.running()) continue;
    int port = deployment_.plan.shards[other->position].port;
    auto connection = RedisConnection::Connect(*access_.Current(), deployment_.plan.bind, port,
                                               std::chrono::milliseconds(300));
    auto listing = connection.ok() ? connection->Run({"CLUSTER", "NODES"})
                                   : Result<std::string>(connection.error());
    if (!listing.ok()) continue;
    auto nodes = common::ParseClusterNodes(*listing);
    if (!nodes.ok()) continue;
    const common::NodeLine* me = common::FindNode(*nodes, *id);
    if (me == nullptr) return std::nullopt;
    PeerView view{.nodes = std::move(nodes).value(), .me = *me};
    return view;
  }
  return std::nullopt;
}

bool Supervisor::HandOverPrimary(const ShardSlot& slot, FailoverMode mode) {
  auto view = AskPeersAbout(slot);
  if (!view || !view->me.IsPrimary() || !view->me.HasSlots()) return false;
  const auto replicas = ReplicaEndpoints(view->nodes, view->me.id, deployment_.plan.bind);
  // With an AOF the dead primary's files hold every acknowledged write: only a replica that has
  // finished a sync with it may take its place (failover.h). Without one, a restarted primary
  // comes back empty or with its last snapshot, so any replica's copy is worth as much.
  const bool files_hold_everything = deployment_.durability.persistence == Persistence::kAof;
  for (const auto& replica : replicas) {
    if (mode == FailoverMode::kTakeover && HeldByARestore(replica)) {
      log_->warn(
          "the replica at {} is not promoted: a placed restore holds it from failing over "
          "until it has resynced from its primary's new data",
          replica.ToString());
      continue;
    }
    if (mode == FailoverMode::kTakeover && files_hold_everything) {
      if (auto why = WhyNotPromotableAt(replica)) {
        log_->warn("the replica at {} is not promoted: {}", replica.ToString(), *why);
        continue;
      }
    }
    auto timeout = std::chrono::seconds(mode == FailoverMode::kTakeover ? 2 : 5);
    auto promoted = PromoteReplica(*access_.Current(), replica.host, replica.port, mode, timeout);
    if (promoted.ok()) {
      log_->info("replica at {} took over the slots of shard {} ({})", replica.ToString(),
                 slot.index, mode == FailoverMode::kTakeover ? "takeover" : "graceful failover");
      return true;
    }
    log_->warn("promoting the replica at {}: {}", replica.ToString(), promoted.error().message());
  }
  if (!replicas.empty() && mode == FailoverMode::kTakeover) {
    log_->warn(
        "shard {}: no replica took its slots; it keeps them and restarts with what its own "
        "files hold",
        slot.index);
  }
  return false;
}

void Supervisor::KillIfFailedWhileSilent(ShardSlot& slot, SteadyClock::time_point now,
                                         SteadyClock::duration silent) {
  // Never sooner than two pings' time: a shard merely between pings is not silent.
  const auto quiet = std::max<SteadyClock::duration>(
      kFailCheckAfter,
      2 * HealthPingInterval(slots_.size(), deployment_.supervision.health_timeout));
  if (silent < quiet || slot.hung_kill_sent || now < slot.next_fail_check) return;
  slot.next_fail_check = now + kHealthInterval;
  auto view = AskPeersAbout(slot);
  if (!view || !view->me.HasFlag("fail")) return;
  const bool owns_slots = view->me.IsPrimary() && view->me.HasSlots();
  if (!Replaceable(*view) || (owns_slots && !HasPromotableReplica(*view))) {
    // No replica takes its slots (none, or none that has finished a sync with it): resumed, it
    // keeps them and loses nothing; killed now, it would come back with its last snapshot or
    // empty. Only its hang grace (--hang-grace) ends it.
    if (!slot.unreplaceable_said) {
      log_->warn(
          "shard {} (pid {}) is silent and the cluster marked it failed, but no replica can take "
          "its slots (none, or none that has finished a sync with it): left running, since "
          "killing it would lose its keys",
          slot.index, slot.watcher.process().pid);
    }
    slot.unreplaceable_said = true;
    return;
  }
  // A hung process that resumes would first acknowledge the writes waiting in its sockets, then
  // learn it was replaced and drop them (docs/reliability.md): killed, it acknowledges nothing.
  log_->warn(
      "shard {} (pid {}) is silent and the cluster marked it failed: killing it now, so it "
      "cannot acknowledge writes it would lose when it resumes",
      slot.index, slot.watcher.process().pid);
  kill(slot.watcher.process().pid, SIGKILL);
  slot.hung_kill_sent = true;
}

bool Supervisor::Replaceable(const PeerView& view) {
  if (!view.me.IsPrimary() || !view.me.HasSlots()) return true;  // nothing of its own to lose
  return std::any_of(view.nodes.begin(), view.nodes.end(), [&](const common::NodeLine& node) {
    return node.master_id == view.me.id && !node.Failing();
  });
}

std::optional<std::string> Supervisor::WhyNotPromotableAt(const common::Endpoint& replica) const {
  auto connection = RedisConnection::Connect(*access_.Current(), replica.host, replica.port,
                                             std::chrono::milliseconds(300));
  auto info = connection.ok() ? connection->Run({"INFO", "replication"})
                              : Result<std::string>(connection.error());
  if (!info.ok()) return "it did not answer INFO replication: " + info.error().message();
  return WhyNotPromotable(*info);
}

bool Supervisor::HeldByARestore(const common::Endpoint& replica) const {
  // Only while the restore runs: a setting left by a killed restore, or set by hand, does not
  // keep a replica's copy from replacing a dead primary that would come back empty.
  if (DataLock::HolderOf(dir_, DataLock::Kind::kRestarts).find("shardctl restore") ==
      std::string::npos) {
    return false;
  }
  auto connection = RedisConnection::Connect(*access_.Current(), replica.host, replica.port,
                                             std::chrono::milliseconds(300));
  auto setting = connection.ok() ? connection->Run({"CONFIG", "GET", "cluster-replica-no-failover"})
                                 : Result<std::string>(connection.error());
  return setting.ok() && setting->ends_with("\nyes");  // "cluster-replica-no-failover\nyes"
}

bool Supervisor::HasPromotableReplica(const PeerView& view) const {
  const auto replicas = ReplicaEndpoints(view.nodes, view.me.id, deployment_.plan.bind);
  return std::any_of(replicas.begin(), replicas.end(), [&](const common::Endpoint& replica) {
    return !HeldByARestore(replica) && !WhyNotPromotableAt(replica).has_value();
  });
}

void Supervisor::DiscardShardData(int index) {
  const auto shard_dir = dir_.ShardDir(index);
  std::error_code ignored;
  std::filesystem::remove(shard_dir / "dump.rdb", ignored);
  std::filesystem::remove_all(shard_dir / "appendonlydir", ignored);
  log_->warn("shard {}: its snapshot and AOF were deleted as asked (--discard-data)", index);
}

void Supervisor::DiscardStaleSnapshot(int index, bool always) {
  if (deployment_.durability.persistence != Persistence::kNone) return;
  const auto snapshot = dir_.ShardDir(index) / "dump.rdb";
  std::error_code error;
  const auto written = std::filesystem::last_write_time(snapshot, error);
  if (error) return;  // none: the usual case
  // A restart still running carries the shard's keys in it (and may roll back with it).
  const auto marker = dir_.ShardRestartMarker(index);
  if (NamesARunningProcess(marker)) return;
  if (!always) {
    const auto started = std::filesystem::last_write_time(dir_.ShardPidFile(index), error);
    if (error || written >= started) return;
  }
  std::filesystem::remove(snapshot, error);
  if (error) {
    log_->error("shard {}: {} is stale but could not be deleted ({}): the shard loads it", index,
                snapshot.string(), error.message());
    return;
  }
  std::filesystem::remove(marker, error);
  log_->warn(
      "shard {}: deleted {}, a snapshot older than the shard's last writes (a restart's that the "
      "restart left behind, or a replica's full sync): without persistence a shard starts "
      "empty after a crash, and loading it would bring back old values and deleted keys",
      index, snapshot.string());
}

bool Supervisor::LoadPlacedSnapshot(int index) {
  const auto placed = dir_.ShardPlacedSnapshot(index);
  const auto shard_dir = dir_.ShardDir(index);
  std::error_code error;
  if (!std::filesystem::exists(placed, error)) {
    log_->error("shard {}: no {} to load; it starts with the data it had", index, placed.string());
    return false;
  }
  // An AOF would be loaded instead of the snapshot; the shard's old data must not come back.
  std::filesystem::remove_all(shard_dir / "appendonlydir", error);
  std::filesystem::rename(placed, shard_dir / "dump.rdb", error);
  if (error) {
    log_->error("shard {}: {} could not become its dump.rdb: {}", index, placed.string(),
                error.message());
    return false;
  }
  log_->info("shard {}: starts from the backup file restore placed ({})", index, placed.string());
  return true;
}

void Supervisor::OnRestartDue(ShardSlot& slot) {
  if (!shutting_down_ && !slot.watcher.running()) Respawn(slot);
}

bool Supervisor::HoldForDiskSpace(ShardSlot& slot, const std::string& how) {
  const auto shard_dir = dir_.ShardDir(slot.index);
  const auto available = AvailableBytes(shard_dir);
  if (!available || !IsDiskFull(*available)) return false;
  if (slot.state != "disk-full") {
    log_->error(
        "shard {} {}: its data directory {} is full ({} bytes free); not restarting it until "
        "space is freed (delete files there or grow the filesystem; it restarts by itself)",
        slot.index, how, shard_dir.string(), *available);
  }
  slot.state = "disk-full";
  return true;
}

void Supervisor::RetryDiskFull() {
  for (auto& owned : slots_) {
    ShardSlot& slot = *owned;
    if (slot.state != "disk-full" || slot.watcher.running() || shutting_down_) continue;
    const auto available = AvailableBytes(dir_.ShardDir(slot.index));
    if (!available || IsDiskFull(*available)) continue;
    log_->info("shard {}: {} bytes free again; restarting it", slot.index, *available);
    slot.watcher.policy().Reset();
    Respawn(slot);
  }
}

void Supervisor::Respawn(ShardSlot& slot) {
  const ShardPlan& shard = deployment_.plan.shards[slot.position];
  auto process = SpawnShard(deployment_, dir_, shard, /*fresh=*/false);
  if (!process.ok()) {
    if (HoldForDiskSpace(slot, "could not start (" + process.error().message() + ")")) return;
    log_->error("shard {}: {}", slot.index, process.error().message());
    slot.watcher.StartFailed(process.error().message());
    return;
  }
  slot.state = "starting";
  slot.hung_kill_sent = false;
  slot.unreplaceable_said = false;
  health_->MarkFresh(slot.position, SteadyClock::now());
  log_->info("shard {} started again as pid {} (restart #{})", slot.index, process->pid,
             slot.watcher.restarts() + 1);
  slot.watcher.Watch(*process, /*is_child=*/true, /*restarted=*/true);
}

void Supervisor::OnHealthTick() {
  auto now = SteadyClock::now();
  auto timeout = deployment_.supervision.health_timeout;
  for (auto& owned : slots_) {
    ShardSlot& slot = *owned;
    if (!slot.watcher.running()) continue;
    const pid_t pid = slot.watcher.process().pid;
    const SteadyClock::time_point started = slot.watcher.started();
    auto last = std::max(health_->LastAnswer(slot.position), started);
    auto silent = now - last;
    if (slot.restart_requested && now > slot.restart_kill_deadline && !slot.hung_kill_sent) {
      log_->warn("shard {} did not stop within {}: SIGKILL", slot.index, Ms(kStopGrace));
      kill(pid, SIGKILL);
      slot.hung_kill_sent = true;
    }
    KillIfFailedWhileSilent(slot, now, silent);
    if (silent < timeout) {
      if (health_->LastAnswer(slot.position) > started && slot.state != "ok") {
        if (slot.state == "unresponsive") log_->info("shard {} answers again", slot.index);
        slot.state = "ok";
      }
      continue;
    }
    if (slot.state != "unresponsive") {
      slot.state = "unresponsive";
      log_->warn("shard {} (pid {}) has not answered PING for {}", slot.index, pid, Ms(silent));
    }
    if (silent > timeout + deployment_.supervision.hang_grace && !slot.hung_kill_sent) {
      log_->error("shard {} (pid {}) unresponsive for {}: killing it to restart it", slot.index,
                  pid, Ms(silent));
      kill(pid, SIGKILL);
      slot.hung_kill_sent = true;
    }
  }
  if (++health_ticks_ % 40 == 0) {
    RotateShardLogs();
    RetryDiskFull();
    ContinueHeldSnapshots();
    ReleaseLeftExpiryHold();
  }
}

// A backup killed while it held snapshot children stopped (ops/snapshot_gate.h) leaves them so, and
// a primary with a stopped child cannot save again: once no backup runs, continue them (their
// primary then ends them, as nobody reads their snapshot).
void Supervisor::ContinueHeldSnapshots() {
  if (NamesARunningProcess(dir_.BackupPidFile())) return;
  std::vector<ProcessId> shards;
  for (const auto& slot : slots_) {
    if (slot->watcher.running()) shards.push_back(slot->watcher.process());
  }
  ContinueStoppedChildren(shards);
}

// A live import killed while the primaries held expiry for it (cluster/expiry_hold.h) left them
// expiring and evicting nothing: once its process is gone, they expire again. A node that does
// not answer now is asked again on a later tick (the record stays until every one took it).
void Supervisor::ReleaseLeftExpiryHold() {
  auto hold = ReadExpiryHold(dir_);
  if (!hold || IsRunning(hold->holder)) return;
  // Taken for the few ms this lasts: a live import starting then (to hold expiry anew) is refused
  // rather than have its new hold undone by this release; one running holds it, and this waits.
  auto lock = DataLock::Take(dir_, "supervisor (releasing a killed live import's expiry hold)");
  if (!lock.ok()) return;
  hold = ReadExpiryHold(dir_);  // another import may have held and died since the first look
  if (!hold || IsRunning(hold->holder)) return;
  // Its nodes (another host's too, in a deployment that spans hosts), and ours that run now (a
  // primary then may be a replica since): one that restarts comes back without import-mode.
  std::vector<common::Endpoint> nodes = hold->nodes;
  for (const auto& slot : slots_) {
    if (!slot->watcher.running()) continue;
    nodes.push_back({deployment_.plan.bind, deployment_.plan.shards[slot->position].port});
  }
  if (auto released =
          SetExpiryHeld(*access_.Current(), nodes, false, std::chrono::milliseconds(300));
      !released.ok()) {
    log_->warn("a live import stopped while the shards held expiry for it: {}",
               released.error().message());
    return;
  }
  RemoveExpiryHold(dir_);
  log_->info("a live import stopped while the shards held expiry for it: import-mode is no again");
}

// Redis opens its logfile for every line it writes, so renaming the file is a complete rotation.
void Supervisor::RotateShardLogs() {
  for (const auto& shard : deployment_.plan.shards) {
    auto log = dir_.ShardLog(shard.index);
    std::error_code error;
    if (std::filesystem::file_size(log, error) < kMaxShardLogBytes || error) continue;
    for (int i = kKeptShardLogs - 1; i >= 1; --i) {
      auto from = log.string() + "." + std::to_string(i);
      std::filesystem::rename(from, log.string() + "." + std::to_string(i + 1), error);
    }
    std::filesystem::rename(log, log.string() + ".1", error);
  }
}

void Supervisor::StopShards() {
  // Forgotten first: the stop below reaps our children, and their exits are not crashes.
  std::vector<ProcessId> running;
  for (auto& slot : slots_) {
    if (slot->watcher.running()) running.push_back(slot->watcher.process());
    slot->watcher.Forget();
    slot->watcher.CancelRestart();
  }
  if (running.empty()) return;
  log_->info("stopping {} shards", running.size());
  if (save_at_shutdown_) ArmSaveOnShutdown(*access_.Current(), deployment_);
  int killed = StopProcesses(running, kStopGrace);
  if (killed > 0) log_->warn("{} shards needed SIGKILL", killed);
  for (auto& slot : slots_) {
    slot->state = "stopped";
    std::error_code ignored;
    std::filesystem::remove(dir_.ShardPidFile(slot->index), ignored);
  }
}

void Supervisor::StopAll() {
  if (shutting_down_) return;
  shutting_down_ = true;
  if (proxy_) proxy_->Stop();  // clients stop before the shards do
  if (health_) health_->Stop();
  if (forks_) forks_->Stop();
  if (metrics_poller_) metrics_poller_->Stop();
  StopShards();
}

void Supervisor::BeginShutdown() {
  StopAll();
  if (closing_) return;
  closing_ = true;
  uv_walk(
      &loop_,
      [](uv_handle_t* handle, void*) {
        if (!uv_is_closing(handle))
          uv_close(handle, handle->data ? common::uv::DeleteOwnedHandle : nullptr);
      },
      nullptr);
}

Result<json> Supervisor::StartFresh() {
  auto progress = [&](const std::string& message) {
    log_->info("{}", message);
    events_({{"event", "progress"}, {"message", message}});
  };
  auto stop_check = [&]() -> common::Status {
    uv_run(&loop_, UV_RUN_NOWAIT);  // delivers SIGTERM/SIGINT that arrived during start-up
    if (stop_requested_) return Error("start-up interrupted by a stop request");
    return common::Ok();
  };
  auto report = StartDeployment(*access_.Current(), deployment_, dir_, progress, stop_check);
  if (!report.ok()) return report.error();
  for (auto& slot : slots_) {
    slot->watcher.Watch(report->shards[slot->position], /*is_child=*/true, /*restarted=*/false);
  }
  return json{{"event", "ready"},
              {"spawn_ms", report->spawn.count()},
              {"ping_ms", report->first_ping.count()},
              {"formation_ms", report->formation.count()},
              {"total_ms", report->total.count()},
              {"node_ids", report->node_ids},
              {"resumed", report->resumed},
              {"joined", !deployment_.plan.join.empty() && !report->resumed},
              {"joined_nodes", report->joined_nodes},
              {"replica_moves", report->replica_moves},
              {"adopted", 0}};
}

// Takes over shards a previous supervisor left running; starts the missing ones with their
// nodes.conf, so they rejoin the cluster as themselves.
Result<json> Supervisor::Adopt() {
  auto started = SteadyClock::now();
  int adopted = 0, restarted = 0;
  std::vector<ShardSlot*> missing;
  for (auto& slot : slots_) {
    auto process = ReadProcessId(dir_.ShardPidFile(slot->index));
    if (process && IsRunning(*process)) {
      slot->watcher.Watch(*process, /*is_child=*/false, /*restarted=*/false);
      ++adopted;
    } else {
      missing.push_back(slot.get());
    }
  }
  for (ShardSlot* slot : missing) {
    // Whether it stopped with a restart's snapshot beside it (kept) or crashed cannot be told
    // here, except for a snapshot its last process already loaded.
    DiscardStaleSnapshot(slot->index, /*always=*/false);
    auto process = SpawnShard(deployment_, dir_, deployment_.plan.shards[slot->position], false);
    if (!process.ok()) return process.error().Context("shard " + std::to_string(slot->index));
    slot->watcher.Watch(*process, /*is_child=*/true, /*restarted=*/false);
    ++restarted;
  }
  log_->info("adopted {} running shards, started {} missing ones", adopted, restarted);
  // Not fatal: the supervisor's job from here on is to heal whatever is still missing.
  auto healthy =
      WaitUntilHealthy(*access_.Current(), RunningNodesOf(deployment_.plan),
                       SteadyClock::now() + kAdoptHealthyWait, [] { return common::Ok(); });
  auto total = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - started);
  return json{
      {"event", "ready"},
      {"adopted", adopted},
      {"restarted", restarted},
      {"total_ms", total.count()},
      {"cluster_state", healthy.ok() ? "ok" : "not ok yet (" + healthy.error().message() + ")"}};
}

int Supervisor::Finish(int code) {
  uv_run(&loop_, UV_RUN_DEFAULT);
  const common::Status closed = common::uv::CloseLoop(&loop_);
  if (code == 0) {
    std::error_code ignored;
    std::filesystem::remove(dir_.SocketPath(), ignored);
    std::filesystem::remove(dir_.SupervisorPidFile(), ignored);
  }
  log_->info("supervisor exits{}",
             closed.ok() ? "" : " (with open libuv handles: " + closed.error().message() + ")");
  if (lock_fd_ >= 0) close(lock_fd_);
  return code;
}

void Supervisor::OpenLogAndLoop() {
  log_ = spdlog::rotating_logger_mt("supervisor-" + deployment_.plan.name,
                                    dir_.SupervisorLog().string(), 10 << 20, 3);
  log_->flush_on(spdlog::level::info);
  uv_loop_init(&loop_);
  loop_.data = this;
  for (const auto& shard : deployment_.plan.shards) {
    slots_.push_back(std::make_unique<ShardSlot>(*this, &loop_, shard.index));
    slots_.back()->position = static_cast<int>(slots_.size()) - 1;
  }
  InstallSignalsAndTimers();
}

void Supervisor::RestartChecks() {
  // What the checker being replaced last heard from each shard, by shard index: a shard that
  // runs on keeps it. Marked fresh from its process start instead, a shard older than the health
  // timeout plus the hang grace looked silent that long at the first tick after a scale (the
  // tick runs before the new checker's first PING is answered) and was killed, losing the keys
  // a primary without persistence held.
  std::map<int, SteadyClock::time_point> heard;
  std::map<int, SteadyClock::time_point> served;
  if (health_) {
    health_->Stop();
    for (auto& slot : slots_) {
      if (!slot->checked) continue;
      heard[slot->index] = health_->LastAnswer(slot->position);
      served[slot->index] = health_->LastServed(slot->position);
    }
  }
  if (forks_) forks_->Stop();
  std::vector<int> ports;
  for (const auto& shard : deployment_.plan.shards) ports.push_back(shard.port);
  for (auto& slot : slots_) {
    for (size_t i = 0; i < deployment_.plan.shards.size(); ++i) {
      if (deployment_.plan.shards[i].index == slot->index) slot->position = static_cast<int>(i);
    }
    slot->checked = true;
  }
  health_ = std::make_unique<HealthChecker>(
      access_, deployment_.plan.bind, ports,
      HealthPingInterval(ports.size(), deployment_.supervision.health_timeout), kPingTimeout);
  for (auto& slot : slots_) {
    auto before = heard.find(slot->index);
    health_->MarkFresh(slot->position, before != heard.end()
                                           ? std::max(before->second, slot->watcher.started())
                                           : slot->watcher.started());
    if (auto was = served.find(slot->index); was != served.end()) {
      health_->MarkServed(slot->position, was->second);
    }
  }
  health_->Start();
  if (deployment_.durability.persistence != Persistence::kNone) {
    forks_ = std::make_unique<ForkScheduler>(access_, deployment_.plan.bind, ports,
                                             deployment_.durability);
    forks_->Start();
  }
  RestartMetricsPoller();
}

ShardSlot* Supervisor::SlotOf(int index) {
  for (auto& slot : slots_) {
    if (slot->index == index) return slot.get();
  }
  return nullptr;
}

void Supervisor::RecordPid() {
  if (auto id = IdentifyProcess(getpid())) {
    if (auto written = WriteProcessId(dir_.SupervisorPidFile(), *id); !written.ok()) {
      log_->warn("{}", written.error().message());
    }
  }
}

common::Status Supervisor::StartProxyAndChecks(json& ready) {
  if (deployment_.proxy.enabled()) {
    proxy_ = std::make_unique<ProxyKeeper>(&loop_, deployment_, access_, dir_, log_);
    if (auto started = proxy_->Start(); !started.ok()) return started;
    ready["proxy_port"] = deployment_.proxy.port;
  }
  RestartChecks();
  uv_timer_start(
      &health_timer_,
      [](uv_timer_t* timer) { Of(reinterpret_cast<uv_handle_t*>(timer)).OnHealthTick(); },
      kHealthInterval.count(), kHealthInterval.count());
  return common::Ok();
}

int Supervisor::Run() {
  auto deployment = ReadDeployment(dir_);
  if (!deployment.ok()) {
    events_({{"event", "failed"}, {"error", deployment.error().message()}});
    return 1;
  }
  deployment_ = std::move(deployment).value();
  auto access = AccessFor(deployment_);
  if (!access.ok()) {
    events_({{"event", "failed"}, {"error", access.error().message()}});
    return 1;
  }
  access_.Replace(std::move(access).value());
  OpenLogAndLoop();
  bool adopting = AnyShardRunning(dir_, deployment_.plan);
  auto fail = [&](const Error& error) {
    log_->error("start-up failed: {}", error.message());
    events_({{"event", "failed"}, {"error", error.message()}, {"adopting", adopting}});
    if (adopting) {
      for (auto& slot : slots_) slot->watcher.Forget();  // not ours to stop
    }
    BeginShutdown();
    return Finish(1);
  };
  if (auto status = TakeLock(); !status.ok()) return fail(status.error());
  // Recorded as soon as the lock is ours, so `status` can name the supervisor during start-up.
  RecordPid();
  if (auto status = Listen(); !status.ok()) return fail(status.error());
  if (auto status = StartMetrics(); !status.ok()) return fail(status.error());
  log_->info("supervisor {} for {} shards of {} {} ({})", getpid(), slots_.size(),
             deployment_.engine.Name(), deployment_.engine.version,
             adopting ? "adopting running shards" : "fresh start");
  auto ready = adopting ? Adopt() : StartFresh();
  if (!ready.ok()) return fail(ready.error());
  if (auto started = StartProxyAndChecks(*ready); !started.ok()) return fail(started.error());
  (*ready)["supervisor_pid"] = getpid();
  log_->info("ready: {}", ready->dump());
  events_(*ready);
  if (stop_requested_) BeginShutdown();
  return Finish(0);
}

int RunSupervisor(const DeploymentDir& dir, const EventSink& events) {
  signal(SIGPIPE, SIG_IGN);
  // What the supervisor and the shards it starts create (logs, data files, the control socket)
  // is their owner's alone: configs and snapshots hold the password and the data.
  umask(077);
  Supervisor supervisor(dir, events);
  return supervisor.Run();
}

}  // namespace shardctl::launcher
