// `shardctl save`: every shard saved once (BGSAVE, or BGREWRITEAOF with aof), through the
// supervisor's fork scheduler, so the host-wide fork limit holds. Returns when all are done
// (ops/save.h watches the shards).
#include "launcher/ops/save.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {

int RunSave(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto saved = Save(*spec, [&](size_t done, size_t total, int forking, int fork_limit) {
    progress.Show("saving: " + std::to_string(forking) + " forking now, fork limit " +
                      std::to_string(fork_limit) + ", saved",
                  done, total);
  });
  progress.Clear();
  if (!saved.ok()) return Fail(saved.error());
  const auto& [report, shards, fork_limit, took] = *saved;
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec->name},
                                {"saved", shards},
                                {"failed", report.failed},
                                {"ms", took.count()},
                                {"most_forks_seen", report.most_forks_seen},
                                {"fork_limit", fork_limit}}
                     .dump(2)
              << "\n";
  } else {
    // A failed save is one whose snapshot ended with an error (rdb_last_bgsave_status:err).
    std::cout << "saved " << (report.failed ? std::to_string(shards - report.failed) + " of " : "")
              << shards << " shards in " << took.count() << " ms, at most "
              << report.most_forks_seen << " fork(s) seen at once (fork limit " << fork_limit << ")"
              << (report.failed ? "; " + std::to_string(report.failed) +
                                      " FAILED (their snapshot or AOF rewrite ended with an "
                                      "error, a full disk mostly: shardctl status --json shows "
                                      "each shard's last_save_status, shardctl logs SHARD why)"
                                : "")
              << "\n";
  }
  return report.failed ? kExitRuntime : kExitOk;
}

}  // namespace shardctl::launcher
