#include "launcher/ops/up.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "common/secrets.h"
#include "common/tls_check.h"
#include "launcher/cluster/access.h"
#include "launcher/engine/engine.h"
#include "launcher/ops/host.h"
#include "launcher/ops/rebalance.h"
#include "launcher/ops/up_steps.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/state/data_lock.h"
#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

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
  return TlsConfig{.cert = std::filesystem::absolute(*spec.tls_cert).string(),
                   .key = std::filesystem::absolute(*spec.tls_key).string(),
                   .ca = std::filesystem::absolute(*spec.tls_ca).string(),
                   .auth_clients = spec.tls_auth_clients.value_or("no"),
                   .plain_base_port = spec.tls_also_plain ? spec.PlainBasePort() : 0};
}

// The deployment record `up` would write: placement, engine, supervision, durability, proxy.
Outcome<Deployment> DecideDeployment(const Spec& spec, std::vector<std::string>& host_notes) {
  auto planned = PlanOnHost(spec, std::nullopt);
  if (!planned.ok()) return planned.error();
  host_notes = planned->host_notes;
  auto engine = ResolveEngine(spec.engine);
  if (!engine.ok()) return Failure::Usage(engine.error());
  auto proxy = ResolveProxy(spec, planned->plan);
  if (!proxy.ok()) return Failure::Usage(proxy.error());
  auto metrics = ResolveMetrics(spec, planned->plan, *proxy);
  if (!metrics.ok()) return Failure::Usage(metrics.error());
  AuthConfig auth;
  if (spec.password_file) {
    auto password = common::ReadPasswordFile(*spec.password_file, "--password-file");
    if (!password.ok()) return Failure::Usage(password.error());
    auth = {.password_required = true, .password = std::move(password).value()};
  }
  auto tls = ResolveTls(spec, *engine);
  if (!tls.ok()) return Failure::Usage(tls.error());
  Deployment deployment{.plan = std::move(planned->plan),
                        .engine = std::move(engine).value(),
                        .supervision = spec.supervision,
                        .durability = spec.durability,
                        .proxy = std::move(proxy).value(),
                        .metrics = std::move(metrics).value(),
                        .auth = std::move(auth),
                        .tls = std::move(tls).value()};
  if (auto clash = PlainPortClash(deployment); !clash.ok()) return Failure::Usage(clash.error());
  return deployment;
}

// `up --name N` alone: the deployment as recorded (its shape after any scale), or a fresh default
// one when nothing is recorded.
Outcome<Deployment> RecordedDeployment(const DeploymentDir& dir, const Spec& spec,
                                       std::vector<std::string>& host_notes) {
  if (!std::filesystem::exists(dir.DeploymentFile())) return DecideDeployment(spec, host_notes);
  auto recorded = ReadDeployment(dir);
  if (!recorded.ok()) return recorded.error();
  const TlsConfig& tls = recorded->tls;
  if (tls.enabled()) {
    if (auto checked = common::CheckCertificate(
            {.cert_file = tls.cert, .key_file = tls.key, .ca_file = tls.ca}, std::time(nullptr));
        !checked.ok()) {
      return Failure::Usage(checked.error());
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
common::Result<UpLock> LockStateDir(const DeploymentDir& dir, const UpRequest& request) {
  if (auto writable = EnsureWritableDir(dir.root()); !writable.ok()) return writable.error();
  return UpLock::Take(dir, [&request](const std::string& notice) {
    if (request.on_notice) request.on_notice(notice);
  });
}

void Warn(const UpRequest& request, const std::string& warning) {
  if (request.on_warning) request.on_warning(warning);
}

// Slot moves an interrupted scale or rebalance left open (Ctrl-C, a crash, `down` mid-move) are
// finished toward their target, so `up` of a running or resumed deployment leaves no slot
// MIGRATING or IMPORTING. Returns how many slots were open; a failure is a warning, not a failed
// `up`: the shards run, and status shows the open moves.
size_t FinishOpenMoves(const Access& access, const DeploymentDir& dir, const Plan& plan,
                       const UpRequest& request) {
  // Moves open because another command (a rebalance, a scale) is making them now are its own:
  // finished from here too, both would race on the same slots.
  auto lock = DataLock::Take(dir, "up");
  if (!lock.ok()) {
    const std::string holder = DataLock::HolderOf(dir);
    Warn(request,
         "open slot moves, if any, are not finished now: another command holds the "
         "deployment's data (" +
             (holder.empty() ? "another shardctl command" : holder) +
             "); a move it makes it finishes itself, any other is finished by the next "
             "shardctl up or rebalance");
    return 0;
  }
  auto finished = FinishInterruptedMoves(access, plan);
  if (!finished.ok()) {
    const std::string hint = StateDirHint(request.spec);
    // A refusal to finish into a full shard says what to do itself (a rebalance would refuse
    // the same way until memory is freed).
    if (auto refusal = UsageRefusal(finished.error())) {
      Warn(request, *refusal);
      return 0;
    }
    Warn(request, finished.error().message() + " (shardctl status" + hint +
                      " lists the open moves; shardctl rebalance" + hint + " finishes them)");
    return 0;
  }
  return finished->size();
}

// --join: once the shards have met the cluster, this host's primaries take their share of the
// slots, keys and all (a no-op when each owns slots already, so repeating `up` is safe). Records
// "share_slots" and "share_keys" in `ready`.
common::Status TakeShareOfSlots(const Access& access, const Plan& plan, const UpRequest& request,
                                json& ready) {
  if (plan.join.empty()) return common::Ok();
  const auto show = [&request](const std::string& line) {
    if (request.on_progress) request.on_progress(line);
  };
  show("taking this host's share of the slots");
  auto share = TakeShare(access, plan, [&show](const MoveProgress& moved) {
    show("taking this host's share of the slots: " + std::to_string(moved.slots_moved) + "/" +
         std::to_string(moved.slots_total) + " moved, " + std::to_string(moved.keys_moved) +
         " keys");
  });
  if (!share.ok()) {
    // A refusal of the moves themselves (they would not fit the shards' memory) is not continued
    // by a rebalance, which would refuse them the same way.
    if (auto refusal = UsageRefusal(share.error())) {
      return common::Error("join: the shards run and are part of the cluster, but took no slots: " +
                           *refusal);
    }
    return common::Error("join: taking this host's share of the slots: " + share.error().message() +
                         " (the shards run and are part of the cluster; shardctl rebalance" +
                         StateDirHint(request.spec) + " continues the moves)");
  }
  int slots = 0;
  for (const auto& move : share->moves) slots += move.slots;
  ready["share_slots"] = slots;
  ready["share_keys"] = share->report ? share->report->progress.keys_moved : 0;
  return common::Ok();
}

// A deployment that runs already: refused with another spec, else only open moves finished.
Outcome<UpReport> AlreadyRunning(const Existing& existing, UpReport report,
                                 const UpRequest& request, const Access& access) {
  const Spec& spec = request.spec;
  if (existing.kind == Existing::Kind::kDifferent) {
    std::string message = "deployment \"" + spec.name +
                          "\" is running with a different spec (repeat the running spec, or " +
                          "shardctl up" + StateDirHint(spec) +
                          " alone, which keeps it as it runs):";
    for (const auto& difference : existing.differences) message += "\n  " + difference;
    return Failure::Usage(message);
  }
  report.kind = UpReport::Kind::kAlreadyRunning;
  report.running_shards = existing.shards;
  const Plan& plan = report.deployment.plan;
  report.ready["finished_open_slots"] =
      request.dry_run ? 0 : FinishOpenMoves(access, report.dir, plan, request);
  if (!request.dry_run) {
    if (auto shared = TakeShareOfSlots(access, plan, request, report.ready); !shared.ok()) {
      return shared.error();
    }
  }
  return report;
}

// A stopped deployment whose data has another shape than the one asked for: refused before
// anything starts or changes, naming each difference and how to make it live.
Failure OtherShape(const Existing& existing, const Spec& spec) {
  std::string message = "deployment \"" + spec.name +
                        "\" is stopped, and its nodes were formed with another shape; nothing "
                        "was started or changed (resume it as recorded with shardctl up" +
                        StateDirHint(spec) + ", then change it live):";
  for (const auto& difference : existing.differences) message += "\n  " + difference;
  if (existing.recorded) message += "\n  recorded: " + ShapeSummary(*existing.recorded);
  return Failure::Usage(message);
}

// What must hold before anything starts; an adoption starts nothing new, so it is not checked.
Outcome<void> CheckCanStart(const DeploymentDir& dir, const Deployment& deployment) {
  if (auto stray = CheckNoStrayData(dir, deployment); !stray.ok()) {
    return Failure::Usage(stray.error());
  }
  if (auto address = CheckAddressOnHost(deployment.plan.bind, "--bind"); !address.ok()) {
    return Failure::Usage(address.error());
  }
  if (auto ports = CheckPortsFree(deployment); !ports.ok()) return ports.error();
  return {};
}

// `up --foreground`: this process becomes the supervisor; its own lock takes over from up.lock,
// so another `up` sees it rather than waiting for this one.
Outcome<UpReport> RunInForeground(UpReport report, const Existing& existing,
                                  const UpRequest& request, const Access& access, UpLock& lock,
                                  Clock::time_point started) {
  lock.Release();
  std::optional<Failure> failed;
  report.foreground_exit = RunSupervisor(report.dir, [&](const json& event) {
    const std::string kind = event.value("event", "");
    if (kind == "progress" && request.on_progress) request.on_progress(event.value("message", ""));
    if (kind == "failed") {
      failed = Failure(Fault::kRuntime, event.value("error", "start-up failed"));
      // A failed resume leaves the record as it was before this `up`.
      if (existing.recorded) (void)WriteDeployment(report.dir, *existing.recorded);
    }
    if (kind == "ready") {
      // Before the supervisor's loop runs: the share is taken before supervision begins.
      report.ready = event;
      if (auto shared = TakeShareOfSlots(access, report.deployment.plan, request, report.ready);
          !shared.ok()) {
        Warn(request, shared.error().message());
      }
      report.elapsed =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
      if (request.on_ready) request.on_ready(report);
    }
  });
  if (failed) return *failed;
  return report;
}

Outcome<UpReport> RunInBackground(UpReport report, const Existing& existing,
                                  const UpRequest& request, const Access& access,
                                  Clock::time_point started) {
  const bool adopting = existing.kind == Existing::Kind::kAdopt;
  const Deployment& deployment = report.deployment;
  if (request.on_progress) {
    request.on_progress("starting " + std::to_string(deployment.plan.shards.size()) + " shards");
  }
  auto ready = StartSupervisor(
      report.dir, request.spec.name,
      [&request](const std::string& message) {
        if (request.on_progress) request.on_progress(message);
      },
      [&request] {
        if (request.on_tick) request.on_tick();
      });
  if (!ready.ok()) {
    // A failed adoption leaves the running shards as they were.
    if (!adopting) UndoFailedStart(report.dir, deployment, existing.recorded);
    if (StartInterrupted()) {
      return Failure(Fault::kInterrupted, ready.error().message() +
                                              (adopting ? "; the adopted shards run on"
                                                        : "; everything it started was stopped"));
    }
    return common::Error(ready.error().message() +
                         " (supervisor log: " + report.dir.SupervisorLog().string() + ")");
  }
  report.ready = std::move(ready).value();
  // Resumed from data or adopted: a move the previous run left open is finished now.
  if (report.ready.value("resumed", false) || report.ready.value("adopted", 0) > 0) {
    report.ready["finished_open_slots"] =
        FinishOpenMoves(access, report.dir, deployment.plan, request);
  }
  if (auto shared = TakeShareOfSlots(access, deployment.plan, request, report.ready);
      !shared.ok()) {
    return shared.error();
  }
  report.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return report;
}

// From the lock on: what runs decides between nothing to do, a refusal, and a start.
Outcome<UpReport> StartOrKeep(UpReport report, const UpRequest& request, const Access& access,
                              std::optional<UpLock>& lock, Clock::time_point started) {
  const DeploymentDir& dir = report.dir;
  const Deployment& deployment = report.deployment;
  Existing existing = FindExisting(dir, deployment, StateDirHint(request.spec));
  if (existing.kind == Existing::Kind::kDifferent || existing.kind == Existing::Kind::kRunning) {
    return AlreadyRunning(existing, std::move(report), request, access);
  }
  if (existing.kind == Existing::Kind::kOtherShape) return OtherShape(existing, request.spec);
  // Resumed or adopted, shards that ran another engine than the deployment's keep it.
  if (existing.recorded) {
    for (const auto& [index, engine] : existing.recorded->shard_engines) {
      RecordShardEngine(report.deployment, index, engine);
    }
  }
  const bool adopting = existing.kind == Existing::Kind::kAdopt;
  for (const auto& warning : deployment.plan.warnings) Warn(request, warning);
  if (adopting) {
    Warn(request, "deployment \"" + request.spec.name +
                      "\" has running shards but no supervisor: starting one to adopt them");
  } else if (auto checked = CheckCanStart(dir, deployment); !checked.ok()) {
    RemoveUnusedStateDir(dir);
    return checked.error();
  }
  if (request.dry_run) {
    report.kind = UpReport::Kind::kDryRun;
    return report;
  }
  // Adopted shards serve what they loaded at their start, not necessarily the files on disk now.
  if (auto recorded = adopting ? common::Ok() : RecordTlsInUse(dir, deployment.tls);
      !recorded.ok()) {
    return recorded.error();
  }
  if (auto written = WriteDeployment(dir, deployment); !written.ok()) return written.error();
  if (request.foreground) {
    return RunInForeground(std::move(report), existing, request, access, *lock, started);
  }
  return RunInBackground(std::move(report), existing, request, access, started);
}

}  // namespace

Outcome<UpReport> Up(const UpRequest& request) {
  const auto started = Clock::now();
  UpReport report{.dir = DirOf(request.spec)};
  auto decided = request.as_recorded
                     ? RecordedDeployment(report.dir, request.spec, report.host_notes)
                     : DecideDeployment(request.spec, report.host_notes);
  if (!decided.ok()) return decided.error();
  report.deployment = std::move(decided).value();
  // Loads the TLS files now, so a bad one is named before anything starts.
  auto access = AccessFor(report.deployment);
  if (!access.ok()) return Failure::Usage(access.error());
  std::optional<UpLock> lock;
  if (!request.dry_run) {
    auto locked = LockStateDir(report.dir, request);
    if (!locked.ok()) return locked.error();
    lock.emplace(std::move(locked).value());
  }
  return StartOrKeep(std::move(report), request, *access, lock, started);
}

}  // namespace shardctl::launcher
