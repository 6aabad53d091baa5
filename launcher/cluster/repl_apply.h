// Applies what a standalone primary replicates to a cluster (import --live): the actions
// common/repl_plan.h makes of each command, sent to the primaries owning their slots. Commands
// for one primary keep the stream's order and are pipelined until Flush(); different primaries
// hold different keys, so their order between them does not matter (a FanOut such as FLUSHALL is
// queued on every primary, after what came before it).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "common/cluster_text.h"
#include "common/repl_plan.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

class ReplApplier {
 public:
  ReplApplier(common::SlotTable table, Access access, std::chrono::milliseconds timeout)
      : table_(std::move(table)), access_(std::move(access)), timeout_(timeout) {}

  // Queues the plan's commands. A CrossSlot or a Problem is an error naming the command: the
  // cluster cannot follow the source past it, and nothing of it is applied.
  common::Status Apply(const common::ReplPlan& plan);
  // Sends what is queued and reads every reply; an error reply means the cluster no longer
  // mirrors the source, and names the command and the node.
  common::Status Flush();

  size_t queued() const { return queued_count_; }
  uint64_t applied() const { return applied_; }

 private:
  common::Result<RedisConnection*> Connection(int primary);
  common::Status Queue(int primary, Command command);

  common::SlotTable table_;
  Access access_;
  std::chrono::milliseconds timeout_;
  std::map<int, RedisConnection> connections_;
  std::map<int, std::vector<Command>> queued_;
  size_t queued_count_ = 0;
  uint64_t applied_ = 0;
};

}  // namespace shardctl::launcher
