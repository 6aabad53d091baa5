// Polls every shard for the supervisor's /metrics on a thread of its own, so a scrape never waits
// for a shard: each `interval` it asks every shard for INFO, CLUSTER INFO and CLUSTER NODES (one
// round trip over a kept connection, bounded by `timeout`) and reads the CPU time of the process
// its pid file names from /proc, then publishes the whole round at once. The loop's HTTP handler
// only copies the latest round (Latest()) and formats it.
//
// Each primary is also asked for its `kHotSlots` busiest slots by CPU (CLUSTER SLOT-STATS ORDERBY
// cpu-usec LIMIT K, with CONFIG GET cluster-slot-stats-enabled, in the same round trip) where the
// engine has them; the round keeps the K that grew most since the previous round (HottestSlots),
// and each primary's share of the commands the primaries processed since then (LoadShares).
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
#include "launcher/cluster/slot_heat.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/supervisor/metrics.h"

namespace shardctl::launcher {

class MetricsPoller {
 public:
  struct Sample {
    ShardInfo info;                     // info.up == false: the shard did not answer
    std::optional<double> cpu_seconds;  // nullopt: no live process in the pid file
    std::optional<double> load_share;   // a primary's, over the last interval
  };
  // The hottest slots of the last round: `slot_stats` says the primaries count per-slot CPU.
  struct Slots {
    bool slot_stats = false;
    std::vector<SlotMetrics> hot;
  };
  static constexpr size_t kHotSlots = 10;

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
  Slots LatestSlots() const;

 private:
  void Loop();
  std::vector<Sample> PollAll(std::vector<std::optional<RedisConnection>>& connections,
                              SlotReading& reading);
  // Folds one round's per-slot counters into `latest_slots_` against the previous round's.
  void RankSlots(SlotReading reading);

  const SharedAccess& access_;
  std::string host_;
  std::vector<int> ports_;    // by position in the plan
  std::vector<int> indices_;  // the shard index at each position (gaps after scale in)
  DeploymentDir dir_;
  std::chrono::milliseconds interval_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;  // guards latest_ and stopping_
  std::vector<Sample> latest_;
  Slots latest_slots_;
  SlotReading previous_reading_;                   // the poll thread's only
  std::vector<std::optional<uint64_t>> commands_;  // the poll thread's: primaries' last totals
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shardctl::launcher
