// `shardctl save`: every shard saved once (BGSAVE, or BGREWRITEAOF with aof), through the
// supervisor's fork scheduler, so the host-wide fork limit holds. Returns when all are done
// (ops/save.h watches the shards).
#include "launcher/ops/save.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {

int RunSave(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.supervisor = true});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  const Plan& plan = deployment->plan;
  std::vector<ForkCount> before = ObserveForks(plan);
  auto started = std::chrono::steady_clock::now();
  auto reply = AskSupervisor(dir, {{"cmd", "save"}}, std::chrono::seconds(5));
  if (!reply.ok() || !reply->value("ok", false)) {
    PrintError(reply.ok() ? reply->value("error", "save refused") : reply.error().message());
    return reply.ok() ? kExitUsage : kExitRuntime;
  }
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto saved = WaitForSaves(plan, before, started, [&](size_t done, size_t total, int forking) {
    progress.Show("saving: " + std::to_string(forking) + " forking now, fork limit " +
                      std::to_string(reply->value("fork_limit", 1)) + ", saved",
                  done, total);
  });
  progress.Clear();
  if (!saved.ok()) {
    PrintError(saved.error().message());
    return kExitRuntime;
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  started)
                .count();
  const int fork_limit = reply->value("fork_limit", 1);
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec.name},
                                {"saved", plan.shards.size()},
                                {"failed", saved->failed},
                                {"ms", ms},
                                {"most_forks_seen", saved->most_forks_seen},
                                {"fork_limit", fork_limit}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "saved " << plan.shards.size() << " shards in " << ms << " ms, at most "
              << saved->most_forks_seen << " fork(s) seen at once (fork limit " << fork_limit << ")"
              << (saved->failed ? "; " + std::to_string(saved->failed) + " save(s) FAILED" : "")
              << "\n";
  }
  return saved->failed ? kExitRuntime : kExitOk;
}

}  // namespace shardctl::launcher
