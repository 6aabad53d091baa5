// The table of commands a Redis/Valkey primary replicates, and where each one's keys are: what
// repl_plan.h needs to route a replicated write to a cluster. Pure, no I/O.
//
// A primary replicates effects, not requests: Redis 7.0+, Valkey 7.2+ and Redis 8 rewrite many
// commands before propagating them (SET EX → SET PXAT, EXPIRE → PEXPIREAT, SPOP → SREM,
// INCRBYFLOAT → SET KEEPTTL, GETDEL → DEL, BLPOP → LPOP, BLMOVE → LMOVE, LMPOP → LPOP/RPOP,
// XREADGROUP → XCLAIM + XGROUP SETID, EVAL/FCALL → their writes in MULTI/EXEC). The table lists
// what can arrive: the rewritten forms, plus the forms older primaries sent (EXPIRE, SETEX, EVAL
// replicated verbatim) where routing them is just as safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

// How a replicated command reaches a cluster.
enum class ReplRoute {
  kSkip,             // replication plumbing or no data: PING, REPLCONF, PUBLISH, SPUBLISH
  kSingleKey,        // one key: to the primary of its slot
  kIndependentKeys,  // MSET, DEL, UNLINK: each key stands alone, so one command per slot
  kKeysTogether,     // RENAME, SMOVE, *STORE, MSETNX, PFMERGE, ...: all keys in one command
  kFanOut,           // server-wide: FLUSHALL, FLUSHDB, FUNCTION LOAD, SCRIPT LOAD to every primary
  kRefused,          // cannot be mirrored in a cluster: SWAPDB, MOVE (ReplCommandInfo::refusal)
  kSelect,           // SELECT: the planner tracks the db
  kMulti,            // MULTI, EXEC, DISCARD: the planner collects the transaction
  kExec,
  kDiscard,
};

// Where a command's keys are. Positions index the arguments, args[0] being the command name.
struct ReplKeySpec {
  // Keys at first, first + step, ..., last; first 0: no keys in this part. A negative last counts
  // from the end (-1: the last argument; MSET's -2: the last key before its value).
  int first = 0;
  int last = 0;
  int step = 1;
  // When > 0, the argument here holds how many keys follow it (ZUNIONSTORE dst numkeys k1 k2 ...,
  // LMPOP numkeys k1 ..., EVAL script numkeys k1 ...), in addition to the keys above.
  int numkeys_at = 0;
  // SORT, GEORADIUS, GEORADIUSBYMEMBER: the options from this position on may name a destination
  // key (STORE dst, STOREDIST dst).
  int store_options_from = 0;
};

struct ReplCommandInfo {
  std::string_view name;  // upper case
  ReplRoute route = ReplRoute::kRefused;
  ReplKeySpec keys;
  // kFanOut commands with subcommands (FUNCTION, SCRIPT): the ones that are fanned out, separated
  // by spaces; any other subcommand is refused. Empty: the command has none.
  std::string_view fan_out_subcommands;
  // kFanOut: whether the command acts on the selected db only (FLUSHDB) and so is refused outside
  // db 0, or on the whole server (FLUSHALL, FUNCTION).
  bool selected_db_only = false;
  // kRefused: why, for the problem the planner reports.
  std::string_view refusal;
};

// Looks a command name up case-insensitively; nullptr when the table does not know it (a module's
// command, or one newer than the table). The result points to static storage.
const ReplCommandInfo* FindReplCommand(std::string_view name);

// Every command the table knows, in the table's order (by data type).
std::span<const ReplCommandInfo> AllReplCommands();

// The positions of the keys of `args` (args[0] names the command `info` describes), in argument
// order. The error, one line, says the command has too few arguments, an uneven key/value list or
// a bad numkeys: a primary never sends that, so the stream is not to be trusted.
Result<std::vector<size_t>> ReplKeyPositions(const ReplCommandInfo& info,
                                             std::span<const std::string> args);

// ASCII upper case, for looking names up and naming commands in problems.
std::string UpperCase(std::string_view text);

}  // namespace shardctl::common
