#include "launcher/proxy_keeper.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "launcher/redis_client.h"
#include "launcher/shards.h"
#include "launcher/supervisor_impl.h"

namespace shardctl::launcher {

using common::Error;

struct ProxyExitWatch : OwnedHandle {
  ~ProxyExitWatch() override {
    if (pidfd >= 0) close(pidfd);
  }
  uv_poll_t poll;
  int pidfd = -1;
  ProxyKeeper* keeper = nullptr;
};

struct ProxyRestartTimer : OwnedHandle {
  uv_timer_t timer;
  ProxyKeeper* keeper = nullptr;
};

namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(10);
constexpr auto kStopGrace = std::chrono::seconds(5);

std::string Endpoint(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

}  // namespace

std::vector<std::string> ProxyArgv(const Deployment& deployment) {
  const Plan& plan = deployment.plan;
  std::string seeds;
  for (const auto& shard : plan.shards) {
    seeds += (seeds.empty() ? "" : ",") + Endpoint(plan.bind, shard.port);
  }
  std::vector<std::string> argv = {deployment.proxy.binary, "--cluster", seeds, "--listen",
                                   Endpoint(plan.bind, deployment.proxy.port)};
  if (deployment.proxy.threads > 0) {
    argv.insert(argv.end(), {"--threads", std::to_string(deployment.proxy.threads)});
  }
  if (deployment.proxy.read_from != "primary") {
    argv.insert(argv.end(), {"--read-from", deployment.proxy.read_from});
  }
  return argv;
}

common::Result<std::string> FindProxyBinary() {
  if (const char* configured = std::getenv("SHARDCTL_PROXY_BINARY"); configured && *configured) {
    auto found = FindExecutable(configured);
    if (!found.ok()) return found.error().Context("SHARDCTL_PROXY_BINARY");
    return found->string();
  }
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    auto sibling = self.parent_path() / "shardproxy";
    if (access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  auto found = FindExecutable("shardproxy");
  if (!found.ok()) {
    return Error(
        "--proxy-port: shardproxy is neither next to shardctl nor on PATH (build it with "
        "scripts/quickstart, or set SHARDCTL_PROXY_BINARY)");
  }
  return found->string();
}

ProxyKeeper::ProxyKeeper(uv_loop_t* loop, const Deployment& deployment, const DeploymentDir& dir,
                         std::shared_ptr<spdlog::logger> log)
    : loop_(loop), deployment_(deployment), dir_(dir), log_(std::move(log)) {}

common::Result<ProcessId> ProxyKeeper::Spawn() {
  SpawnOptions options;
  options.argv = ProxyArgv(deployment_);
  options.output = dir_.ProxyLog();
  auto process = SpawnPinned(options);
  if (!process.ok()) return process.error().Context("shardproxy");
  if (auto written = WriteProcessId(dir_.ProxyPidFile(), *process); !written.ok()) {
    log_->warn("{}", written.error().message());
  }
  return process;
}

common::Status ProxyKeeper::Start() {
  restart_timer_ = new ProxyRestartTimer();
  restart_timer_->keeper = this;
  uv_timer_init(loop_, &restart_timer_->timer);
  restart_timer_->timer.data = restart_timer_;
  started_ = std::chrono::steady_clock::now();
  auto recorded = ReadProcessId(dir_.ProxyPidFile());
  if (recorded && IsRunning(*recorded)) {
    process_ = *recorded;
    is_child_ = false;
    state_ = "running";
    log_->info("adopted shardproxy pid {} on port {}", process_.pid, deployment_.proxy.port);
    Watch();
    return common::Ok();
  }
  auto process = Spawn();
  if (!process.ok()) return process.error();
  process_ = *process;
  is_child_ = true;
  const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
  const std::string& host = deployment_.plan.bind;
  while (true) {
    auto connection =
        RedisConnection::Connect(host, deployment_.proxy.port, std::chrono::milliseconds(200));
    if (connection.ok() && connection->Run({"PING"}).ok()) break;
    if (auto ended = ReapIfExited(process_.pid); ended) {
      process_ = {};
      return Error("shardproxy " + *ended + " at start: " + TailOfFile(dir_.ProxyLog(), 3));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      Stop();
      return Error("shardproxy did not answer PING on port " +
                   std::to_string(deployment_.proxy.port) +
                   " within 10s: " + TailOfFile(dir_.ProxyLog(), 3));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  state_ = "running";
  log_->info("shardproxy pid {} serves port {}", process_.pid, deployment_.proxy.port);
  Watch();
  return common::Ok();
}

void ProxyKeeper::Watch() {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, process_.pid, 0));
  if (pidfd < 0 || !IsRunning(process_)) {
    if (pidfd >= 0) close(pidfd);
    OnExit();
    return;
  }
  watch_ = new ProxyExitWatch();
  watch_->pidfd = pidfd;
  watch_->keeper = this;
  uv_poll_init(loop_, &watch_->poll, pidfd);
  watch_->poll.data = watch_;
  uv_poll_start(&watch_->poll, UV_READABLE, [](uv_poll_t* poll, int, int) {
    static_cast<ProxyExitWatch*>(poll->data)->keeper->OnExit();
  });
}

std::string ProxyKeeper::Reap() {
  if (!is_child_) return "exited (adopted process: exit status unknown)";
  int status = 0;
  if (waitpid(process_.pid, &status, 0) != process_.pid) return "exited (exit status lost)";
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exited with status " + std::to_string(WEXITSTATUS(status));
}

void ProxyKeeper::OnExit() {
  if (watch_) {
    auto* handle = reinterpret_cast<uv_handle_t*>(&watch_->poll);
    if (!uv_is_closing(handle)) uv_close(handle, DeleteOwnedHandle);
    watch_ = nullptr;
  }
  if (stopped_ || process_.pid == 0) return;
  const auto uptime = std::chrono::steady_clock::now() - started_;
  last_exit_ = Reap();
  process_ = {};
  const auto delay = policy_.OnExit(std::chrono::duration_cast<std::chrono::milliseconds>(uptime));
  state_ = "restarting";
  log_->warn("shardproxy {}; restarting it in {} ms{}", last_exit_, delay.count(),
             policy_.InCrashLoop() ? " (crash loop: see proxy.log)" : "");
  uv_timer_start(
      &restart_timer_->timer,
      [](uv_timer_t* timer) {
        static_cast<ProxyRestartTimer*>(timer->data)->keeper->OnRestartTimer();
      },
      static_cast<uint64_t>(delay.count()), 0);
}

void ProxyKeeper::OnRestartTimer() {
  if (stopped_ || process_.pid != 0) return;
  started_ = std::chrono::steady_clock::now();
  auto process = Spawn();
  if (!process.ok()) {
    log_->error("{}", process.error().message());
    process_ = {};
    state_ = "restarting";
    uv_timer_start(
        &restart_timer_->timer,
        [](uv_timer_t* timer) {
          static_cast<ProxyRestartTimer*>(timer->data)->keeper->OnRestartTimer();
        },
        static_cast<uint64_t>(policy_.OnExit(std::chrono::milliseconds(0)).count()), 0);
    return;
  }
  process_ = *process;
  is_child_ = true;
  ++restarts_;
  state_ = "running";
  log_->info("shardproxy started again as pid {} (restart #{})", process_.pid, restarts_);
  Watch();
}

void ProxyKeeper::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (restart_timer_) uv_timer_stop(&restart_timer_->timer);
  if (process_.pid != 0) {
    if (StopProcesses({process_}, kStopGrace) > 0) log_->warn("shardproxy needed SIGKILL");
    process_ = {};
  }
  state_ = "stopped";
  std::error_code ignored;
  std::filesystem::remove(dir_.ProxyPidFile(), ignored);
}

nlohmann::json ProxyKeeper::Status() const {
  const bool looping = policy_.InCrashLoop() && process_.pid == 0;
  nlohmann::json status = {
      {"port", deployment_.proxy.port},
      {"pid", process_.pid ? nlohmann::json(process_.pid) : nlohmann::json(nullptr)},
      {"state", looping ? "crashloop" : state_},
      {"restarts", restarts_},
      {"adopted", process_.pid != 0 && !is_child_},
      {"last_exit", last_exit_}};
  if (looping) status["log_tail"] = TailOfFile(dir_.ProxyLog(), 5);
  return status;
}

}  // namespace shardctl::launcher
