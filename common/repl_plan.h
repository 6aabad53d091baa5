// What a cluster must receive for each command a standalone primary replicates (import --live).
// Pure: the commands come from ReplStreamParser (repl_stream.h), the actions go to an executor
// that owns the cluster connections and the slot map.
//
//   ReplCommand.args ──Plan()──▶ ReplPlan{actions} ──▶ executor: Forward / ForwardTransaction to
//        │                                                the slot's primary, FanOut to every
//        └─ SELECT, MULTI…EXEC kept here                  primary, CrossSlot co-located on one
//                                                         primary (repl_colocate.h), Problem:
//                                                         stop and tell the user
//
// The choices, per kind of command (repl_commands.h lists them all):
// - Replication plumbing (PING, REPLCONF GETACK, SELECT) and messages (PUBLISH, SPUBLISH): skipped.
// - Every write to keys while the source has a db other than 0 selected: a Problem, since a
//   cluster has only db 0 ("the source writes to db 3; a cluster has only db 0").
// - One key: Forward to its slot.
// - Keys that stand alone (MSET, DEL, UNLINK): one Forward per slot, the keys of a slot together
//   and in their original order.
// - Keys that must stay together (RENAME, SMOVE, LMOVE, COPY, *STORE, MSETNX, PFMERGE, BITOP,
//   LMPOP, EVAL, ...): Forward when they share a slot. Across slots: MSETNX is one MSET per slot
//   (a primary replicates MSETNX only when it set every key, none of which existed); the commands
//   repl_colocate.h can run on one primary with stand-ins for the other slots' keys are CrossSlot,
//   for the executor to co-locate; the rest (EVAL, SORT BY a pattern, commands Redis 7+ and
//   Valkey replicate in other forms such as LMPOP or BLMOVE) are a Problem saying why and what to
//   change.
//   COPY ... DB n with n other than 0 is a Problem.
// - MULTI … EXEC: collected; when every command in it goes to one slot, one ForwardTransaction;
//   otherwise each command's own actions, in order, with ReplPlan::non_atomic set.
// - FLUSHALL (any db), FLUSHDB (db 0), FUNCTION LOAD/DELETE/FLUSH/RESTORE, SCRIPT LOAD/FLUSH:
//   FanOut to every primary. SWAPDB, MOVE, other FUNCTION/SCRIPT subcommands: Problem.
// - A command the table does not know: Problem naming it; nothing is dropped silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace shardctl::common {

struct ReplCommandInfo;  // repl_commands.h

using ReplArgs = std::vector<std::string>;

// Send `command` to the primary owning `slot`.
struct Forward {
  int slot = 0;
  ReplArgs command;
  friend bool operator==(const Forward&, const Forward&) = default;
};

// Send MULTI, `commands`, EXEC to the primary owning `slot`: a source transaction whose keys all
// hash to one slot keeps its atomicity.
struct ForwardTransaction {
  int slot = 0;
  std::vector<ReplArgs> commands;
  friend bool operator==(const ForwardTransaction&, const ForwardTransaction&) = default;
};

// A command whose keys must change together but hash to different slots (RENAME a b): no single
// primary can run it as it is, but PlanColocation (repl_colocate.h) accepted it, so the executor
// runs it on one primary with temporary copies of the keys the others hold. `keys` in argument
// order.
struct CrossSlot {
  ReplArgs command;
  std::vector<std::string> keys;
  friend bool operator==(const CrossSlot&, const CrossSlot&) = default;
};

// Send `command` to every primary (FLUSHALL, FUNCTION LOAD).
struct FanOut {
  ReplArgs command;
  friend bool operator==(const FanOut&, const FanOut&) = default;
};

// The command cannot be mirrored; `reason` is one line starting with the command's name:
// "SWAPDB: swaps two dbs; a cluster has only db 0". The target is diverging from the source, so
// the executor should stop the import and show it.
struct Problem {
  std::string reason;
  friend bool operator==(const Problem&, const Problem&) = default;
};

using ReplAction = std::variant<Forward, ForwardTransaction, CrossSlot, FanOut, Problem>;

// What one replicated command turns into. Empty actions: nothing to send (plumbing, or a command
// held until its transaction's EXEC).
struct ReplPlan {
  std::vector<ReplAction> actions;
  // The actions come from one source transaction that could not be sent as one (its keys span
  // slots): each command is applied on its own, and a reader may see part of it.
  bool non_atomic = false;
};

// Totals since the planner was made, for the import's report.
struct ReplPlanCounts {
  int64_t commands = 0;      // every command given to Plan()
  int64_t skipped = 0;       // plumbing and messages
  int64_t split = 0;         // commands sent as more than one Forward (one per slot)
  int64_t cross_slot = 0;    // CrossSlot actions (to co-locate)
  int64_t problems = 0;      // Problem actions
  int64_t transactions = 0;  // EXECs seen
  int64_t non_atomic_transactions = 0;
};

// Turns replicated commands into actions, in stream order. Keeps the selected db and the open
// transaction between calls, so one planner follows one replication stream; after a new full
// sync, start a new one (a primary re-sends SELECT after a resync).
class ReplPlanner {
 public:
  ReplPlan Plan(ReplArgs command);

  int db() const { return db_; }
  // True between MULTI and EXEC. The queued commands are applied only with EXEC's plan, so while
  // this holds, the offset to acknowledge is still the one before MULTI.
  bool in_transaction() const { return in_transaction_; }
  const ReplPlanCounts& counts() const { return counts_; }

 private:
  // One command outside or inside a transaction; `info` is its table entry, null when unknown.
  std::vector<ReplAction> PlanCommand(const ReplCommandInfo* info, ReplArgs command);
  std::vector<ReplAction> PlanSelect(const ReplArgs& command);
  std::vector<ReplAction> PlanFanOut(ReplArgs command, bool selected_db_only,
                                     std::string_view subcommands);
  ReplPlan Exec();
  void Count(const ReplPlan& plan);

  int db_ = 0;
  bool in_transaction_ = false;
  // The queued commands of the open transaction, each with its own actions.
  std::vector<std::vector<ReplAction>> queued_;
  ReplPlanCounts counts_;
};

}  // namespace shardctl::common
