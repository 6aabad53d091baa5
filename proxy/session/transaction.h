// Transaction: a client's MULTI ... EXEC as the proxy queues it. Pure.
//
// The proxy answers +QUEUED (after the shard's queue probe for a write, session_transaction.cc)
// and checks that every queued command hashes to one slot, as
// Redis Cluster requires (and to the watched slot under WATCH). EXEC sends the whole batch,
// "MULTI <commands> EXEC", as one request to the slot's primary: a worker appends a request's
// bytes to the shared shard connection in one piece, so nothing of another client lands inside.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "proxy/commands/command_table.h"
#include "proxy/merge/reply_assembly.h"

namespace shardctl::proxy {

class Transaction {
 public:
  // Queues one command (its frame as the client sent it). An error is the reply Redis gives
  // (CROSSSLOT, a command that cannot be queued, too big) and makes EXEC abort with EXECABORT.
  // `watch_slot`: the slot of the client's WATCH, -1 without one; `max_bytes`: the most the
  // queued commands may take (--max-client-buffer).
  common::Status Queue(std::string_view frame, const CommandInfo& info,
                       std::span<const std::string_view> args, int watch_slot, size_t max_bytes);

  // EXEC's request: "MULTI", the queued commands, "EXEC".
  std::string Batch() const;
  // Replies the shard sends before EXEC's own: +OK for MULTI, +QUEUED for each command.
  size_t replies_before_exec() const { return count_ + 1; }

  // The shard's own queue-time checks (OOM, arity): the session sends a probe, "MULTI <command>
  // DISCARD", for each queued command that writes; EXEC and DISCARD wait until all answered,
  // and a refusal makes EXEC abort, as on Redis.
  void ProbeSent() { ++probes_; }
  void ProbeAnswered(bool refused) {
    --probes_;
    failed_ = failed_ || refused;
  }
  size_t probes() const { return probes_; }

  // Server-wide commands queued (CONFIG SET, FLUSHALL, DBSIZE ...): they run in the home
  // primary's transaction, and those for every shard also on each other primary, in a
  // transaction of their own (`server_wide_batch()`), their replies merged (transaction_fanout.cc).
  const std::vector<ServerWideCommand>& server_wide() const { return server_wide_; }
  std::string server_wide_batch() const;
  size_t server_wide_everywhere() const { return everywhere_count_; }

  size_t count() const { return count_; }
  int slot() const { return slot_; }  // the one slot every key hashes to; -1 before a key
  bool failed() const { return failed_; }
  // A command refused before it was queued (Valkey 8+'s nested MULTI): EXEC aborts.
  void MarkFailed() { failed_ = true; }

 private:
  std::string queued_;  // the commands' frames, in order
  size_t count_ = 0;
  int slot_ = -1;
  bool failed_ = false;
  size_t probes_ = 0;
  std::vector<ServerWideCommand> server_wide_;
  std::string everywhere_;  // the frames of the server-wide commands for every shard
  size_t everywhere_count_ = 0;
};

}  // namespace shardctl::proxy
