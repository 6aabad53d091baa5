#include "launcher/supervisor/proxy_keeper.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "common/endpoint.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {

using common::Error;

namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(10);
constexpr auto kStopGrace = std::chrono::seconds(5);

}  // namespace

std::string ProxyAuthText(const AuthConfig& auth) {
  // Clients log in with the shards' password, and the proxy logs in to the shards with it.
  return "# written by shardctl up --password-file\nrequirepass " + auth.password +
         "\nbackend-password " + auth.password + "\n";
}

std::vector<std::string> ProxyArgv(const Deployment& deployment,
                                   const std::filesystem::path& auth_file) {
  const Plan& plan = deployment.plan;
  std::string seeds;
  for (const auto& shard : plan.shards) {
    seeds += (seeds.empty() ? "" : ",") + common::FormatEndpoint(plan.bind, shard.port);
  }
  std::vector<std::string> argv = {deployment.proxy.binary, "--cluster", seeds, "--listen",
                                   common::FormatEndpoint(plan.bind, deployment.proxy.port)};
  if (deployment.proxy.threads > 0) {
    argv.insert(argv.end(), {"--threads", std::to_string(deployment.proxy.threads)});
  }
  if (deployment.proxy.read_from != "primary") {
    argv.insert(argv.end(), {"--read-from", deployment.proxy.read_from});
  }
  if (deployment.proxy.metrics_port != 0) {
    argv.insert(argv.end(), {"--metrics-port", std::to_string(deployment.proxy.metrics_port),
                             "--metrics-bind", deployment.metrics.bind});
  }
  if (deployment.auth.password_required) argv.insert(argv.end(), {"--auth-file", auth_file});
  if (deployment.tls.enabled()) {
    // The shards' certificate serves the proxy's clients too, with the same client policy.
    argv.insert(argv.end(),
                {"--tls-cert", deployment.tls.cert, "--tls-key", deployment.tls.key, "--tls-ca",
                 deployment.tls.ca, "--tls-auth-clients", deployment.tls.auth_clients});
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

ProxyKeeper::ProxyKeeper(uv_loop_t* loop, const Deployment& deployment, const SharedAccess& access,
                         const DeploymentDir& dir, std::shared_ptr<spdlog::logger> log)
    : deployment_(deployment),
      access_(access),
      dir_(dir),
      log_(std::move(log)),
      watcher_(
          loop, [this](const ProcessWatcher::Exit& exit) { OnExit(exit); },
          [this] { OnRestartDue(); }) {}

common::Result<ProcessId> ProxyKeeper::Spawn() {
  SpawnOptions options;
  if (deployment_.auth.password_required) {
    auto written = WriteFileAtomically(dir_.ProxyAuthFile(), ProxyAuthText(deployment_.auth));
    if (!written.ok()) return written.error().Context("shardproxy --auth-file");
  }
  options.argv = ProxyArgv(deployment_, dir_.ProxyAuthFile());
  options.output = dir_.ProxyLog();
  auto process = SpawnPinned(options);
  if (!process.ok()) return process.error().Context("shardproxy");
  if (auto written = WriteProcessId(dir_.ProxyPidFile(), *process); !written.ok()) {
    log_->warn("{}", written.error().message());
  }
  return process;
}

common::Status ProxyKeeper::Start() {
  auto recorded = ReadProcessId(dir_.ProxyPidFile());
  if (recorded && IsRunning(*recorded)) {
    state_ = "running";
    log_->info("adopted shardproxy pid {} on port {}", recorded->pid, deployment_.proxy.port);
    watcher_.Watch(*recorded, /*is_child=*/false, /*restarted=*/false);
    return common::Ok();
  }
  auto process = Spawn();
  if (!process.ok()) return process.error();
  const auto deadline = std::chrono::steady_clock::now() + kReadyTimeout;
  const std::string& host = deployment_.plan.bind;
  while (true) {
    auto connection = RedisConnection::Connect(*access_.Current(), host, deployment_.proxy.port,
                                               std::chrono::milliseconds(200));
    if (connection.ok() && connection->Run({"PING"}).ok()) break;
    if (auto ended = ReapIfExited(process->pid); ended) {
      return Error("shardproxy " + *ended + " at start: " + TailOfFile(dir_.ProxyLog(), 3));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      StopProcesses({*process}, kStopGrace);
      return Error("shardproxy did not answer PING on port " +
                   std::to_string(deployment_.proxy.port) +
                   " within 10s: " + TailOfFile(dir_.ProxyLog(), 3));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  state_ = "running";
  log_->info("shardproxy pid {} serves port {}", process->pid, deployment_.proxy.port);
  watcher_.Watch(*process, /*is_child=*/true, /*restarted=*/false);
  return common::Ok();
}

void ProxyKeeper::OnExit(const ProcessWatcher::Exit& exit) {
  if (stopped_) return;
  const auto delay = watcher_.policy().OnExit(exit.uptime);
  state_ = "restarting";
  log_->warn("shardproxy {}; restarting it in {} ms{}", exit.how, delay.count(),
             watcher_.policy().InCrashLoop() ? " (crash loop: see proxy.log)" : "");
  watcher_.RestartIn(delay);
}

void ProxyKeeper::OnRestartDue() {
  if (stopped_ || watcher_.running()) return;
  auto process = Spawn();
  if (!process.ok()) {
    log_->error("{}", process.error().message());
    watcher_.StartFailed(process.error().message());  // backs off like a quick exit
    return;
  }
  state_ = "running";
  log_->info("shardproxy started again as pid {} (restart #{})", process->pid,
             watcher_.restarts() + 1);
  watcher_.Watch(*process, /*is_child=*/true, /*restarted=*/true);
}

void ProxyKeeper::Stop() {
  if (stopped_) return;
  stopped_ = true;
  watcher_.CancelRestart();
  if (watcher_.running()) {
    const ProcessId process = watcher_.process();
    watcher_.Forget();  // our own stop, not a crash: no restart
    if (StopProcesses({process}, kStopGrace) > 0) log_->warn("shardproxy needed SIGKILL");
  }
  state_ = "stopped";
  std::error_code ignored;
  std::filesystem::remove(dir_.ProxyPidFile(), ignored);
}

nlohmann::json ProxyKeeper::Status() const {
  const bool looping = watcher_.CrashLooping(std::chrono::steady_clock::now());
  const bool running = watcher_.running();
  nlohmann::json status = {
      {"port", deployment_.proxy.port},
      {"pid", running ? nlohmann::json(watcher_.process().pid) : nlohmann::json(nullptr)},
      {"state", looping ? "crashloop" : state_},
      {"restarts", watcher_.restarts()},
      {"adopted", running && !watcher_.is_child()},
      {"last_exit", watcher_.last_exit()}};
  if (looping) status["log_tail"] = TailOfFile(dir_.ProxyLog(), 5);
  return status;
}

}  // namespace shardctl::launcher
