// `down` of a deployment that keeps its data in RDB files saves every primary before any shard
// stops, and holds each one's writes from its snapshot until the processes are gone:
//
//   continue every running shard (SIGCONT: a stopped one cannot save)
//   ─▶ each primary: CLIENT PAUSE WRITE, BGSAVE, until it ends ok (ops/shard_snapshot.h),
//      at most fork-limit at once; replicas are not saved (they resync from their primary)
//   ─▶ the pauses renewed every few seconds until this object goes (after the stop)
//
// Left to the save at shutdown alone, a shard whose save failed (a full disk), was stopped, or
// took longer than the stop's grace was killed without its last writes while `down` said it
// stopped. A primary that cannot be saved ends the `down` before anything stops.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

class SavedForStop {
 public:
  // Saves every running primary of `deployment`; the error (exit 1) names the one that could not
  // be saved and what to do, every pause lifted and nothing stopped. `interrupted` (Ctrl-C; may
  // be null) set meanwhile ends it the same way, as Fault::kInterrupted.
  static Outcome<std::unique_ptr<SavedForStop>> Take(
      const Access& access, const DeploymentDir& dir, const Deployment& deployment,
      const std::function<void(const std::string&)>& progress,
      const std::atomic<bool>* interrupted);

  SavedForStop(const Access& access, std::string host);
  SavedForStop(const SavedForStop&) = delete;
  SavedForStop& operator=(const SavedForStop&) = delete;
  // Stops renewing: a pause still in place ends within 10 s, or with its process.
  ~SavedForStop();

 private:
  void Hold(int port);  // renew this port's pause from now on
  void RenewUntilDone();

  const Access& access_;
  const std::string host_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::vector<int> held_;
  std::thread renewer_;
};

}  // namespace shardctl::launcher
