// Applies what a standalone primary replicates to a cluster (import --live): the actions
// common/repl_plan.h makes of each command, sent to the primaries owning their slots. Commands
// for one primary keep the stream's order and are pipelined until Flush(); different primaries
// hold different keys, so their order between them does not matter (a FanOut such as FLUSHALL is
// queued on every primary, after what came before it).
//
// A CrossSlot (RENAME a b with a and b in different slots) is co-located (common/repl_colocate.h)
// right away, in stream order: what is queued is flushed first, then the keys outside the home
// slot are copied from their owners into temporary keys on the home slot's primary (DUMP +
// PEXPIRETIME, RESTORE REPLACE ABSTTL; DEL when the key does not exist), the command runs there on
// those names, each temporary it may have written is copied back to its key (RESTORE REPLACE with
// its TTL, or DEL when the command removed it), and the temporaries are deleted. A failure on the
// way stops the import like any failed command; temporaries may then remain, named
// shardctl:import:tmp:{..}:n.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
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

  // Queues the plan's commands, and co-locates a CrossSlot at once (flushing what was queued
  // before it). A Problem, or a CrossSlot that cannot be co-located, is an error naming the
  // command: the cluster cannot follow the source past it, and nothing of it is applied.
  common::Status Apply(const common::ReplPlan& plan);
  // Sends what is queued and reads every reply; an error reply means the cluster no longer
  // mirrors the source, and names the command and the node.
  common::Status Flush();

  // This stream is one of a source cluster's primaries', each applied by its own applier in no
  // common order. A FLUSHALL or FLUSHDB there emptied that primary's slots only: sent to every
  // primary here it would delete the other source primaries' keys too, so it is refused (the
  // import stops). FUNCTION LOAD and RESTORE, which an operator runs on each primary, replace the
  // library (each stream loads the same one); a FUNCTION DELETE that finds it gone is done.
  void OneOfSeveralStreams() { one_of_several_ = true; }
  // Why `plan` cannot be applied (a Problem, or a FLUSHALL refused as above), before any of it
  // is queued: the caller applies what came before it, then stops.
  std::optional<std::string> Refusal(const common::ReplPlan& plan) const;
  // The primaries hold expiry (cluster/expiry_hold.h): each connection says CLIENT IMPORT-SOURCE
  // ON, so the stream's writes find keys past their TTL as the source had them, as a replica
  // applying its primary's stream does (the source's own expiry arrives as DEL).
  void HoldExpiry() { expiry_held_ = true; }

  size_t queued() const { return queued_count_; }
  uint64_t applied() const { return applied_; }  // commands the cluster answered without error
  uint64_t co_located() const { return co_located_; }  // CrossSlot commands applied

 private:
  common::Result<RedisConnection*> Connection(int primary);
  common::Status Queue(int primary, Command command);
  // Runs `cross` on one primary with temporary keys (repl_colocate.cc).
  common::Status CoLocate(const common::CrossSlot& cross);
  // Queues `command` for every primary (FLUSHALL, FUNCTION LOAD, ...), as OneOfSeveralStreams says.
  common::Status FanOut(common::ReplArgs command);
  // `error` answers a fanned-out command another stream of the same source cluster already
  // applied (FUNCTION DELETE of a library the first stream deleted): not a divergence.
  bool AlreadyDone(const Command& command, const common::Error& error) const;
  // Sends `commands` to `primary` in one write and reads every reply; an error reply is an error
  // naming the command and the node, as Flush() gives it.
  common::Result<std::vector<std::string>> RunAll(int primary,
                                                  const std::vector<Command>& commands);

  common::SlotTable table_;
  Access access_;
  std::chrono::milliseconds timeout_;
  std::map<int, RedisConnection> connections_;
  std::map<int, std::vector<Command>> queued_;
  size_t queued_count_ = 0;
  uint64_t applied_ = 0;
  uint64_t co_located_ = 0;
  bool one_of_several_ = false;
  bool expiry_held_ = false;
};

}  // namespace shardctl::launcher
