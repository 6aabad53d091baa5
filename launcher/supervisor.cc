// The supervisor's shard lifecycle: start or adopt, watch, restart with backoff, detect hangs,
// stop. The control socket is in supervisor_control.cc. See supervisor.h for the flow diagram.
#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/duration.h"
#include "launcher/redis_client.h"
#include "launcher/shards.h"
#include "launcher/supervisor_impl.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;

constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr auto kHealthInterval = std::chrono::milliseconds(250);
constexpr auto kPingTimeout = std::chrono::milliseconds(250);
constexpr auto kAdoptHealthyWait = std::chrono::seconds(15);
constexpr uint64_t kMaxShardLogBytes = 16 << 20;
constexpr int kKeptShardLogs = 3;

Supervisor& Of(uv_handle_t* handle) { return *static_cast<Supervisor*>(handle->loop->data); }

int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Reaps our exited child and says how it ended.
std::string ReapChild(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "exited (exit status lost)";
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with status " + std::to_string(WEXITSTATUS(status));
}

std::string Ms(SteadyClock::duration duration) {
  return common::FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(duration));
}

}  // namespace

void DeleteOwnedHandle(uv_handle_t* handle) { delete static_cast<OwnedHandle*>(handle->data); }

ExitWatch::~ExitWatch() {
  if (pidfd >= 0) close(pidfd);
}

Supervisor::Supervisor(const DeploymentDir& dir, EventSink events)
    : dir_(dir), events_(std::move(events)) {}

common::Status Supervisor::TakeLock() {
  lock_fd_ = open(dir_.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
  for (auto& slot : slots_) {
    slot->restart_timer = new RestartTimer();
    slot->restart_timer->slot = slot.get();
    uv_timer_init(&loop_, &slot->restart_timer->timer);
    slot->restart_timer->timer.data = slot->restart_timer;
  }
}

void Supervisor::RequestStop(int signal_number) {
  if (log_) log_->info("signal {} received: stopping the deployment", signal_number);
  stop_requested_ = true;
  if (health_) BeginShutdown();  // after start-up; during it, the stop check aborts start-up
}

// Watches the slot's process through a pidfd, which works for children and adopted processes
// alike (SIGCHLD only tells about children).
void Supervisor::Watch(ShardSlot& slot) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, slot.process.pid, 0));
  // Re-check identity after opening: the PID may have been recycled in between.
  if (pidfd < 0 || !IsRunning(slot.process)) {
    if (pidfd >= 0) close(pidfd);
    HandleExit(slot,
               slot.is_child ? ReapChild(slot.process.pid) : "exited before it could be watched");
    return;
  }
  auto* watch = new ExitWatch();
  watch->pidfd = pidfd;
  watch->slot = &slot;
  uv_poll_init(&loop_, &watch->poll, pidfd);
  watch->poll.data = watch;
  slot.watch = watch;
  uv_poll_start(&watch->poll, UV_READABLE, [](uv_poll_t* poll, int, int) {
    auto* fired = static_cast<ExitWatch*>(poll->data);
    Of(reinterpret_cast<uv_handle_t*>(poll)).OnProcessExit(*fired->slot);
  });
}

void Supervisor::OnProcessExit(ShardSlot& slot) {
  if (slot.watch) {
    uv_close(reinterpret_cast<uv_handle_t*>(&slot.watch->poll), DeleteOwnedHandle);
    slot.watch = nullptr;
  }
  if (slot.process.pid == 0) return;  // already stopped and reaped by StopShards
  HandleExit(slot, slot.is_child ? ReapChild(slot.process.pid)
                                 : "exited (adopted process: exit status unknown)");
}

void Supervisor::HandleExit(ShardSlot& slot, const std::string& how) {
  auto uptime = SteadyClock::now() - slot.started;
  slot.process = {};
  slot.last_exit = how;
  slot.last_exit_unix_ms = UnixMs();
  if (shutting_down_) {
    slot.state = "stopped";
    return;
  }
  std::chrono::milliseconds delay{0};
  if (slot.restart_requested) {
    slot.restart_requested = false;
    slot.policy.Reset();
    log_->info("shard {} {}; restarting it as requested", slot.index, how);
  } else {
    // Before the dead primary comes back (empty, or with an older snapshot), its replica takes
    // its place; the restarted process then rejoins as a replica.
    HandOverPrimary(slot, FailoverMode::kTakeover);
    delay = slot.policy.OnExit(std::chrono::duration_cast<std::chrono::milliseconds>(uptime));
    log_->warn("shard {} {} after {}; restarting in {}{}", slot.index, how, Ms(uptime), Ms(delay),
               slot.policy.InCrashLoop() ? " (crash loop)" : "");
  }
  slot.state = "restarting";
  uv_timer_start(
      &slot.restart_timer->timer,
      [](uv_timer_t* timer) {
        auto* fired = static_cast<RestartTimer*>(timer->data);
        Of(reinterpret_cast<uv_handle_t*>(timer)).OnRestartTimer(*fired->slot);
      },
      static_cast<uint64_t>(delay.count()), 0);
}

bool Supervisor::HandOverPrimary(const ShardSlot& slot, FailoverMode mode) {
  auto conf = ReadWholeFile(dir_.ShardDir(slot.index) / "nodes.conf");
  auto id = conf.ok() ? MyselfId(*conf) : std::nullopt;
  if (!id) return false;
  const std::string& host = deployment_.plan.bind;
  for (const auto& other : slots_) {  // any live peer knows who replicates whom
    if (other.get() == &slot || other->process.pid == 0) continue;
    int port = deployment_.plan.shards[other->index].port;
    auto connection = RedisConnection::Connect(host, port, std::chrono::milliseconds(300));
    auto listing = connection.ok() ? connection->Run({"CLUSTER", "NODES"})
                                   : Result<std::string>(connection.error());
    if (!listing.ok()) continue;
    auto nodes = ParseClusterNodes(*listing);
    auto me =
        std::find_if(nodes.begin(), nodes.end(), [&](const NodeLine& n) { return n.id == *id; });
    if (me == nodes.end() || !me->IsPrimary() || !me->has_slots) return false;
    for (int replica : ReplicaPorts(nodes, *id)) {
      auto timeout = std::chrono::seconds(mode == FailoverMode::kTakeover ? 2 : 5);
      auto promoted = PromoteReplica(host, replica, mode, timeout);
      if (promoted.ok()) {
        log_->info("replica on port {} took over the slots of shard {} ({})", replica, slot.index,
                   mode == FailoverMode::kTakeover ? "takeover" : "graceful failover");
        return true;
      }
      log_->warn("promoting the replica on port {}: {}", replica, promoted.error().message());
    }
    return false;
  }
  return false;
}

void Supervisor::OnRestartTimer(ShardSlot& slot) {
  if (!shutting_down_ && slot.process.pid == 0) Respawn(slot);
}

void Supervisor::Respawn(ShardSlot& slot) {
  const ShardPlan& shard = deployment_.plan.shards[slot.index];
  slot.started = SteadyClock::now();
  auto process = SpawnShard(deployment_, dir_, shard, /*fresh=*/false);
  if (!process.ok()) {
    log_->error("shard {}: {}", slot.index, process.error().message());
    HandleExit(slot, "could not start: " + process.error().message());
    return;
  }
  slot.process = *process;
  slot.is_child = true;
  slot.state = "starting";
  slot.hung_kill_sent = false;
  ++slot.restarts;
  health_->MarkFresh(slot.index, slot.started);
  log_->info("shard {} started again as pid {} (restart #{})", slot.index, slot.process.pid,
             slot.restarts);
  Watch(slot);
}

void Supervisor::OnHealthTick() {
  auto now = SteadyClock::now();
  auto timeout = deployment_.supervision.health_timeout;
  for (auto& owned : slots_) {
    ShardSlot& slot = *owned;
    if (slot.process.pid == 0) continue;
    auto last = std::max(health_->LastAnswer(slot.index), slot.started);
    auto silent = now - last;
    if (slot.restart_requested && now > slot.restart_kill_deadline && !slot.hung_kill_sent) {
      log_->warn("shard {} did not stop within {}: SIGKILL", slot.index, Ms(kStopGrace));
      kill(slot.process.pid, SIGKILL);
      slot.hung_kill_sent = true;
    }
    if (silent < timeout) {
      if (health_->LastAnswer(slot.index) > slot.started && slot.state != "ok") {
        if (slot.state == "unresponsive") log_->info("shard {} answers again", slot.index);
        slot.state = "ok";
      }
      continue;
    }
    if (slot.state != "unresponsive") {
      slot.state = "unresponsive";
      log_->warn("shard {} (pid {}) has not answered PING for {}", slot.index, slot.process.pid,
                 Ms(silent));
    }
    if (silent > timeout + deployment_.supervision.hang_grace && !slot.hung_kill_sent) {
      log_->error("shard {} (pid {}) unresponsive for {}: killing it to restart it", slot.index,
                  slot.process.pid, Ms(silent));
      kill(slot.process.pid, SIGKILL);
      slot.hung_kill_sent = true;
    }
  }
  if (++health_ticks_ % 40 == 0) RotateShardLogs();
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
  std::vector<ProcessId> running;
  for (auto& slot : slots_) {
    if (slot->process.pid != 0) running.push_back(slot->process);
  }
  if (running.empty()) return;
  log_->info("stopping {} shards", running.size());
  ArmSaveOnShutdown(deployment_);
  int killed = StopProcesses(running, kStopGrace);
  if (killed > 0) log_->warn("{} shards needed SIGKILL", killed);
  for (auto& slot : slots_) {
    slot->process = {};
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
  StopShards();
}

void Supervisor::BeginShutdown() {
  StopAll();
  if (closing_) return;
  closing_ = true;
  uv_walk(
      &loop_,
      [](uv_handle_t* handle, void*) {
        if (!uv_is_closing(handle)) uv_close(handle, handle->data ? DeleteOwnedHandle : nullptr);
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
  auto report = StartDeployment(deployment_, dir_, progress, stop_check);
  if (!report.ok()) return report.error();
  for (auto& slot : slots_) {
    slot->process = report->shards[slot->index];
    slot->is_child = true;
    slot->started = SteadyClock::now();
  }
  return json{{"event", "ready"},
              {"spawn_ms", report->spawn.count()},
              {"ping_ms", report->first_ping.count()},
              {"formation_ms", report->formation.count()},
              {"total_ms", report->total.count()},
              {"node_ids", report->node_ids},
              {"adopted", 0}};
}

// Takes over shards a previous supervisor left running; starts the missing ones with their
// nodes.conf, so they rejoin the cluster as themselves.
Result<json> Supervisor::Adopt() {
  auto started = SteadyClock::now();
  int adopted = 0, restarted = 0;
  for (auto& slot : slots_) {
    auto process = ReadProcessId(dir_.ShardPidFile(slot->index));
    slot->started = started;
    if (process && IsRunning(*process)) {
      slot->process = *process;
      slot->is_child = false;
      ++adopted;
    }
  }
  for (auto& slot : slots_) {
    if (slot->process.pid != 0) continue;
    auto process = SpawnShard(deployment_, dir_, deployment_.plan.shards[slot->index], false);
    if (!process.ok()) return process.error().Context("shard " + std::to_string(slot->index));
    slot->process = *process;
    slot->is_child = true;
    ++restarted;
  }
  log_->info("adopted {} running shards, started {} missing ones", adopted, restarted);
  // Not fatal: the supervisor's job from here on is to heal whatever is still missing.
  auto healthy =
      WaitUntilHealthy(RunningNodesOf(deployment_.plan), SteadyClock::now() + kAdoptHealthyWait,
                       [] { return common::Ok(); });
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
  int leftover = uv_loop_close(&loop_);
  if (code == 0) {
    std::error_code ignored;
    std::filesystem::remove(dir_.SocketPath(), ignored);
    std::filesystem::remove(dir_.SupervisorPidFile(), ignored);
  }
  log_->info("supervisor exits{}", leftover ? " (with open libuv handles)" : "");
  if (lock_fd_ >= 0) close(lock_fd_);
  return code;
}

int Supervisor::Run() {
  auto deployment = ReadDeployment(dir_);
  if (!deployment.ok()) {
    events_({{"event", "failed"}, {"error", deployment.error().message()}});
    return 1;
  }
  deployment_ = std::move(deployment).value();
  log_ = spdlog::rotating_logger_mt("supervisor-" + deployment_.plan.name,
                                    dir_.SupervisorLog().string(), 10 << 20, 3);
  log_->flush_on(spdlog::level::info);
  for (const auto& shard : deployment_.plan.shards) {
    slots_.push_back(std::make_unique<ShardSlot>());
    slots_.back()->index = shard.index;
  }
  uv_loop_init(&loop_);
  loop_.data = this;
  InstallSignalsAndTimers();
  bool adopting = AnyShardRunning(dir_, deployment_.plan);
  auto fail = [&](const Error& error) {
    log_->error("start-up failed: {}", error.message());
    events_({{"event", "failed"}, {"error", error.message()}, {"adopting", adopting}});
    if (adopting) {
      for (auto& slot : slots_) slot->process = {};  // not ours to stop
    }
    BeginShutdown();
    return Finish(1);
  };
  if (auto status = TakeLock(); !status.ok()) return fail(status.error());
  // Recorded as soon as the lock is ours, so `status` can name the supervisor during start-up.
  if (auto id = IdentifyProcess(getpid())) {
    if (auto written = WriteProcessId(dir_.SupervisorPidFile(), *id); !written.ok()) {
      log_->warn("{}", written.error().message());
    }
  }
  if (auto status = Listen(); !status.ok()) return fail(status.error());
  log_->info("supervisor {} for {} shards of {} {} ({})", getpid(), slots_.size(),
             deployment_.engine.Name(), deployment_.engine.version,
             adopting ? "adopting running shards" : "fresh start");
  auto ready = adopting ? Adopt() : StartFresh();
  if (!ready.ok()) return fail(ready.error());
  if (deployment_.proxy.enabled()) {
    proxy_ = std::make_unique<ProxyKeeper>(&loop_, deployment_, dir_, log_);
    if (auto started = proxy_->Start(); !started.ok()) return fail(started.error());
    (*ready)["proxy_port"] = deployment_.proxy.port;
  }
  std::vector<int> ports;
  for (const auto& shard : deployment_.plan.shards) ports.push_back(shard.port);
  health_ =
      std::make_unique<HealthChecker>(deployment_.plan.bind, ports, kHealthInterval, kPingTimeout);
  for (auto& slot : slots_) {
    health_->MarkFresh(slot->index, slot->started);
    if (slot->process.pid != 0) Watch(*slot);
  }
  health_->Start();
  if (deployment_.durability.persistence != Persistence::kNone) {
    forks_ = std::make_unique<ForkScheduler>(deployment_.plan.bind, ports, deployment_.durability);
    forks_->Start();
  }
  uv_timer_start(
      &health_timer_,
      [](uv_timer_t* timer) { Of(reinterpret_cast<uv_handle_t*>(timer)).OnHealthTick(); },
      kHealthInterval.count(), kHealthInterval.count());
  (*ready)["supervisor_pid"] = getpid();
  log_->info("ready: {}", ready->dump());
  events_(*ready);
  if (stop_requested_) BeginShutdown();
  return Finish(0);
}

int RunSupervisor(const DeploymentDir& dir, const EventSink& events) {
  signal(SIGPIPE, SIG_IGN);
  Supervisor supervisor(dir, events);
  return supervisor.Run();
}

bool AnyShardRunning(const DeploymentDir& dir, const Plan& plan) {
  for (const auto& shard : plan.shards) {
    auto process = ReadProcessId(dir.ShardPidFile(shard.index));
    if (process && IsRunning(*process)) return true;
  }
  return false;
}

}  // namespace shardctl::launcher
