#include "launcher/ops/up_steps.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "launcher/engine/engine.h"
#include "launcher/os/ports.h"
#include "launcher/os/process.h"
#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/proxy_keeper.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kUpLockWait = std::chrono::minutes(2);

volatile sig_atomic_t g_supervisor_pid = 0;

// Ctrl-C on `up` must not leave a half-started deployment: pass it on to the supervisor, which
// stops whatever it started and reports "failed".
volatile sig_atomic_t g_stop_forwarded = 0;

void ForwardStop(int) {
  g_stop_forwarded = 1;
  if (g_supervisor_pid > 0) kill(g_supervisor_pid, SIGTERM);
}

// Reads the supervisor's events until it reports ready/failed or closes the pipe; `waiting` is
// called every 200 ms while no event comes.
json ReadStartEvents(int read_fd, const Progress& progress, const std::function<void()>& waiting) {
  json last = {{"event", "failed"}, {"error", "the supervisor exited during start-up"}};
  std::string buffer;
  char chunk[4096];
  for (;;) {
    size_t newline;
    while ((newline = buffer.find('\n')) != std::string::npos) {
      json event = json::parse(buffer.substr(0, newline), nullptr, false);
      buffer.erase(0, newline + 1);
      if (event.is_discarded()) continue;
      if (event.value("event", "") != "progress") return event;
      progress(event.value("message", ""));
    }
    pollfd readable{.fd = read_fd, .events = POLLIN, .revents = 0};
    int ready = poll(&readable, 1, 200);
    if (ready == 0 || (ready < 0 && errno == EINTR)) {
      if (waiting) waiting();
      continue;
    }
    ssize_t n = ready > 0 ? read(read_fd, chunk, sizeof chunk) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return last;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

// An error naming `flag` when a shard's client or bus port is `port`.
common::Status ShardPortClash(const Plan& plan, const std::string& flag, int port) {
  for (const auto& shard : plan.shards) {
    if (shard.port == port || shard.bus_port == port) {
      return Error(flag + " " + std::to_string(port) + ": shard " + std::to_string(shard.index) +
                   " uses it (pick a port outside " + std::to_string(plan.shards.front().port) +
                   "-" + std::to_string(plan.shards.back().port) + " and their bus ports)");
    }
  }
  return common::Ok();
}

// An error naming `flag` when `port` (0: none) cannot be bound on `address`.
common::Status CheckPortFree(const std::string& address, int port, const std::string& flag) {
  if (port == 0 || TakenPorts(address, {port}).empty()) return common::Ok();
  return Error(flag + " " + std::to_string(port) + " is in use on " + address + " (pick another " +
               flag + " or stop what listens there)");
}

}  // namespace

// --tls-also-plain's ports against the other ports `up` opens: a shard would take the port first
// and the proxy or /metrics would never bind.
common::Status PlainPortClash(const Deployment& deployment) {
  if (!deployment.tls.also_plain()) return common::Ok();
  const int first = deployment.tls.plain_base_port;
  const int last = deployment.tls.PlainPort(static_cast<int>(deployment.plan.shards.size()) - 1);
  const std::pair<const char*, int> others[] = {
      {"--proxy-port", deployment.proxy.port},
      {"--metrics-port", deployment.metrics.port},
      {"--proxy-metrics-port", deployment.proxy.metrics_port}};
  for (const auto& [flag, port] : others) {
    if (port != 0 && port >= first && port <= last) {
      return Error(std::string(flag) + " " + std::to_string(port) + ": shard " +
                   std::to_string(port - first) + " serves plain RESP there (--tls-also-plain " +
                   "uses " + std::to_string(first) + "-" + std::to_string(last) +
                   "; pick another port or --plain-base-port)");
    }
  }
  return common::Ok();
}

common::Result<ProxyConfig> ResolveProxy(const Spec& spec, const Plan& plan) {
  ProxyConfig proxy;
  if (!spec.proxy_port) {
    if (spec.proxy_threads) {
      return Error("--proxy-threads: needs --proxy-port (the port clients connect to)");
    }
    if (spec.proxy_read_from) {
      return Error("--proxy-read-from: needs --proxy-port (the port clients connect to)");
    }
    if (spec.proxy_metrics_port) {
      return Error("--proxy-metrics-port: needs --proxy-port (the proxy whose metrics to serve)");
    }
    return proxy;
  }
  proxy.port = *spec.proxy_port;
  proxy.threads = spec.proxy_threads.value_or(0);
  proxy.read_from = spec.proxy_read_from.value_or("primary");
  proxy.metrics_port = spec.proxy_metrics_port.value_or(0);
  if (auto clash = ShardPortClash(plan, "--proxy-port", proxy.port); !clash.ok()) {
    return clash.error();
  }
  if (proxy.metrics_port != 0) {
    if (auto clash = ShardPortClash(plan, "--proxy-metrics-port", proxy.metrics_port);
        !clash.ok()) {
      return clash.error();
    }
    if (proxy.metrics_port == proxy.port) {
      return Error("--proxy-metrics-port " + std::to_string(proxy.metrics_port) +
                   ": --proxy-port uses it (pick another port for one of them)");
    }
  }
  auto binary = FindProxyBinary();
  if (!binary.ok()) return binary.error();
  proxy.binary = *binary;
  return proxy;
}

common::Result<MetricsConfig> ResolveMetrics(const Spec& spec, const Plan& plan,
                                             const ProxyConfig& proxy) {
  MetricsConfig metrics{.port = spec.metrics_port.value_or(0), .bind = spec.metrics_bind};
  if (!metrics.enabled()) return metrics;
  const std::string flag = "--metrics-port " + std::to_string(metrics.port);
  if (auto clash = ShardPortClash(plan, "--metrics-port", metrics.port); !clash.ok()) {
    return clash.error();
  }
  if (proxy.enabled() && metrics.port == proxy.port) {
    return Error(flag + ": --proxy-port uses it (pick another port for one of them)");
  }
  if (proxy.metrics_port != 0 && metrics.port == proxy.metrics_port) {
    return Error(flag + ": --proxy-metrics-port uses it (the supervisor and the proxy serve " +
                 "/metrics on ports of their own: pick two, e.g. 9121 and 9122)");
  }
  return metrics;
}

Existing ClassifyExisting(const ExistingFacts& facts, const Deployment& requested,
                          const std::string& target) {
  if (!facts.recorded) return {};
  Existing existing{.recorded = facts.recorded};
  if (!facts.supervised && !facts.live_shards) {
    // The shards' nodes.conf (and data) will be resumed: a different shape would start a cluster
    // that fails minutes later, so it is refused before anything starts.
    existing.differences = ShapeDifferences(*facts.recorded, requested, target);
    // A format the requested engine cannot read (a downgrade, or 7.4 data to 7.0) cannot be
    // made live either: no restart --engine is suggested for it.
    if (const std::string problem = DataFormatProblem(facts.recorded->engine, requested.engine);
        !problem.empty()) {
      std::erase_if(existing.differences,
                    [](const std::string& line) { return line.starts_with("engine: "); });
      existing.differences.push_back("engine: " + problem);
    }
    existing.kind =
        existing.differences.empty() ? Existing::Kind::kResume : Existing::Kind::kOtherShape;
    return existing;
  }
  existing.differences = DiffDeployments(*facts.recorded, requested);
  if (!existing.differences.empty()) {
    existing.kind = Existing::Kind::kDifferent;
  } else if (!facts.supervised) {
    existing.kind = Existing::Kind::kAdopt;
  } else {
    existing.kind = Existing::Kind::kRunning;
    existing.shards = facts.recorded->plan.shards.size();
  }
  return existing;
}

Existing FindExisting(const DeploymentDir& dir, const Deployment& requested,
                      const std::string& target) {
  ExistingFacts facts;
  if (std::filesystem::exists(dir.DeploymentFile())) {
    if (auto recorded = ReadDeployment(dir); recorded.ok()) {
      facts.recorded = std::move(recorded).value();
      facts.supervised = SupervisorRunning(dir);
      facts.live_shards = AnyShardRunning(dir, facts.recorded->plan);
    }
  }
  return ClassifyExisting(facts, requested, target);
}

common::Status CheckNoStrayData(const DeploymentDir& dir, const Deployment& deployment) {
  if (deployment.durability.persistence != Persistence::kNone) return common::Ok();
  for (const auto& shard : deployment.plan.shards) {
    for (const char* name : {"dump.rdb", "appendonlydir", "appendonly.aof"}) {
      auto path = dir.ShardDir(shard.index) / name;
      if (std::filesystem::exists(path)) {
        return Error(path.string() +
                     ": data from an earlier run with persistence (start with the same "
                     "--persistence to keep it; move the file away only if it may be lost)");
      }
    }
  }
  return common::Ok();
}

common::Status CheckPortsFree(const Deployment& deployment) {
  const Plan& plan = deployment.plan;
  std::vector<int> ports;
  for (const auto& shard : plan.shards) ports.push_back(shard.port);
  for (const auto& shard : plan.shards) ports.push_back(shard.bus_port);
  if (deployment.tls.also_plain()) {
    for (const auto& shard : plan.shards) ports.push_back(deployment.tls.PlainPort(shard.index));
  }
  if (auto free = RequirePortsFree(
          plan.bind, ports, "choose another --base-port / --bus-base-port, or stop that process");
      !free.ok()) {
    return free;
  }
  const std::string& metrics_bind = deployment.metrics.bind;
  if (auto used = CheckPortFree(plan.bind, deployment.proxy.port, "--proxy-port"); !used.ok()) {
    return used;
  }
  if (auto used = CheckPortFree(metrics_bind, deployment.metrics.port, "--metrics-port");
      !used.ok()) {
    return used;
  }
  return CheckPortFree(metrics_bind, deployment.proxy.metrics_port, "--proxy-metrics-port");
}

common::Result<UpLock> UpLock::Take(const DeploymentDir& dir, const Progress& progress) {
  int fd = open(dir.UpLockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Error(dir.UpLockFile().string() + ": " + strerror(errno));
  auto deadline = Clock::now() + kUpLockWait;
  bool said = false;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (Clock::now() > deadline) {
      close(fd);
      return Error(
          "another shardctl up of this deployment has been running for 2 minutes "
          "(wait for it, or check shardctl status)");
    }
    if (!said) progress("waiting for another shardctl up of this deployment");
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return UpLock(fd);
}

UpLock& UpLock::operator=(UpLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void UpLock::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

common::Result<json> StartSupervisor(const DeploymentDir& dir, const std::string& name,
                                     const Progress& progress,
                                     const std::function<void()>& waiting) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error("pipe failed");
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "supervise",
                                   "--name",
                                   name,
                                   "--state-dir",
                                   dir.root().parent_path().string(),
                                   "--ready-fd",
                                   std::to_string(fds[1])};
  auto supervisor = SpawnPinned(
      {.argv = argv, .output = dir.SupervisorOutput(), .new_session = true, .keep_fds = {fds[1]}});
  close(fds[1]);
  if (!supervisor.ok()) {
    close(fds[0]);
    return supervisor.error();
  }
  g_supervisor_pid = supervisor->pid;
  signal(SIGINT, ForwardStop);
  signal(SIGTERM, ForwardStop);
  json event = ReadStartEvents(fds[0], progress, waiting);
  close(fds[0]);
  const bool ready = event.value("event", "") == "ready";
  if (!ready) waitpid(supervisor->pid, nullptr, 0);  // it stops its shards before it exits
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (!ready) return Error(event.value("error", "start-up failed"));
  return event;
}

bool StartInterrupted() { return g_stop_forwarded != 0; }

void UndoFailedStart(const DeploymentDir& dir, const Deployment& deployment,
                     const std::optional<Deployment>& previous) {
  if (SupervisorRunning(dir)) return;
  StopProcesses(LiveShards(dir, deployment.plan), std::chrono::seconds(5));
  if (previous) {
    (void)WriteDeployment(dir, *previous);
    return;
  }
  std::error_code ignored;
  std::filesystem::remove(dir.DeploymentFile(), ignored);
}

}  // namespace shardctl::launcher
