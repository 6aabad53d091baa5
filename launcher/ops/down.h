// What `shardctl down` does below the command line: stop everything of a deployment, through its
// supervisor when one answers, else from the pid files; and delete its state on request. Nothing
// here prints.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/leave.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// What StopDeployment stopped, and how.
struct StopReport {
  enum class By {
    kNothing,     // nothing was running
    kSupervisor,  // the supervisor answered "down" (and stopped `stopped` shards)
    kPidFiles,    // shards were left for the pid files (no supervisor answered, or it was stuck)
  };
  int stopped = 0;  // shards stopped, by the supervisor and from the pid files together
  By by = By::kNothing;
  bool supervisor_unresponsive = false;  // it held its lock but did not answer: killed by pid
};

// Stops the deployment in `dir`. A live supervisor is asked first, even when there is no record
// (it owns the shards), and waited for: one that does not exit within 15 s is stopped by its pid,
// and one that is stopped (SIGSTOP) or does not answer a ping within 10 s (hung) is stopped by
// its pid at once.
// Then whatever the pid files of `recorded` still name (the proxy, a dead or stuck supervisor's
// shards) is stopped, saving first with the rdb profile unless `save_at_shutdown` is false (down
// --no-save: a shard that cannot save would refuse to exit until killed). Safe to repeat: a second
// call finds nothing running.
StopReport StopDeployment(const Access& access, const DeploymentDir& dir,
                          const std::optional<Deployment>& recorded, bool save_at_shutdown = true);

// Deletes the deployment's directory, state and data. Returns false when there was none; the error
// names the directory.
common::Result<bool> PurgeDeployment(const DeploymentDir& dir);

// `shardctl down`: one entry for every step.
//
//   LoadTarget (no record is fine: down is idempotent)
//   ─▶ --leave: HandOverToCluster (ops/leave.h) ── fails: nothing stopped
//   ─▶ StopDeployment ─▶ --leave: ForgetLeftNodes (a warning when it fails)
//   ─▶ --purge or --leave: PurgeDeployment
struct DownRequest {
  Spec spec;
  bool leave = false;    // hand everything to the other hosts first, then stop and purge
  bool purge = false;    // delete the state and data after the stop
  bool no_save = false;  // persistence rdb: stop without saving first (ops/stop_save.h)
  std::function<void(const std::string&)> on_progress;  // --leave's steps and slot moves
  std::function<void(const std::string&)> on_warning;
  // Set by Ctrl-C: while the primaries are saved, the down stops there (writes resumed, nothing
  // stopped); once the stop is asked for, it is seen through.
  const std::atomic<bool>* interrupted = nullptr;
};

struct DownReport {
  StopReport stop;
  bool purged = false;
  std::optional<LeaveResult> left;  // --leave, with a record
};

// The slots --leave moved to the other hosts' primaries.
int MovedSlots(const LeaveResult& left);

// A --leave refused by what the cluster is (no other host to take over) is a usage fault; every
// failure before the stop leaves everything running.
Outcome<DownReport> Down(const DownRequest& request);

}  // namespace shardctl::launcher
