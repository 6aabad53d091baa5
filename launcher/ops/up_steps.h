// The steps of `shardctl up` (ops/up.h runs them in this order):
//
//   ResolveProxy ─▶ UpLock::Take ─▶ FindExisting ─┬─ running, same spec: nothing to do
//                                                 ├─ running, other spec: refuse (the differences)
//                                                 ├─ stopped, other shape: refuse (the differences
//                                                 │  and the live command for each)
//                                                 └─ none / resume / adopt ─▶ CheckNoStrayData,
//                                                    CheckPortsFree (fresh starts only)
//   ─▶ WriteDeployment (state/) ─▶ StartSupervisor: fork `shardctl supervise`, read its events
//                                   └─ failed ─▶ UndoFailedStart
//
// Nothing here prints: progress goes to a callback and results come back as values.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/supervisor/shards.h"

namespace shardctl::launcher {

// The proxy part of the deployment record (`--proxy-port`, `--proxy-threads`,
// `--proxy-read-from`): the port must be none of the shards' and the shardproxy binary must exist.
// Errors name the flag and the fix (usage errors).
common::Result<ProxyConfig> ResolveProxy(const Spec& spec, const Plan& plan);

// The metrics part of the deployment record (`--metrics-port`, `--metrics-bind`): the supervisor's
// port must be none of the shards', the proxy's or the proxy's metrics port. `proxy` is what
// ResolveProxy made. Errors name the flag and the fix (usage errors).
common::Result<MetricsConfig> ResolveMetrics(const Spec& spec, const Plan& plan,
                                             const ProxyConfig& proxy);

// What the state dir shows about a deployment before `up` starts it.
struct ExistingFacts {
  std::optional<Deployment> recorded;  // deployment.json, when present and readable
  bool supervised = false;             // a live supervisor holds the deployment's lock
  bool live_shards = false;            // a pid file names a running shard
};

// What `up` must do about what it found.
struct Existing {
  enum class Kind {
    kNone,        // nothing runs (unreadable leftovers included): start afresh
    kAdopt,       // the same spec runs without a supervisor: start one to adopt the shards
    kRunning,     // the same spec runs supervised: nothing to do
    kDifferent,   // another spec runs: refuse, listing `differences`
    kResume,      // nothing runs, but a record (and the shards' data) is there: resume it
    kOtherShape,  // nothing runs, and the data has another shape: refuse, listing `differences`
  };
  Kind kind = Kind::kNone;
  // kDifferent: DiffDeployments(recorded, requested); kOtherShape: ShapeDifferences.
  std::vector<std::string> differences;
  size_t shards = 0;                   // kRunning: shards of the running deployment
  std::optional<Deployment> recorded;  // the record found, put back if a resume fails
};

// Pure: decides what `up` of `requested` does given the facts. `target` (" --name N
// --state-dir D") goes into the commands the differences name.
Existing ClassifyExisting(const ExistingFacts& facts, const Deployment& requested,
                          const std::string& target = "");

// Reads the facts from `dir` (deployment.json, supervisor lock, pid files) and classifies them.
Existing FindExisting(const DeploymentDir& dir, const Deployment& requested,
                      const std::string& target = "");

// A deployment without persistence starts empty, so data files an earlier run with persistence
// left in the shard directories are refused rather than loaded or later overwritten. The error
// names the file and the fix (a usage error).
common::Status CheckNoStrayData(const DeploymentDir& dir, const Deployment& deployment);

// Every shard's client and bus port, then the proxy's, must be bindable on the plan's address,
// and the metrics ports on the metrics address. The error lists the taken ports and the fix (a
// runtime error).
common::Status CheckPortsFree(const Deployment& deployment);

// --tls-also-plain's plain ports against --proxy-port, --metrics-port and --proxy-metrics-port
// (a usage error: a shard would take the port first and the other would never bind).
common::Status PlainPortClash(const Deployment& deployment);

// The deployment's up.lock, held while this object lives (or until Release). It serialises `up`s
// of one deployment (a retrying script, systemd and an operator at once): the second waits for the
// first to finish, then finds the deployment running and changes nothing. The descriptor is
// close-on-exec, so the supervisor never inherits the lock.
class UpLock {
 public:
  // Takes the lock, waiting up to 2 minutes for another `up`; `progress` hears once that it waits.
  static common::Result<UpLock> Take(const DeploymentDir& dir, const Progress& progress);
  UpLock(UpLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UpLock& operator=(UpLock&& other) noexcept;
  UpLock(const UpLock&) = delete;
  UpLock& operator=(const UpLock&) = delete;
  ~UpLock() { Release(); }

  // Lets another `up` in (a foreground supervisor's own lock takes over from here).
  void Release();

 private:
  explicit UpLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Starts `shardctl supervise` for the deployment `name` recorded in `dir`, in its own session,
// and reads its start-up events: "progress" messages go to `progress`, and `waiting` (if set) is
// called every 200 ms between events (to redraw a progress line); returns the "ready" event
// (timings, supervisor_pid, adopted, restarted, cluster_state, proxy_port) or the "failed" event's
// error. Until then SIGINT and SIGTERM are passed on to the supervisor, which stops what it started
// and reports "failed". When this returns an error, the supervisor has exited.
common::Result<nlohmann::json> StartSupervisor(const DeploymentDir& dir, const std::string& name,
                                               const Progress& progress,
                                               const std::function<void()>& waiting = {});

// Whether SIGINT or SIGTERM came while StartSupervisor waited (the start it failed was stopped).
bool StartInterrupted();

// After a failed start: stops the shards the pid files still name, and puts `previous` back as
// the deployment record (a failed resume leaves the record as it was), or removes the record of a
// failed fresh start. Does nothing when a supervisor holds the lock: a concurrent `up` won the
// race, and the shards and the record are its own, not leftovers of ours.
void UndoFailedStart(const DeploymentDir& dir, const Deployment& deployment,
                     const std::optional<Deployment>& previous);

}  // namespace shardctl::launcher
