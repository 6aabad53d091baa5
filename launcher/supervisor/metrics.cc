#include "launcher/supervisor/metrics.h"

#include <functional>
#include <set>

#include "common/cpu_list.h"
#include "common/prometheus.h"

namespace shardctl::launcher {
namespace {

using common::MetricLabels;
using common::MetricsWriter;
using common::MetricType;

// A shard's value for one family; nullopt leaves the shard out (it did not answer).
using ShardValue = std::function<std::optional<double>(const ShardMetrics&)>;

MetricLabels ShardLabels(const ShardMetrics& shard) {
  return {{"shard", std::to_string(shard.index)},
          {"port", std::to_string(shard.port)},
          {"role", shard.info.up ? shard.info.role : shard.planned_role},
          {"numa_node", std::to_string(shard.numa_node)}};
}

void PerShard(MetricsWriter& out, const DeploymentMetrics& metrics, std::string_view name,
              MetricType type, std::string_view help, const ShardValue& value) {
  out.Family(name, type, help);
  for (const auto& shard : metrics.shards) {
    if (auto sample = value(shard)) out.Sample(ShardLabels(shard), *sample);
  }
}

// The INFO field `field` of an answering shard.
ShardValue Answered(uint64_t ShardInfo::*field) {
  return [field](const ShardMetrics& shard) -> std::optional<double> {
    if (!shard.info.up) return std::nullopt;
    return static_cast<double>(shard.info.*field);
  };
}

void WriteRedisExporterFamilies(MetricsWriter& out, const DeploymentMetrics& metrics) {
  PerShard(out, metrics, "redis_up", MetricType::kGauge,
           "1 when the shard answered the supervisor's last poll, else 0.",
           [](const ShardMetrics& shard) { return shard.info.up ? 1.0 : 0.0; });
  struct Field {
    std::string_view name;
    MetricType type;
    std::string_view help;
    uint64_t ShardInfo::*field;
  };
  const Field fields[] = {
      {"redis_memory_used_bytes", MetricType::kGauge, "INFO used_memory.", &ShardInfo::used_memory},
      {"redis_memory_max_bytes", MetricType::kGauge, "INFO maxmemory (the shard's cap).",
       &ShardInfo::maxmemory},
      {"redis_connected_clients", MetricType::kGauge, "INFO connected_clients.",
       &ShardInfo::connected_clients},
      {"redis_commands_processed_total", MetricType::kCounter, "INFO total_commands_processed.",
       &ShardInfo::total_commands_processed},
      {"redis_keyspace_hits_total", MetricType::kCounter, "INFO keyspace_hits.",
       &ShardInfo::keyspace_hits},
      {"redis_keyspace_misses_total", MetricType::kCounter, "INFO keyspace_misses.",
       &ShardInfo::keyspace_misses},
      {"redis_evicted_keys_total", MetricType::kCounter, "INFO evicted_keys.",
       &ShardInfo::evicted_keys},
      {"redis_rdb_last_cow_size_bytes", MetricType::kGauge,
       "INFO rdb_last_cow_size: bytes copied on write during the last RDB fork.",
       &ShardInfo::rdb_last_cow_size},
  };
  for (const Field& field : fields) {
    PerShard(out, metrics, field.name, field.type, field.help, Answered(field.field));
  }
  out.Family("redis_db_keys", MetricType::kGauge, "Keys per database (INFO keyspace).");
  for (const auto& shard : metrics.shards) {
    if (!shard.info.up) continue;
    auto dbs = shard.info.db_keys;
    // Redis lists only databases with keys; an empty shard still has db0, with none.
    if (dbs.empty()) dbs.emplace_back("db0", 0);
    for (const auto& [db, keys] : dbs) {
      MetricLabels labels = ShardLabels(shard);
      labels.emplace_back("db", db);
      out.Sample(labels, static_cast<double>(keys));
    }
  }
  out.Family("redis_connected_slave_lag_seconds", MetricType::kGauge,
             "Replication lag of each replica, as its primary reports it (INFO replication).");
  for (const auto& shard : metrics.shards) {
    for (const auto& replica : shard.info.replicas) {
      MetricLabels labels = ShardLabels(shard);
      labels.emplace_back("slave_ip", replica.ip);
      labels.emplace_back("slave_port", std::to_string(replica.port));
      labels.emplace_back("slave_state", replica.state);
      out.Sample(labels, static_cast<double>(replica.lag_seconds));
    }
  }
}

void WriteDeploymentFamilies(MetricsWriter& out, const DeploymentMetrics& metrics) {
  PerShard(out, metrics, "shardctl_shard_restarts_total", MetricType::kCounter,
           "Times the supervisor restarted the shard since it started.",
           [](const ShardMetrics& shard) { return static_cast<double>(shard.restarts); });
  PerShard(out, metrics, "shardctl_shard_cpu_seconds_total", MetricType::kCounter,
           "CPU time (user + system) of the shard's current process, from /proc.",
           [](const ShardMetrics& shard) { return shard.cpu_seconds; });
  int forking = 0;
  bool cluster_ok = !metrics.shards.empty();
  std::set<int> moving;
  for (const auto& shard : metrics.shards) {
    forking += shard.info.forking;
    cluster_ok = cluster_ok && shard.info.up && shard.info.cluster_ok;
    moving.insert(shard.info.moving_slots.begin(), shard.info.moving_slots.end());
  }
  out.Family("shardctl_forks_in_progress", MetricType::kGauge,
             "BGSAVE / AOF rewrite forks running now on the deployment's shards.");
  out.Sample({}, metrics.forks_in_progress.value_or(forking));
  out.Family("shardctl_fork_wait_seconds_total", MetricType::kCounter,
             "Time shards due for a save waited for the fork limit or for free memory.");
  out.Sample({}, metrics.fork_wait_seconds);
  out.Family("shardctl_cluster_state_ok", MetricType::kGauge,
             "1 when every shard answers and reports cluster_state:ok, else 0.");
  out.Sample({}, cluster_ok ? 1 : 0);
  out.Family("shardctl_slot_moves_in_progress", MetricType::kGauge,
             "Slots in MIGRATING or IMPORTING state on any shard.");
  out.Sample({}, static_cast<double>(moving.size()));
  if (const auto& live = metrics.import) {
    const common::MetricLabels source = {{"source", live->source}, {"phase", live->phase}};
    out.Family("shardctl_import_lag_bytes", MetricType::kGauge,
               "import --live: bytes the source wrote that the cluster has not applied yet.");
    out.Sample(source, static_cast<double>(live->lag_bytes));
    out.Family("shardctl_import_lag_seconds", MetricType::kGauge,
               "import --live: how long the oldest write not yet applied has waited.");
    out.Sample(source, static_cast<double>(live->lag_ms) / 1000.0);
    out.Family("shardctl_import_keys_copied", MetricType::kGauge,
               "import --live: keys copied from the source's snapshot.");
    out.Sample(source, static_cast<double>(live->keys));
    out.Family("shardctl_import_commands_applied", MetricType::kGauge,
               "import --live: writes of the source applied since its snapshot.");
    out.Sample(source, static_cast<double>(live->commands));
    out.Family("shardctl_import_commands_co_located", MetricType::kGauge,
               "import --live: of those, writes with keys in several slots run on one primary "
               "through temporary keys.");
    out.Sample(source, static_cast<double>(live->co_located));
  }
  out.Family("shardctl_deployment_info", MetricType::kGauge,
             "Always 1; the labels name the deployment and its engine.");
  out.Sample({{"name", metrics.name},
              {"engine", metrics.engine},
              {"engine_version", metrics.engine_version}},
             1);
}

// Placement as labels of its own series, so the per-shard series keep their labels (and
// redis_exporter's dashboards keep working) while ours can sum per host.
void WriteShardInfo(MetricsWriter& out, const DeploymentMetrics& metrics) {
  out.Family("shardctl_shard_info", MetricType::kGauge,
             "Always 1; the labels say where the shard runs (host, address, NUMA node, CPUs).");
  for (const auto& shard : metrics.shards) {
    out.Sample({{"shard", std::to_string(shard.index)},
                {"port", std::to_string(shard.port)},
                {"numa_node", std::to_string(shard.numa_node)},
                {"cpus", common::FormatCpuList(shard.cpus)},
                {"host", metrics.host},
                {"address", metrics.address}},
               1);
  }
}

// The fork numbers INFO already gives, in redis_exporter's names and units.
void WriteForkTimes(MetricsWriter& out, const DeploymentMetrics& metrics) {
  PerShard(out, metrics, "redis_latest_fork_seconds", MetricType::kGauge,
           "INFO latest_fork_usec: how long the last fork() took, in seconds.",
           [](const ShardMetrics& shard) -> std::optional<double> {
             if (!shard.info.up) return std::nullopt;
             return static_cast<double>(shard.info.latest_fork_usec) / 1e6;
           });
  PerShard(out, metrics, "redis_rdb_last_save_timestamp_seconds", MetricType::kGauge,
           "INFO rdb_last_save_time: when the last snapshot was saved (unix seconds).",
           [](const ShardMetrics& shard) -> std::optional<double> {
             if (!shard.info.up) return std::nullopt;
             return static_cast<double>(shard.info.rdb_last_save_time);
           });
}

void WriteSlotFamilies(MetricsWriter& out, const DeploymentMetrics& metrics) {
  out.Family("shardctl_primary_load_share", MetricType::kGauge,
             "The primary's fraction of the commands all primaries processed over the last poll "
             "interval (INFO total_commands_processed).");
  for (const auto& shard : metrics.shards) {
    if (shard.load_share) out.Sample({{"shard", std::to_string(shard.index)}}, *shard.load_share);
  }
  if (metrics.hot_slots.empty()) return;
  const auto labels = [](const SlotMetrics& slot) {
    return MetricLabels{{"slot", std::to_string(slot.slot)}, {"shard", std::to_string(slot.shard)}};
  };
  out.Family("shardctl_slot_cpu_seconds_total", MetricType::kCounter,
             "CPU its commands took (CLUSTER SLOT-STATS cpu-usec), for the slots that took the "
             "most over the last poll interval.");
  for (const auto& slot : metrics.hot_slots) {
    out.Sample(labels(slot), static_cast<double>(slot.stat.cpu_usec) / 1e6);
  }
  out.Family("shardctl_slot_keys", MetricType::kGauge, "Keys in the slot (CLUSTER SLOT-STATS).");
  for (const auto& slot : metrics.hot_slots) {
    out.Sample(labels(slot), static_cast<double>(slot.stat.keys));
  }
  out.Family("shardctl_slot_network_bytes_total", MetricType::kCounter,
             "Bytes its requests (in) and replies (out) took (CLUSTER SLOT-STATS).");
  for (const auto& slot : metrics.hot_slots) {
    MetricLabels in = labels(slot), out_labels = labels(slot);
    in.emplace_back("direction", "in");
    out_labels.emplace_back("direction", "out");
    out.Sample(in, static_cast<double>(slot.stat.bytes_in));
    out.Sample(out_labels, static_cast<double>(slot.stat.bytes_out));
  }
}

}  // namespace

nlohmann::json SlotsStatusJson(bool slot_stats, const std::vector<SlotMetrics>& hot) {
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& slot : hot) {
    slots.push_back({{"slot", slot.slot},
                     {"shard", slot.shard},
                     {"cpu_share", slot.cpu_share ? nlohmann::json(*slot.cpu_share) : nullptr},
                     {"keys", slot.stat.keys},
                     {"network_bytes_in", slot.stat.bytes_in},
                     {"network_bytes_out", slot.stat.bytes_out}});
  }
  return {{"source", slot_stats ? "slot-stats" : "unavailable"}, {"hot", std::move(slots)}};
}

std::string RenderSupervisorMetrics(const DeploymentMetrics& metrics) {
  MetricsWriter out;
  WriteRedisExporterFamilies(out, metrics);
  WriteDeploymentFamilies(out, metrics);
  WriteShardInfo(out, metrics);
  WriteForkTimes(out, metrics);
  WriteSlotFamilies(out, metrics);
  return out.text();
}

}  // namespace shardctl::launcher
