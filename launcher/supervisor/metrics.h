// What the supervisor's Prometheus /metrics says, as text. Pure: the numbers come in, the
// exposition text comes out (unit-tested against promtool's rules).
//
//   MetricsPoller (thread: INFO, CLUSTER INFO/NODES, /proc every second) ─┐
//   the loop (restarts per shard) ─────────────────────────────────────────┼─▶ DeploymentMetrics
//   ForkScheduler (forks running, time due shards waited) ────────────────┘        │
//                                                        RenderSupervisorMetrics ◀─┘
//
// Every shard's series carry the labels shard, port, role and numa_node; shardctl_shard_info adds
// the host and CPUs, for joins (`* on (instance, shard) group_left (host) shardctl_shard_info`).
// The redis_* names and meanings are redis_exporter's, so dashboards built for it work unchanged;
// shardctl_* are ours.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/shard_info.h"
#include "launcher/cluster/slot_stats.h"
#include "launcher/state/import_progress.h"

namespace shardctl::launcher {

// One shard: where the plan put it, what the last poll saw, what the supervisor did to it.
struct ShardMetrics {
  int index = 0;
  int port = 0;
  int numa_node = 0;
  std::string planned_role = "primary";  // the label while the shard does not answer
  ShardInfo info;                        // the last poll; info.up == false: no answer
  std::optional<double> cpu_seconds;     // /proc of the running process; nullopt: none runs
  int restarts = 0;
  std::vector<int> cpus;  // the CPUs the plan pinned it to
  // A primary's fraction of the commands the primaries processed over the last poll interval.
  std::optional<double> load_share;
};

// One of the slots that took the most CPU over the last poll interval, with its counters as the
// owner's CLUSTER SLOT-STATS gave them (cumulative while cluster-slot-stats-enabled is yes).
struct SlotMetrics {
  int slot = 0;
  int shard = 0;
  SlotStat stat;
  std::optional<double> cpu_share;  // of what the primaries spent executing commands, 0..1
  friend bool operator==(const SlotMetrics&, const SlotMetrics&) = default;
};

struct DeploymentMetrics {
  std::string name;
  std::string engine;  // "redis" / "valkey"
  std::string engine_version;
  // Where the shards run, for dashboards that add up per host: the machine's hostname and the
  // address the cluster knows them by ("" when the cluster decides).
  std::string host;
  std::string address;
  std::vector<ShardMetrics> shards;  // by index
  // From the fork scheduler (persistence rdb/aof); without one, the shards forking now.
  std::optional<int> forks_in_progress;
  double fork_wait_seconds = 0;              // time due shards waited for the fork limit or memory
  std::optional<LiveImportProgress> import;  // an `import --live` into the deployment
  std::vector<SlotMetrics> hot_slots;        // empty unless the engine counts per-slot CPU
};

// What `status --json` shows of the slots: {"source": "slot-stats" (the primaries count per-slot
// CPU) or "unavailable", "hot": [{"slot", "shard", "cpu_share", "keys", "network_bytes_in",
// "network_bytes_out"}]}, the byte counts cumulative as SLOT-STATS gives them.
nlohmann::json SlotsStatusJson(bool slot_stats, const std::vector<SlotMetrics>& hot);

// The whole /metrics body.
std::string RenderSupervisorMetrics(const DeploymentMetrics& metrics);

}  // namespace shardctl::launcher
