#include "launcher/ops/save.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "launcher/cluster/redis_client.h"
#include "launcher/ops/target.h"
#include "launcher/state/data_lock.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

constexpr auto kSaveTimeout = std::chrono::minutes(30);

ForkCount Observe(const Access& access, const std::string& host, int port) {
  ForkCount count;
  auto connection = RedisConnection::Connect(access, host, port, std::chrono::seconds(1));
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

std::vector<ForkCount> ObserveForks(const Access& access, const Plan& plan) {
  std::vector<ForkCount> counts;
  for (const auto& shard : plan.shards) counts.push_back(Observe(access, plan.bind, shard.port));
  return counts;
}

common::Result<SaveReport> WaitForSaves(const Access& access, const Plan& plan,
                                        const std::vector<ForkCount>& before,
                                        std::chrono::steady_clock::time_point started,
                                        const SaveProgress& progress) {
  SaveReport report;
  std::vector<std::string> statuses(plan.shards.size());
  for (;;) {
    size_t done = 0;
    int forking = 0;
    for (size_t i = 0; i < plan.shards.size(); ++i) {
      auto now = Observe(access, plan.bind, plan.shards[i].port);
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

Outcome<SaveDone> Save(const Spec& spec,
                       const std::function<void(size_t, size_t, int, int)>& progress) {
  auto target = LoadTarget(spec, {.supervisor = true});
  if (!target.ok()) return target.error();
  // A backup's snapshot forks would count as this save's (total_forks), and its children as
  // forks beyond the limit.
  auto snapshot_lock = DataLock::Take(target->dir, "save", DataLock::Kind::kSnapshots);
  if (!snapshot_lock.ok()) return Classify(snapshot_lock.error());
  const Plan& plan = target->deployment->plan;
  std::vector<ForkCount> before = ObserveForks(target->access, plan);
  auto started = std::chrono::steady_clock::now();
  auto reply = AskSupervisor(target->dir, {{"cmd", "save"}}, std::chrono::seconds(5));
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) return Failure::Usage(reply->value("error", "save refused"));
  SaveDone done{.shards = plan.shards.size(), .fork_limit = reply->value("fork_limit", 1)};
  auto saved = WaitForSaves(target->access, plan, before, started,
                            [&](size_t saved_count, size_t total, int forking) {
                              if (progress) progress(saved_count, total, forking, done.fork_limit);
                            });
  if (!saved.ok()) return saved.error();
  done.saves = *saved;
  done.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return done;
}

}  // namespace shardctl::launcher
