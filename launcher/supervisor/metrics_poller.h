// Polls every shard for the supervisor's /metrics on a thread of its own, so a scrape never waits
// for a shard: each `interval` it asks every shard for INFO, CLUSTER INFO and CLUSTER NODES (one
// round trip over a kept connection, bounded by `timeout`) and reads the CPU time of the process
// its pid file names from /proc, then publishes the whole round at once. The loop's HTTP handler
// only copies the latest round (Latest()) and formats it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "launcher/cluster/access.h"
#include "launcher/cluster/shard_info.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

class MetricsPoller {
 public:
  struct Sample {
    ShardInfo info;                     // info.up == false: the shard did not answer
    std::optional<double> cpu_seconds;  // nullopt: no live process in the pid file
  };

  // Polls the plan's shards every `interval` (each reply bounded by `timeout`), connecting with
  // what `access` holds at the time (it must outlive the poller).
  MetricsPoller(const SharedAccess& access, const Plan& plan, DeploymentDir dir,
                std::chrono::milliseconds interval, std::chrono::milliseconds timeout);
  ~MetricsPoller();  // stops and joins the thread
  MetricsPoller(const MetricsPoller&) = delete;
  MetricsPoller& operator=(const MetricsPoller&) = delete;

  void Start();
  void Stop();

  // The last complete round, by position in the plan (all down before the first round ends).
  // Any thread.
  std::vector<Sample> Latest() const;

 private:
  void Loop();
  std::vector<Sample> PollAll(std::vector<std::optional<RedisConnection>>& connections);

  const SharedAccess& access_;
  std::string host_;
  std::vector<int> ports_;    // by position in the plan
  std::vector<int> indices_;  // the shard index at each position (gaps after scale in)
  DeploymentDir dir_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;  // guards latest_ and stopping_
  std::vector<Sample> latest_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shardctl::launcher
