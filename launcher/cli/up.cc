// `shardctl up` and `shardctl supervise`.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>
#include <variant>

#include "common/size.h"
#include "launcher/cli/commands.h"
#include "launcher/engine/engine.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/topology.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/supervisor/proxy_keeper.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_supervisor_pid = 0;

// Ctrl-C on `up` must not leave a half-started deployment: pass it on to the supervisor, which
// stops whatever it started and reports "failed".
void ForwardStop(int) {
  if (g_supervisor_pid > 0) kill(g_supervisor_pid, SIGTERM);
}

std::string StateDirHint(const Spec& spec) {
  std::string hint = " --name " + spec.name;
  if (spec.state_dir) hint += " --state-dir " + spec.state_dir->string();
  return hint;
}

// The proxy part of the deployment record: the binary must exist and the port must not be one
// the shards use, before anything starts.
common::Result<ProxyConfig> ResolveProxy(const Spec& spec, const Plan& plan) {
  ProxyConfig proxy;
  if (!spec.proxy_port) {
    if (spec.proxy_threads) {
      return common::Error("--proxy-threads: needs --proxy-port (the port clients connect to)");
    }
    if (spec.proxy_read_from) {
      return common::Error("--proxy-read-from: needs --proxy-port (the port clients connect to)");
    }
    return proxy;
  }
  proxy.port = *spec.proxy_port;
  proxy.threads = spec.proxy_threads.value_or(0);
  proxy.read_from = spec.proxy_read_from.value_or("primary");
  for (const auto& shard : plan.shards) {
    if (shard.port == proxy.port || shard.bus_port == proxy.port) {
      return common::Error("--proxy-port " + std::to_string(proxy.port) + ": shard " +
                           std::to_string(shard.index) + " uses it (pick a port outside " +
                           std::to_string(plan.shards.front().port) + "-" +
                           std::to_string(plan.shards.back().port) + " and their bus ports)");
    }
  }
  auto binary = FindProxyBinary();
  if (!binary.ok()) return binary.error();
  proxy.binary = *binary;
  return proxy;
}

// What `up` found in the state dir.
enum class Existing { kNone, kAdopt };

// Handles `up` on a deployment that already has state. Returns an exit code when `up` is done
// (already running, or refused); otherwise whether a new supervisor must adopt running shards.
std::variant<int, Existing> CheckExisting(const DeploymentDir& dir, const Spec& spec,
                                          const Deployment& requested, bool as_json) {
  if (!std::filesystem::exists(dir.DeploymentFile())) return Existing::kNone;
  auto running = ReadDeployment(dir);
  if (!running.ok()) return Existing::kNone;  // unreadable leftovers: start afresh
  bool supervised = SupervisorRunning(dir);
  bool live_shards = AnyShardRunning(dir, running->plan);
  if (!supervised && !live_shards) return Existing::kNone;
  auto diffs = DiffDeployments(*running, requested);
  if (!diffs.empty()) {
    std::string message = "deployment \"" + spec.name +
                          "\" is running with a different spec (run shardctl down" +
                          StateDirHint(spec) + " first, or repeat the running spec):";
    for (const auto& diff : diffs) message += "\n  " + diff;
    PrintError(message);
    return kExitUsage;
  }
  if (!supervised) return Existing::kAdopt;
  if (as_json) {
    std::cout << json{{"name", spec.name},
                      {"already_running", true},
                      {"shards", running->plan.shards.size()}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "deployment \"" << spec.name << "\" is already running with this spec ("
              << running->plan.shards.size() << " shards); nothing to do\n";
  }
  return kExitOk;
}

// A deployment without persistence starts empty; refusing is better than silently loading (or
// later overwriting) data an earlier run with persistence left in the shard directories.
common::Status CheckNoStrayData(const DeploymentDir& dir, const Deployment& deployment) {
  if (deployment.durability.persistence != Persistence::kNone) return common::Ok();
  for (const auto& shard : deployment.plan.shards) {
    for (const char* name : {"dump.rdb", "appendonlydir", "appendonly.aof"}) {
      auto path = dir.ShardDir(shard.index) / name;
      if (std::filesystem::exists(path)) {
        return common::Error(path.string() +
                             ": data from an earlier run with persistence (start with the same "
                             "--persistence to keep it, or shardctl down --purge to delete it)");
      }
    }
  }
  return common::Ok();
}

// Serialises `up`s of one deployment (a retrying script, systemd and an operator at once): the
// second waits for the first to finish, then finds the deployment running and changes nothing.
// Returns the locked descriptor: the lock lasts until it is closed or this process exits
// (SpawnPinned keeps it out of the supervisor).
common::Result<int> LockUpsOf(const DeploymentDir& dir) {
  int fd = open((dir.root() / "up.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return common::Error(dir.root().string() + "/up.lock: " + strerror(errno));
  auto deadline = Clock::now() + std::chrono::minutes(2);
  bool said = false;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (Clock::now() > deadline) {
      close(fd);
      return common::Error(
          "another shardctl up of this deployment has been running for 2 minutes "
          "(wait for it, or check shardctl status)");
    }
    if (!said) std::cerr << "shardctl: waiting for another shardctl up of this deployment\n";
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fd;
}

common::Status CheckPortsFree(const Plan& plan) {
  std::vector<int> ports;
  for (const auto& shard : plan.shards) ports.push_back(shard.port);
  for (const auto& shard : plan.shards) ports.push_back(shard.bus_port);
  auto taken = TakenPorts(plan.bind, ports);
  if (taken.empty()) return common::Ok();
  std::string list;
  for (size_t i = 0; i < taken.size() && i < 8; ++i) {
    list += (i ? ", " : "") + std::to_string(taken[i]);
  }
  if (taken.size() > 8) list += " and " + std::to_string(taken.size() - 8) + " more";
  return common::Error("port(s) " + list + " on " + plan.bind +
                       " are in use by another process (choose another --base-port / "
                       "--bus-base-port, or stop that process)");
}

// Reads the supervisor's events until it reports ready/failed or closes the pipe.
json WaitForSupervisor(int read_fd, bool as_json) {
  FILE* events = fdopen(read_fd, "r");
  char* line = nullptr;
  size_t capacity = 0;
  json last = {{"event", "failed"}, {"error", "the supervisor exited during start-up"}};
  while (getline(&line, &capacity, events) > 0) {
    json event = json::parse(line, nullptr, false);
    if (event.is_discarded()) continue;
    if (event.value("event", "") == "progress") {
      if (!as_json) std::cerr << "shardctl: " << event.value("message", "") << "\n";
      continue;
    }
    last = event;
    break;
  }
  free(line);
  fclose(events);
  return last;
}

json StartSupervisorInBackground(const DeploymentDir& dir, const Spec& spec, bool as_json) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {{"event", "failed"}, {"error", "pipe failed"}};
  std::vector<std::string> argv = {std::filesystem::read_symlink("/proc/self/exe").string(),
                                   "supervise",
                                   "--name",
                                   spec.name,
                                   "--state-dir",
                                   dir.root().parent_path().string(),
                                   "--ready-fd",
                                   std::to_string(fds[1])};
  auto supervisor = SpawnPinned({.argv = argv,
                                 .output = dir.root() / "supervisor.out",
                                 .new_session = true,
                                 .keep_fds = {fds[1]}});
  close(fds[1]);
  if (!supervisor.ok()) {
    close(fds[0]);
    return {{"event", "failed"}, {"error", supervisor.error().message()}};
  }
  g_supervisor_pid = supervisor->pid;
  signal(SIGINT, ForwardStop);
  signal(SIGTERM, ForwardStop);
  json result = WaitForSupervisor(fds[0], as_json);
  if (result.value("event", "") != "ready") {
    waitpid(supervisor->pid, nullptr, 0);  // it stops its shards before it exits
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  return result;
}

void PrintStarted(const Deployment& deployment, const Spec& spec, const json& ready,
                  Clock::duration elapsed, bool as_json) {
  auto up_ms = std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count();
  const Plan& plan = deployment.plan;
  if (as_json) {
    json out = {{"name", plan.name},
                {"engine", deployment.engine.Name()},
                {"engine_version", deployment.engine.version},
                {"engine_path", deployment.engine.path.string()},
                {"shards", plan.shards.size()},
                {"first_port", plan.shards.front().port},
                {"already_running", false},
                {"up_ms", up_ms}};
    for (const char* key : {"spawn_ms", "ping_ms", "formation_ms", "total_ms", "supervisor_pid",
                            "adopted", "restarted", "cluster_state", "proxy_port"}) {
      if (ready.contains(key)) out[key] = ready[key];
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  auto seconds = [](const json& ms) {
    return std::to_string(ms.get<double>() / 1000.0).substr(0, 4);
  };
  if (ready.value("adopted", 0) > 0) {
    std::cout << "adopted " << ready.value("adopted", 0) << " running shards of \"" << plan.name
              << "\" (started " << ready.value("restarted", 0)
              << " missing ones) with a new supervisor, pid " << ready.value("supervisor_pid", 0)
              << "; cluster " << ready.value("cluster_state", std::string("?")) << "\n";
  } else {
    std::cout << "started \"" << plan.name << "\": " << plan.shards.size() << " "
              << deployment.engine.Name() << " " << deployment.engine.version
              << " shards, cluster healthy in " << seconds(ready.value("total_ms", 0))
              << " s (spawn " << seconds(ready.value("spawn_ms", 0)) << " s, all answering PING "
              << seconds(ready.value("ping_ms", 0)) << " s, formation "
              << seconds(ready.value("formation_ms", 0)) << " s; whole command "
              << seconds(json(up_ms)) << " s)\n";
  }
  std::cout << "  connect: redis-cli -c -h " << plan.bind << " -p " << plan.shards.front().port
            << "\n";
  if (deployment.proxy.enabled()) {
    std::cout << "  proxy:   redis-cli -h " << plan.bind << " -p " << deployment.proxy.port
              << "   (shardproxy: any Redis client, no cluster support needed)\n";
  }
  std::cout << "  status:  shardctl status" << StateDirHint(spec) << "\n"
            << "  stop:    shardctl down" << StateDirHint(spec) << "\n";
}

}  // namespace

int RunUp(const Invocation& invocation) {
  auto started = Clock::now();
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto topology = ReadTopology("/");
  if (!topology.ok()) {
    PrintError(topology.error().message());
    return kExitRuntime;
  }
  auto plan = MakePlan(*topology, *spec);
  if (!plan.ok()) {
    PrintError(plan.error().message());
    return kExitUsage;
  }
  auto engine = ResolveEngine(spec->engine);
  if (!engine.ok()) {
    PrintError(engine.error().message());
    return kExitUsage;
  }
  Deployment deployment{.plan = std::move(plan).value(),
                        .engine = std::move(engine).value(),
                        .supervision = spec->supervision,
                        .durability = spec->durability};
  if (auto proxy = ResolveProxy(*spec, deployment.plan); !proxy.ok()) {
    PrintError(proxy.error().message());
    return kExitUsage;
  } else {
    deployment.proxy = *proxy;
  }
  DeploymentDir dir = DirOf(*spec);
  int up_lock = -1;
  if (!invocation.dry_run) {
    if (auto writable = EnsureWritableDir(dir.root()); !writable.ok()) {
      PrintError(writable.error().message());
      return kExitRuntime;
    }
    auto locked = LockUpsOf(dir);
    if (!locked.ok()) {
      PrintError(locked.error().message());
      return kExitRuntime;
    }
    up_lock = *locked;
  }
  auto existing = CheckExisting(dir, *spec, deployment, invocation.json);
  if (auto* done = std::get_if<int>(&existing)) return *done;
  bool adopting = std::get<Existing>(existing) == Existing::kAdopt;
  PrintPlanWarnings(deployment.plan);
  if (adopting) {
    PrintWarning("deployment \"" + spec->name +
                 "\" has running shards but no supervisor: starting one to adopt them");
  } else if (auto stray = CheckNoStrayData(dir, deployment); !stray.ok()) {
    PrintError(stray.error().message());
    return kExitUsage;
  } else if (auto ports = CheckPortsFree(deployment.plan); !ports.ok()) {
    PrintError(ports.error().message());
    return kExitRuntime;
  } else if (deployment.proxy.enabled() &&
             !TakenPorts(deployment.plan.bind, {deployment.proxy.port}).empty()) {
    PrintError("--proxy-port " + std::to_string(deployment.proxy.port) + " is in use on " +
               deployment.plan.bind + " (pick another --proxy-port or stop what listens there)");
    return kExitRuntime;
  }
  if (invocation.dry_run) {
    std::cout << "dry run: would start " << deployment.plan.shards.size() << " "
              << deployment.engine.Name() << " " << deployment.engine.version << " shards ("
              << deployment.engine.path.string() << ") with state in " << dir.root().string()
              << "\n"
              << PlanTable(deployment.plan);
    return kExitOk;
  }
  if (auto written = WriteDeployment(dir, deployment); !written.ok()) {
    PrintError(written.error().message());
    return kExitRuntime;
  }
  json result;
  if (invocation.foreground) {
    // The supervisor's own lock takes over; another `up` must see it, not wait for this one.
    close(up_lock);
    return RunSupervisor(dir, [&](const json& event) {
      std::string kind = event.value("event", "");
      if (kind == "progress") std::cerr << "shardctl: " << event.value("message", "") << "\n";
      if (kind == "failed") PrintError(event.value("error", "start-up failed"));
      if (kind == "ready") {
        PrintStarted(deployment, *spec, event, Clock::now() - started, invocation.json);
        std::cout << "running in the foreground; Ctrl-C or SIGTERM stops every shard\n"
                  << std::flush;
      }
    });
  }
  result = StartSupervisorInBackground(dir, *spec, invocation.json);
  if (result.value("event", "") != "ready") {
    // A failed adoption leaves the running shards as they were. Our supervisor has exited by
    // now, so a held lock means a concurrent `up` won the race: the shards and the deployment
    // record are its own, not leftovers of ours.
    if (!adopting && !SupervisorRunning(dir)) {
      StopProcesses(LiveShards(dir, deployment.plan), std::chrono::seconds(5));
      std::error_code ignored;
      std::filesystem::remove(dir.DeploymentFile(), ignored);
    }
    PrintError(result.value("error", "start-up failed") +
               " (supervisor log: " + dir.SupervisorLog().string() + ")");
    return kExitRuntime;
  }
  PrintStarted(deployment, *spec, result, Clock::now() - started, invocation.json);
  return kExitOk;
}

int RunSupervise(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  DeploymentDir dir = DirOf(*spec);
  if (!std::filesystem::exists(dir.DeploymentFile())) {
    PrintError("no deployment \"" + spec->name + "\" in " + dir.root().parent_path().string() +
               " (create it with shardctl up)");
    return kExitUsage;
  }
  int ready_fd = invocation.ready_fd;
  return RunSupervisor(dir, [&ready_fd](const json& event) {
    std::string kind = event.value("event", "");
    if (ready_fd < 0) {
      std::cerr << "shardctl: " << event.dump() << "\n";
      return;
    }
    std::string line = event.dump() + "\n";
    if (write(ready_fd, line.data(), line.size()) < 0) {
      // `up` went away; the supervisor carries on and logs to its file.
    }
    if (kind == "ready" || kind == "failed") {
      close(ready_fd);
      ready_fd = -1;
    }
  });
}

}  // namespace shardctl::launcher
