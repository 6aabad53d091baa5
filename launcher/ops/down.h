// What `shardctl down` does below the command line: stop everything of a deployment, through its
// supervisor when one answers, else from the pid files; and delete its state on request. Nothing
// here prints.
#pragma once

#include <optional>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"

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
// shards) is stopped, saving first with the rdb profile. Safe to repeat: a second call finds
// nothing running.
StopReport StopDeployment(const DeploymentDir& dir, const std::optional<Deployment>& recorded);

// Deletes the deployment's directory, state and data. Returns false when there was none; the error
// names the directory.
common::Result<bool> PurgeDeployment(const DeploymentDir& dir);

}  // namespace shardctl::launcher
