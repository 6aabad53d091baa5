#include "launcher/ops/top.h"

#include <algorithm>
#include <ctime>
#include <functional>

#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

struct SortName {
  TopSort sort;
  std::string_view name;
  char key;
};

constexpr SortName kSorts[] = {
    {TopSort::kShard, "shard", 's'},     {TopSort::kOps, "ops", 'o'},
    {TopSort::kMemory, "mem", 'm'},      {TopSort::kCpu, "cpu", 'c'},
    {TopSort::kClients, "clients", 'l'}, {TopSort::kHits, "hits", 'h'},
};

double Seconds(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

std::optional<double> HitRatio(uint64_t hits, uint64_t misses) {
  if (hits + misses == 0) return std::nullopt;
  return static_cast<double>(hits) / static_cast<double>(hits + misses);
}

// The rates of one shard between `before` (may be null) and `now`, `seconds` apart.
void FillRates(TopRow& row, const ShardInfo* before, std::optional<double> cpu_before,
               const ShardInfo& now, std::optional<double> cpu_now, double seconds) {
  const bool compare = before != nullptr && before->up && seconds > 0 &&
                       now.total_commands_processed >= before->total_commands_processed;
  if (!compare) {
    row.ops_per_second = static_cast<double>(now.instantaneous_ops_per_sec);
    row.hit_ratio = HitRatio(now.keyspace_hits, now.keyspace_misses);
  } else {
    row.ops_per_second =
        static_cast<double>(now.total_commands_processed - before->total_commands_processed) /
        seconds;
    if (now.keyspace_hits >= before->keyspace_hits &&
        now.keyspace_misses >= before->keyspace_misses) {
      row.hit_ratio = HitRatio(now.keyspace_hits - before->keyspace_hits,
                               now.keyspace_misses - before->keyspace_misses);
    }
  }
  if (cpu_before && cpu_now && seconds > 0 && *cpu_now >= *cpu_before) {
    row.cpu_percent = (*cpu_now - *cpu_before) / seconds * 100.0;
  }
}

}  // namespace

TopSampler::TopSampler(Access access, DeploymentDir dir, const Deployment& deployment,
                       std::chrono::milliseconds timeout)
    : access_(std::move(access)),
      dir_(std::move(dir)),
      host_(deployment.plan.bind),
      timeout_(timeout),
      connections_(deployment.plan.shards.size()) {
  for (const auto& shard : deployment.plan.shards) {
    ports_.push_back(shard.port);
    indices_.push_back(shard.index);
  }
}

TopSample TopSampler::Sample() {
  TopSample sample;
  sample.at = std::chrono::steady_clock::now();
  sample.unix_seconds = static_cast<int64_t>(std::time(nullptr));
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (!connections_[i]) {
      auto connection = RedisConnection::Connect(access_, host_, ports_[i], timeout_);
      if (connection.ok()) connections_[i].emplace(std::move(connection).value());
    }
    ShardInfo info;
    if (connections_[i]) {
      auto answered = QueryShardInfo(*connections_[i]);
      if (answered.ok()) {
        info = std::move(answered).value();
      } else {
        connections_[i].reset();
      }
    }
    sample.shards.push_back(std::move(info));
    auto process = ReadProcessId(dir_.ShardPidFile(indices_[i]));
    sample.cpu_seconds.push_back(process ? ReadCpuSeconds(*process) : std::nullopt);
  }
  return sample;
}

std::vector<TopRow> TopRows(const Deployment& deployment, const TopSample* previous,
                            const TopSample& current) {
  std::vector<TopRow> rows;
  const double seconds = previous ? Seconds(current.at - previous->at) : 0;
  for (size_t i = 0; i < deployment.plan.shards.size() && i < current.shards.size(); ++i) {
    const ShardPlan& plan = deployment.plan.shards[i];
    const ShardInfo& now = current.shards[i];
    TopRow row{.shard = plan.index, .port = plan.port, .role = RoleName(plan.role), .up = now.up};
    if (now.up) {
      const bool comparable = previous && i < previous->shards.size();
      FillRates(row, comparable ? &previous->shards[i] : nullptr,
                comparable ? previous->cpu_seconds[i] : std::nullopt, now, current.cpu_seconds[i],
                seconds);
      row.role = now.role;
      row.used_memory = now.used_memory;
      row.maxmemory = now.maxmemory;
      row.clients = now.connected_clients;
      row.forks = now.total_forks;
      row.last_fork_usec = now.latest_fork_usec;
      if (now.rdb_last_save_time > 0 && current.unix_seconds >= now.rdb_last_save_time) {
        row.last_save_age_seconds = current.unix_seconds - now.rdb_last_save_time;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string_view TopSortName(TopSort sort) {
  for (const auto& entry : kSorts) {
    if (entry.sort == sort) return entry.name;
  }
  return "shard";
}

std::optional<TopSort> ParseTopSort(std::string_view name) {
  for (const auto& entry : kSorts) {
    if (entry.name == name) return entry.sort;
  }
  return std::nullopt;
}

std::optional<TopSort> TopSortForKey(char key) {
  for (const auto& entry : kSorts) {
    if (entry.key == key) return entry.sort;
  }
  return std::nullopt;
}

void SortTopRows(std::vector<TopRow>& rows, TopSort sort) {
  std::function<double(const TopRow&)> key;
  switch (sort) {
    case TopSort::kShard:
      key = [](const TopRow&) { return 0.0; };
      break;
    case TopSort::kOps:
      key = [](const TopRow& row) { return row.ops_per_second; };
      break;
    case TopSort::kMemory:
      key = [](const TopRow& row) { return static_cast<double>(row.used_memory); };
      break;
    case TopSort::kCpu:
      key = [](const TopRow& row) { return row.cpu_percent.value_or(-1); };
      break;
    case TopSort::kClients:
      key = [](const TopRow& row) { return static_cast<double>(row.clients); };
      break;
    case TopSort::kHits:
      key = [](const TopRow& row) { return row.hit_ratio.value_or(-1); };
      break;
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const TopRow& a, const TopRow& b) {
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return a.shard < b.shard;
  });
}

Outcome<TopFeed> TopFeed::Open(const Spec& spec, std::chrono::milliseconds shard_timeout) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  TopSampler sampler(target->access, target->dir, *target->deployment, shard_timeout);
  return TopFeed(std::move(*target->deployment), std::move(sampler));
}

std::vector<TopRow> TopFeed::Next() {
  TopSample sample = sampler_.Sample();
  auto rows = TopRows(deployment_, previous_ ? &*previous_ : nullptr, sample);
  previous_ = std::move(sample);
  return rows;
}

}  // namespace shardctl::launcher
