#include "launcher/ops/logs.h"

#include "launcher/ops/target.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {

Outcome<LogTail> ReadLog(const Spec& spec, std::optional<int> shard, int lines) {
  auto target = LoadTarget(spec, {.if_missing = TargetNeeds::IfMissing::kCarryOn, .access = false});
  if (!target.ok()) return target.error();
  const DeploymentDir& dir = target->dir;
  LogTail log{.path = shard ? dir.ShardLog(*shard) : dir.SupervisorLog(), .tail = ""};
  std::error_code error;
  if (!std::filesystem::exists(log.path, error)) {
    return Failure(Fault::kRuntime, log.path.string() +
                                        ": no such log (check --name, --state-dir and the shard "
                                        "index)");
  }
  log.tail = TailOfFile(log.path, lines);
  return log;
}

}  // namespace shardctl::launcher
