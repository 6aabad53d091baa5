// `shardctl up`: one entry that owns every step, from the spec to a supervised, healthy cluster.
//
//   spec ─▶ decide the record (host, plan, engine, proxy, metrics, password, TLS), or take the
//   │       recorded one (`up --name N` alone)
//   ├─▶ up.lock ─▶ what runs already ─┬─ same spec: finish open moves, take the share; done
//   │                                 ├─ other spec / other shape of the data: refused
//   │                                 └─ none / resume / adopt ─▶ checks (stray data, address,
//   │                                    ports) ─▶ dry run stops here
//   └─▶ write the record ─▶ supervisor (a child, or this process with --foreground) ─▶ ready
//        ─▶ finish moves left open ─▶ --join: take this host's share of the slots
//
// The steps themselves are in ops/up_steps.h; nothing here prints.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct UpReport;

struct UpRequest {
  Spec spec;
  // Only --name / --state-dir were given: resume or adopt the deployment as recorded, whatever
  // shape `scale` gave it (a fresh default one when nothing is recorded).
  bool as_recorded = false;
  bool dry_run = false;
  bool foreground = false;  // this process becomes the supervisor
  // The in-place progress line, and a tick while nothing new happens.
  std::function<void(const std::string&)> on_progress;
  std::function<void()> on_tick;
  // A notice of `up` itself ("waiting for another shardctl up"), and warnings (the plan's, an
  // adoption, moves that could not be finished).
  std::function<void(const std::string&)> on_notice;
  std::function<void(const std::string&)> on_warning;
  // --foreground: once the shards serve, before this process supervises them until a stop.
  std::function<void(const UpReport&)> on_ready;
};

struct UpReport {
  enum class Kind {
    kStarted,         // started, resumed or adopted: `ready` says which
    kAlreadyRunning,  // the same spec runs supervised: nothing started
    kDryRun,          // checked, nothing started
  };
  Kind kind = Kind::kStarted;
  Deployment deployment;
  DeploymentDir dir;
  std::vector<std::string> host_notes;  // what limited or reserved the host's CPUs (dry run)
  size_t running_shards = 0;            // kAlreadyRunning
  // The supervisor's "ready" event (spawn_ms, ping_ms, formation_ms, total_ms, supervisor_pid,
  // adopted, restarted, resumed, cluster_state, proxy_port) with finished_open_slots,
  // share_slots and share_keys added; kAlreadyRunning: those three only.
  nlohmann::json ready = nlohmann::json::object();
  std::chrono::milliseconds elapsed{0};  // the whole command until ready
  int foreground_exit = 0;               // --foreground: the supervisor's exit code
};

// Runs `shardctl up`. Failures: a wrong spec, or a refused start (another spec runs, the data has
// another shape, stray data, the address not on this host) are usage faults; a taken port, a
// supervisor that fails to start, slot moves that fail are runtime faults. A refused or failed
// start leaves nothing behind (no process, no record, no new state directory).
Outcome<UpReport> Up(const UpRequest& request);

}  // namespace shardctl::launcher
