// `shardctl up` and `shardctl supervise`. The steps of `up` are in ops/up.h; this file
// handles the arguments, prints and picks the exit code.
#include "launcher/ops/up.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <iostream>
#include <variant>

#include "common/secrets.h"
#include "common/tls_check.h"
#include "launcher/cli/commands.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/engine/engine.h"
#include "launcher/model/topology.h"
#include "launcher/ops/rebalance.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Prints a notice of `up` itself (waiting for another `up`) as one line.
void PrintProgress(const std::string& message) { std::cerr << "shardctl: " << message << "\n"; }

// --tls-*: absolute paths (the supervisor and every later command read them), a private key only
// its owner may read, an engine built with TLS, files that load. The proxy (--proxy-port) is
// given the same three files: TLS to its clients and to the shards.
common::Result<TlsConfig> ResolveTls(const Spec& spec, const Engine& engine) {
  if (!spec.tls_cert) return TlsConfig{};
  if (auto key = common::ReadSecretFile(*spec.tls_key, "--tls-key"); !key.ok()) return key.error();
  // As a TLS peer will check it: a shard loads an expired certificate, or one another CA
  // signed, and then no client can reach it.
  if (auto checked = common::CheckCertificate(
          {.cert_file = *spec.tls_cert, .key_file = *spec.tls_key, .ca_file = *spec.tls_ca},
          std::time(nullptr));
      !checked.ok()) {
    return checked.error();
  }
  auto has_tls = EngineHasTls(engine.path);
  if (!has_tls.ok()) return has_tls.error();
  if (!*has_tls) {
    return common::Error("--engine " + engine.path.string() + ": " + engine.Name() + " " +
                         engine.version +
                         " was built without TLS (use a build with TLS, such as Debian's "
                         "redis-server, or leave out --tls-cert/--tls-key/--tls-ca)");
  }
  TlsConfig tls{.cert = std::filesystem::absolute(*spec.tls_cert).string(),
                .key = std::filesystem::absolute(*spec.tls_key).string(),
                .ca = std::filesystem::absolute(*spec.tls_ca).string(),
                .auth_clients = spec.tls_auth_clients.value_or("no"),
                .plain_base_port = spec.tls_also_plain ? spec.PlainBasePort() : 0};
  // Loads the files now, so a bad one is named before anything starts.
  if (auto loaded = UseControlTls({.ca_file = tls.ca, .cert_file = tls.cert, .key_file = tls.key});
      !loaded.ok()) {
    return loaded.error();
  }
  return tls;
}

// The deployment record `up` would write: placement, engine, supervision, durability, proxy.
std::variant<Deployment, int> DecideDeployment(const Spec& spec,
                                               std::vector<std::string>& host_notes) {
  auto host = ReadHost(spec, std::nullopt);
  if (!host.ok()) {
    PrintError(host.error().message());
    return kExitRuntime;
  }
  host_notes = host->notes;
  auto plan = MakePlan(host->topology, host->spec);
  if (!plan.ok()) {
    PrintError(plan.error().message());
    return kExitUsage;
  }
  auto engine = ResolveEngine(spec.engine);
  if (!engine.ok()) {
    PrintError(engine.error().message());
    return kExitUsage;
  }
  auto proxy = ResolveProxy(spec, *plan);
  if (!proxy.ok()) {
    PrintError(proxy.error().message());
    return kExitUsage;
  }
  auto metrics = ResolveMetrics(spec, *plan, *proxy);
  if (!metrics.ok()) {
    PrintError(metrics.error().message());
    return kExitUsage;
  }
  AuthConfig auth;
  if (spec.password_file) {
    auto password = common::ReadPasswordFile(*spec.password_file, "--password-file");
    if (!password.ok()) {
      PrintError(password.error().message());
      return kExitUsage;
    }
    auth = {.password_required = true, .password = std::move(password).value()};
  }
  auto tls = ResolveTls(spec, *engine);
  if (!tls.ok()) {
    PrintError(tls.error().message());
    return kExitUsage;
  }
  Deployment deployment{.plan = std::move(plan).value(),
                        .engine = std::move(engine).value(),
                        .supervision = spec.supervision,
                        .durability = spec.durability,
                        .proxy = std::move(proxy).value(),
                        .metrics = std::move(metrics).value(),
                        .auth = std::move(auth),
                        .tls = std::move(tls).value()};
  if (auto clash = PlainPortClash(deployment); !clash.ok()) {
    PrintError(clash.error().message());
    return kExitUsage;
  }
  return deployment;
}

// `up --name N` alone: the deployment as recorded (its shape after any scale), or a fresh default
// one when nothing is recorded.
std::variant<Deployment, int> RecordedDeployment(const DeploymentDir& dir, const Spec& spec,
                                                 std::vector<std::string>& host_notes) {
  if (!std::filesystem::exists(dir.DeploymentFile())) return DecideDeployment(spec, host_notes);
  auto recorded = ReadDeployment(dir);
  if (!recorded.ok()) {
    PrintError(recorded.error().message());
    return kExitRuntime;
  }
  const TlsConfig& tls = recorded->tls;
  if (tls.enabled()) {
    if (auto checked = common::CheckCertificate(
            {.cert_file = tls.cert, .key_file = tls.key, .ca_file = tls.ca}, std::time(nullptr));
        !checked.ok()) {
      PrintError(checked.error().message());
      return kExitUsage;
    }
  }
  return std::move(recorded).value();
}

// A refused first `up` leaves nothing behind: the directory LockStateDir made holds only its
// up.lock then.
void RemoveUnusedStateDir(const DeploymentDir& dir) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir.root(), error)) {
    if (entry.path() != dir.UpLockFile()) return;
  }
  if (!error) std::filesystem::remove_all(dir.root(), error);
}

// Creates the deployment's directory and takes its up.lock.
std::variant<UpLock, int> LockStateDir(const DeploymentDir& dir) {
  if (auto writable = EnsureWritableDir(dir.root()); !writable.ok()) {
    PrintError(writable.error().message());
    return kExitRuntime;
  }
  auto locked = UpLock::Take(dir, PrintProgress);
  if (!locked.ok()) {
    PrintError(locked.error().message());
    return kExitRuntime;
  }
  return std::move(locked).value();
}

// Slot moves an interrupted scale or rebalance left open (Ctrl-C, a crash, `down` mid-move) are
// finished toward their target, so `up` of a running or resumed deployment leaves no slot
// MIGRATING or IMPORTING. Returns how many slots were open; a failure is a warning, not a failed
// `up`: the shards run, and status shows the open moves.
size_t FinishOpenMoves(const Plan& plan, const Spec& spec) {
  auto finished = FinishInterruptedMoves(plan);
  if (!finished.ok()) {
    PrintWarning(finished.error().message() + " (shardctl status" + StateDirHint(spec) +
                 " lists the open moves; shardctl rebalance" + StateDirHint(spec) +
                 " finishes them)");
    return 0;
  }
  return finished->size();
}

std::string FinishedMovesNote(size_t slots) {
  return slots == 0 ? std::string()
                    : "; finished the move of " + std::to_string(slots) +
                          " slot(s) an interrupted scale or rebalance left open";
}

// --join: once the shards have met the cluster, this host's primaries take their share of the
// slots, keys and all (a no-op when each owns slots already, so repeating `up` is safe). Records
// "share_slots" and "share_keys" in `result`; false, after printing the error, when moves failed.
bool TakeShareOfSlots(const Plan& plan, const Spec& spec, bool as_json, json& result) {
  if (plan.join.empty()) return true;
  ProgressDisplay progress(ProgressAllowed(as_json));
  progress.Show("taking this host's share of the slots");
  auto share = TakeShare(plan, [&progress](const MoveProgress& moved) {
    progress.Show("taking this host's share of the slots: " + std::to_string(moved.slots_moved) +
                  "/" + std::to_string(moved.slots_total) + " moved, " +
                  std::to_string(moved.keys_moved) + " keys");
  });
  progress.Clear();
  if (!share.ok()) {
    PrintError("join: taking this host's share of the slots: " + share.error().message() +
               " (the shards run and are part of the cluster; shardctl rebalance" +
               StateDirHint(spec) + " continues the moves)");
    return false;
  }
  int slots = 0;
  for (const auto& move : share->moves) slots += move.slots;
  result["share_slots"] = slots;
  result["share_keys"] = share->report ? share->report->progress.keys_moved : 0;
  return true;
}

std::string ShareNote(const json& result) {
  const int slots = result.value("share_slots", 0);
  if (slots == 0) return "";
  return "; took " + std::to_string(slots) + " slots (" +
         std::to_string(result.value("share_keys", uint64_t{0})) + " keys) from the cluster";
}

// True when `up` names only the deployment (--name, --state-dir, no --config, no spec flag): it
// then resumes or adopts the deployment as recorded, whatever shape `scale` gave it.
bool NamesOnlyTheDeployment(const Invocation& invocation) {
  if (invocation.config_file) return false;
  return std::all_of(invocation.settings.begin(), invocation.settings.end(),
                     [](const Setting& s) { return s.key == "name" || s.key == "state-dir"; });
}

// A stopped deployment whose data has another shape than the one asked for: refused before
// anything starts or changes, naming each difference and how to make it live.
int RefuseOtherShape(const Existing& existing, const Spec& spec) {
  std::string message = "deployment \"" + spec.name +
                        "\" is stopped, and its nodes were formed with another shape; nothing "
                        "was started or changed (resume it as recorded with shardctl up" +
                        StateDirHint(spec) + ", then change it live):";
  for (const auto& difference : existing.differences) message += "\n  " + difference;
  if (existing.recorded) message += "\n  recorded: " + ShapeSummary(*existing.recorded);
  PrintError(message);
  return kExitUsage;
}

// `up` of a deployment that already runs: nothing to do with the same spec (but finishing open
// slot moves), refused with another.
int PrintExisting(const Existing& existing, const Deployment& deployment, const Spec& spec,
                  const Invocation& invocation) {
  const bool as_json = invocation.json;
  if (existing.kind == Existing::Kind::kDifferent) {
    std::string message = "deployment \"" + spec.name +
                          "\" is running with a different spec (repeat the running spec, or " +
                          "shardctl up" + StateDirHint(spec) +
                          " alone, which keeps it as it runs):";
    for (const auto& difference : existing.differences) message += "\n  " + difference;
    PrintError(message);
    return kExitUsage;
  }
  const size_t finished = invocation.dry_run ? 0 : FinishOpenMoves(deployment.plan, spec);
  json result = {{"name", spec.name},
                 {"already_running", true},
                 {"shards", existing.shards},
                 {"finished_open_slots", finished}};
  if (!invocation.dry_run && !TakeShareOfSlots(deployment.plan, spec, as_json, result)) {
    return kExitRuntime;
  }
  if (as_json) {
    std::cout << result.dump(2) << "\n";
  } else {
    std::cout << "deployment \"" << spec.name << "\" is already running with this spec ("
              << existing.shards << " shards); nothing to do" << FinishedMovesNote(finished)
              << ShareNote(result) << "\n";
  }
  return kExitOk;
}

// What must hold before anything starts; an adoption starts nothing new, so it is not checked.
int CheckCanStart(const DeploymentDir& dir, const Deployment& deployment, const Spec& spec,
                  bool adopting) {
  if (adopting) {
    PrintWarning("deployment \"" + spec.name +
                 "\" has running shards but no supervisor: starting one to adopt them");
    return kExitOk;
  }
  if (auto stray = CheckNoStrayData(dir, deployment); !stray.ok()) {
    PrintError(stray.error().message());
    return kExitUsage;
  }
  if (auto address = CheckAddressOnHost(deployment.plan.bind, "--bind"); !address.ok()) {
    PrintError(address.error().message());
    return kExitUsage;
  }
  if (auto ports = CheckPortsFree(deployment); !ports.ok()) {
    PrintError(ports.error().message());
    return kExitRuntime;
  }
  return kExitOk;
}

void PrintDryRun(const DeploymentDir& dir, const Deployment& deployment) {
  std::cout << "dry run: would start " << deployment.plan.shards.size() << " "
            << deployment.engine.Name() << " " << deployment.engine.version << " shards ("
            << deployment.engine.path.string() << ") with state in " << dir.root().string() << "\n"
            << PlanTable(deployment.plan);
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
    for (const char* key :
         {"spawn_ms", "ping_ms", "formation_ms", "total_ms", "supervisor_pid", "adopted",
          "restarted", "resumed", "cluster_state", "proxy_port", "finished_open_slots", "joined",
          "joined_nodes", "replica_moves", "share_slots", "share_keys"}) {
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
              << "; cluster " << ready.value("cluster_state", std::string("?"))
              << FinishedMovesNote(ready.value("finished_open_slots", size_t{0})) << "\n";
  } else {
    // Resumed: the shards came back with their data and the cluster their nodes.conf recorded.
    const bool resumed = ready.value("resumed", false);
    std::cout << (resumed ? "resumed \"" : "started \"") << plan.name
              << "\": " << plan.shards.size() << " " << deployment.engine.Name() << " "
              << deployment.engine.version << " shards" << (resumed ? " with their data" : "")
              << ", cluster healthy in " << seconds(ready.value("total_ms", 0)) << " s (spawn "
              << seconds(ready.value("spawn_ms", 0)) << " s, all answering PING "
              << seconds(ready.value("ping_ms", 0)) << " s, formation "
              << seconds(ready.value("formation_ms", 0)) << " s; whole command "
              << seconds(json(up_ms)) << " s)"
              << FinishedMovesNote(ready.value("finished_open_slots", size_t{0}))
              << (ready.value("joined", false)
                      ? "; joined " + plan.join + " (" +
                            std::to_string(ready.value("joined_nodes", 0)) + " nodes there, " +
                            std::to_string(ready.value("replica_moves", 0)) + " replicas placed)"
                      : "")
              << ShareNote(ready) << "\n";
  }
  // --askpass: redis-cli reads the password from the terminal, not from its command line.
  std::string login = deployment.auth.password_required ? " --askpass" : "";
  if (deployment.tls.enabled()) login += " --tls --cacert " + deployment.tls.ca;
  std::cout << "  connect: redis-cli -c -h " << plan.bind << " -p " << plan.shards.front().port
            << login << "\n";
  if (deployment.tls.also_plain()) {
    std::cout << "  plain:   redis-cli -c -h " << plan.bind << " -p "
              << deployment.tls.PlainPort(plan.shards.front().index)
              << (deployment.auth.password_required ? " --askpass" : "")
              << "   (--tls-also-plain: plain RESP beside TLS)\n";
  }
  if (deployment.proxy.enabled()) {
    std::cout << "  proxy:   redis-cli -h " << plan.bind << " -p " << deployment.proxy.port << login
              << "   (shardproxy: any Redis client, no cluster support needed)\n";
  }
  std::cout << "  status:  shardctl status" << StateDirHint(spec) << "\n"
            << "  stop:    shardctl down" << StateDirHint(spec) << "\n";
}

// `up --foreground`: this process becomes the supervisor; its own lock takes over from up.lock,
// so another `up` sees it rather than waiting for this one.
int RunInForeground(const DeploymentDir& dir, const Deployment& deployment, const Spec& spec,
                    const std::optional<Deployment>& previous, UpLock& lock,
                    Clock::time_point started, bool as_json) {
  lock.Release();
  ProgressDisplay progress(ProgressAllowed(as_json));
  return RunSupervisor(dir, [&](const json& event) {
    std::string kind = event.value("event", "");
    if (kind == "progress") return progress.Show(event.value("message", ""));
    progress.Clear();
    if (kind == "failed") {
      PrintError(event.value("error", "start-up failed"));
      // A failed resume leaves the record as it was before this `up`.
      if (previous) (void)WriteDeployment(dir, *previous);
    }
    if (kind == "ready") {
      // Before the supervisor's loop runs: the share is taken before supervision begins.
      json ready = event;
      TakeShareOfSlots(deployment.plan, spec, as_json, ready);
      PrintStarted(deployment, spec, ready, Clock::now() - started, as_json);
      std::cout << "running in the foreground; Ctrl-C or SIGTERM stops every shard\n" << std::flush;
    }
  });
}

int RunInBackground(const DeploymentDir& dir, const Deployment& deployment, const Spec& spec,
                    const Existing& existing, Clock::time_point started, bool as_json) {
  const bool adopting = existing.kind == Existing::Kind::kAdopt;
  ProgressDisplay progress(ProgressAllowed(as_json));
  progress.Show("starting " + std::to_string(deployment.plan.shards.size()) + " shards");
  auto ready = StartSupervisor(
      dir, spec.name, [&progress](const std::string& message) { progress.Show(message); },
      [&progress] { progress.Tick(); });
  progress.Clear();
  if (!ready.ok()) {
    // A failed adoption leaves the running shards as they were.
    if (!adopting) UndoFailedStart(dir, deployment, existing.recorded);
    PrintError(ready.error().message() + " (supervisor log: " + dir.SupervisorLog().string() + ")");
    return kExitRuntime;
  }
  // Resumed from data or adopted: a move the previous run left open is finished now.
  if (ready->value("resumed", false) || ready->value("adopted", 0) > 0) {
    (*ready)["finished_open_slots"] = FinishOpenMoves(deployment.plan, spec);
  }
  if (!TakeShareOfSlots(deployment.plan, spec, as_json, *ready)) return kExitRuntime;
  PrintStarted(deployment, spec, *ready, Clock::now() - started, as_json);
  return kExitOk;
}

}  // namespace

int RunUp(const Invocation& invocation) {
  auto started = Clock::now();
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  std::vector<std::string> host_notes;
  DeploymentDir dir = DirOf(*spec);
  auto decided = NamesOnlyTheDeployment(invocation) ? RecordedDeployment(dir, *spec, host_notes)
                                                    : DecideDeployment(*spec, host_notes);
  if (auto* code = std::get_if<int>(&decided)) return *code;
  const Deployment& deployment = std::get<Deployment>(decided);
  if (auto used = UseDeploymentAccess(deployment); !used.ok()) {
    PrintError(used.error().message());
    return kExitUsage;
  }
  std::optional<UpLock> lock;
  if (!invocation.dry_run) {
    auto locked = LockStateDir(dir);
    if (auto* code = std::get_if<int>(&locked)) return *code;
    lock.emplace(std::get<UpLock>(std::move(locked)));
  }
  Existing existing = FindExisting(dir, deployment, StateDirHint(*spec));
  if (existing.kind == Existing::Kind::kDifferent || existing.kind == Existing::Kind::kRunning) {
    return PrintExisting(existing, deployment, *spec, invocation);
  }
  if (existing.kind == Existing::Kind::kOtherShape) return RefuseOtherShape(existing, *spec);
  const bool adopting = existing.kind == Existing::Kind::kAdopt;
  PrintPlanWarnings(deployment.plan);
  if (int code = CheckCanStart(dir, deployment, *spec, adopting); code != kExitOk) {
    RemoveUnusedStateDir(dir);
    return code;
  }
  if (invocation.dry_run) {
    for (const auto& note : host_notes) std::cout << note << "\n";
    PrintDryRun(dir, deployment);
    return kExitOk;
  }
  // Adopted shards serve what they loaded at their start, not necessarily the files on disk now.
  if (auto recorded = adopting ? common::Ok() : RecordTlsInUse(dir, deployment.tls);
      !recorded.ok()) {
    PrintError(recorded.error().message());
    return kExitRuntime;
  }
  if (auto written = WriteDeployment(dir, deployment); !written.ok()) {
    PrintError(written.error().message());
    return kExitRuntime;
  }
  if (invocation.foreground) {
    return RunInForeground(dir, deployment, *spec, existing.recorded, *lock, started,
                           invocation.json);
  }
  return RunInBackground(dir, deployment, *spec, existing, started, invocation.json);
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
