// What `shardctl top` shows, below the command line: every shard sampled directly over RESP (so it
// works whether or not the supervisor runs) plus the CPU time of its process from /proc, and the
// rates between two samples. Nothing here prints.
//
//   TopSampler::Sample() (I/O) ──▶ TopSample ──┐
//                     the previous TopSample ──┴▶ TopRows() (pure) ──▶ SortTopRows() ──▶ rows
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/shard_info.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// Every shard at one moment.
struct TopSample {
  std::chrono::steady_clock::time_point at;
  int64_t unix_seconds = 0;
  std::vector<ShardInfo> shards;                   // by index; up == false: no answer
  std::vector<std::optional<double>> cpu_seconds;  // by index; nullopt: no live process
};

// Samples a deployment's shards, keeping one connection per shard between samples. Each connect
// and reply is bounded by `timeout`, so a sample takes at most shards × timeout.
class TopSampler {
 public:
  TopSampler(Access access, DeploymentDir dir, const Deployment& deployment,
             std::chrono::milliseconds timeout);
  TopSample Sample();

 private:
  Access access_;
  DeploymentDir dir_;
  std::string host_;
  std::vector<int> ports_;
  std::vector<int> indices_;  // shard index by position (gaps after scale in): pid files
  std::chrono::milliseconds timeout_;
  std::vector<std::optional<RedisConnection>> connections_;
};

// One row of the table.
struct TopRow {
  int shard = 0;
  int port = 0;
  std::string role;  // the live role; the plan's while the shard does not answer
  bool up = false;
  double ops_per_second = 0;
  std::optional<double> hit_ratio;  // 0..1 over the interval; nullopt without reads
  uint64_t used_memory = 0;
  uint64_t maxmemory = 0;
  uint64_t clients = 0;
  std::optional<double> cpu_percent;  // of one CPU, over the interval
  uint64_t forks = 0;                 // total_forks
  uint64_t last_fork_usec = 0;        // how long the last fork() took
  std::optional<int64_t> last_save_age_seconds;
};

// Pure: the rows for `current`; rates come from `previous` (a sample of the same deployment),
// or from Redis' own instantaneous_ops_per_sec and the totals so far when there is none.
std::vector<TopRow> TopRows(const Deployment& deployment, const TopSample* previous,
                            const TopSample& current);

enum class TopSort { kShard, kOps, kMemory, kCpu, kClients, kHits };

// "shard", "ops", "mem", "cpu", "clients", "hits".
std::string_view TopSortName(TopSort sort);
std::optional<TopSort> ParseTopSort(std::string_view name);
// The key that picks each sort in the live view: s, o, m, c, l, h.
std::optional<TopSort> TopSortForKey(char key);

// Pure: busiest first (shard order for kShard, and to break ties).
void SortTopRows(std::vector<TopRow>& rows, TopSort sort);

// `shardctl top`'s data: one refresh after another, each a sample's rows against the previous
// one (the first has no rates yet).
class TopFeed {
 public:
  // Loads the deployment `spec` names; errors as LoadTarget's.
  static Outcome<TopFeed> Open(const Spec& spec, std::chrono::milliseconds shard_timeout);

  std::vector<TopRow> Next();
  const std::string& name() const { return deployment_.plan.name; }

 private:
  TopFeed(Deployment deployment, TopSampler sampler)
      : deployment_(std::move(deployment)), sampler_(std::move(sampler)) {}

  Deployment deployment_;
  TopSampler sampler_;
  std::optional<TopSample> previous_;
};

}  // namespace shardctl::launcher
