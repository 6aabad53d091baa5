#include "launcher/ops/save.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

constexpr auto kSaveTimeout = std::chrono::minutes(30);

ForkCount Observe(const std::string& host, int port) {
  ForkCount count;
  auto connection = RedisConnection::Connect(host, port, std::chrono::seconds(1));
  if (!connection.ok()) return count;
  auto replies = connection->Pipeline({{"INFO", "stats"}, {"INFO", "persistence"}});
  if (!replies.ok() || !(*replies)[0].ok() || !(*replies)[1].ok()) return count;
  count.forks = std::atoll(InfoField(*(*replies)[0], "total_forks").c_str());
  const std::string& persistence = *(*replies)[1];
  count.forking = InfoField(persistence, "rdb_bgsave_in_progress") == "1" ||
                  InfoField(persistence, "aof_rewrite_in_progress") == "1";
  count.last_status = InfoField(persistence, "aof_enabled") == "1"
                          ? InfoField(persistence, "aof_last_bgrewrite_status")
                          : InfoField(persistence, "rdb_last_bgsave_status");
  return count;
}

}  // namespace

std::vector<ForkCount> ObserveForks(const Plan& plan) {
  std::vector<ForkCount> counts;
  for (const auto& shard : plan.shards) counts.push_back(Observe(plan.bind, shard.port));
  return counts;
}

common::Result<SaveReport> WaitForSaves(const Plan& plan, const std::vector<ForkCount>& before,
                                        std::chrono::steady_clock::time_point started,
                                        const SaveProgress& progress) {
  SaveReport report;
  std::vector<std::string> statuses(plan.shards.size());
  for (;;) {
    size_t done = 0;
    int forking = 0;
    for (size_t i = 0; i < plan.shards.size(); ++i) {
      auto now = Observe(plan.bind, plan.shards[i].port);
      forking += now.forking;
      if (now.forks > before[i].forks && !now.forking) {
        ++done;
        statuses[i] = now.last_status;
      }
    }
    report.most_forks_seen = std::max(report.most_forks_seen, forking);
    if (progress) progress(done, plan.shards.size(), forking);
    if (done == plan.shards.size()) break;
    if (std::chrono::steady_clock::now() - started > kSaveTimeout) {
      return common::Error("save: " + std::to_string(plan.shards.size() - done) +
                           " shard(s) not saved after 30 minutes (see shardctl logs)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  report.failed = static_cast<int>(std::count_if(statuses.begin(), statuses.end(),
                                                 [](const std::string& s) { return s != "ok"; }));
  return report;
}

}  // namespace shardctl::launcher
