// `shardctl save`: every shard saved once (BGSAVE, or BGREWRITEAOF with aof), through the
// supervisor's fork scheduler, so the host-wide fork limit holds. Returns when all are done.
#include <iostream>
#include <thread>

#include "launcher/cli/commands.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr auto kSaveTimeout = std::chrono::minutes(30);

struct ForkCount {
  long long forks = -1;  // INFO stats total_forks
  bool forking = false;
  std::string last_status;
};

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

int RunSave(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = true});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  auto& [spec, dir, deployment] = std::get<Target>(loaded);
  const Plan& plan = deployment->plan;
  std::vector<ForkCount> before;
  for (const auto& shard : plan.shards) before.push_back(Observe(plan.bind, shard.port));
  auto started = Clock::now();
  auto reply = AskSupervisor(dir, {{"cmd", "save"}}, std::chrono::seconds(5));
  if (!reply.ok() || !reply->value("ok", false)) {
    PrintError(reply.ok() ? reply->value("error", "save refused") : reply.error().message());
    return reply.ok() ? kExitUsage : kExitRuntime;
  }
  int most_at_once = 0;
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
    most_at_once = std::max(most_at_once, forking);
    if (done == plan.shards.size()) break;
    if (Clock::now() - started > kSaveTimeout) {
      PrintError("save: " + std::to_string(plan.shards.size() - done) +
                 " shard(s) not saved after 30 minutes (see shardctl logs)");
      return kExitRuntime;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
  int failed = static_cast<int>(std::count_if(statuses.begin(), statuses.end(),
                                              [](const std::string& s) { return s != "ok"; }));
  if (invocation.json) {
    std::cout << json{{"name", spec.name},
                      {"saved", plan.shards.size()},
                      {"failed", failed},
                      {"ms", ms},
                      {"most_forks_seen", most_at_once},
                      {"fork_limit", reply->value("fork_limit", 1)}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "saved " << plan.shards.size() << " shards in " << ms << " ms, at most "
              << most_at_once << " fork(s) seen at once (fork limit "
              << reply->value("fork_limit", 1) << ")"
              << (failed ? "; " + std::to_string(failed) + " save(s) FAILED" : "") << "\n";
  }
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace shardctl::launcher
