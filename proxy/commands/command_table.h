// The proxy's command table: how each command is routed and where its keys are.
//
// Pure: no I/O. The session looks up argv[0] once per request and then, depending on the kind,
// forwards the request bytes to the shard owning the key's slot, splits it by slot (split.h),
// answers it locally, or answers with an error naming the command.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::proxy {

enum class RouteKind {
  kSingleKey,    // one key; forward to the owner of its slot
  kSplitBySlot,  // MGET, MSET, DEL, UNLINK, EXISTS, TOUCH: one sub-command per slot (split.h)
  kOneSlot,      // several keys that must share one slot, else -CROSSSLOT (MSETNX, RENAME, ...)
  kLocal,        // answered by the proxy itself (PING, ECHO, HELLO, ...)
  kFanOut,       // the whole keyspace: every primary or any one, replies merged (fanout.h)
  kScan,         // SCAN: one shard at a time, the cursor says which (fanout.h)
  kBlocking,     // BLPOP & co: the slot's primary, over a connection pinned to this client
  kPubSub,       // (P|S)(UN)SUBSCRIBE: this worker's shared subscriber connections (pubsub.h)
  kUnsupported,  // answered with CommandInfo::UnsupportedError()
};

// Where a command's keys are, in Redis' "first key, last key, step" form. Positions index the
// request's arguments, argv[0] being the command name.
struct KeySpec {
  int first = 0;  // 0: the command has no keys
  int last = 0;   // >= first, or negative to count from the end: -1 is the last argument
  int step = 1;   // MSET: 2 (key value key value ...)
  // When > 0, the argument at this position holds the number of keys, which start at `first`
  // (EVAL script numkeys key ...). `last` is then ignored.
  int numkeys_at = 0;
  // XREAD/XREADGROUP: the keys are the first half of the arguments after the STREAMS keyword,
  // which is looked for from `first` on.
  bool after_streams = false;
  // OBJECT ENCODING key, MEMORY USAGE key: the key follows a subcommand and may be missing
  // (OBJECT HELP, MEMORY STATS); without it the command has no keys and goes to any shard.
  bool optional = false;
  // ZUNIONSTORE dest numkeys key ...: argv[1] is a key too, besides the numkeys keys.
  bool dest_first = false;
};

// How the merged reply of a split command is built from its parts (split.h).
enum class MergeKind {
  kNone,         // not a split command
  kArrayByKey,   // MGET: one element per key, back in the request's key order
  kSumIntegers,  // DEL, UNLINK, EXISTS, TOUCH: the parts' integers added up
  kAllOk,        // MSET: +OK when every part said +OK
};

struct CommandInfo {
  std::string_view name;  // upper case, as in the table; the looked-up name for unknown commands
  RouteKind kind = RouteKind::kUnsupported;
  KeySpec keys;
  MergeKind merge = MergeKind::kNone;
  // For kUnsupported: why, appended to the error ("transactions need a pinned connection").
  // Empty for commands the table does not know at all.
  std::string_view unsupported_reason;
  // Reads nothing but keys' values (Redis' "readonly" flag): may go to a replica with
  // --read-from prefer-replica|replica.
  bool read_only = false;

  // The RESP error text (without "-") for a client that sent `command` (as typed) to an
  // unsupported command: "ERR unknown command 'foo'" or
  // "ERR command 'multi' is not supported by shardproxy: <reason>".
  std::string UnsupportedError(std::string_view command) const;
};

// Looks `name` up case-insensitively. Never fails: a command the table does not know comes back
// as kUnsupported with an empty reason. The returned reference is to static storage, except that
// for an unknown command `name` is copied into a thread-local entry valid until the next unknown
// lookup on the same thread; callers use it at once to build the error.
const CommandInfo& LookupCommand(std::string_view name);

// Every command the table knows, sorted by name (for COMMAND and the generated docs).
std::span<const CommandInfo> AllCommands();

// The argument positions of a request's keys: first, first + step, ..., up to and including last.
// Empty (count() == 0) for a command without keys.
struct KeyPositions {
  size_t first = 0;
  size_t last = 0;
  size_t step = 1;
  // A numkeys Redis refuses (not a number, negative, 0 where a key is needed, more keys than
  // arguments): no keys, so the request goes to any primary and the client gets that node's own
  // error, in its words (they differ by command and by engine), as from one Redis.
  bool numkeys_refused = false;
  size_t count() const { return first == 0 ? 0 : (last - first) / step + 1; }
};

// Resolves the command's KeySpec against the request's arguments (args[0] is the command name).
// Errors are RESP error texts: "ERR wrong number of arguments for 'mset' command" when keys are
// missing or a key/value list is uneven. A bad numkeys is not an error here (numkeys_refused).
common::Result<KeyPositions> ResolveKeys(const CommandInfo& info,
                                         std::span<const std::string_view> args);

// The one slot all of the request's keys hash to, for kSingleKey and kOneSlot commands.
// Returns -1 for a command without keys (EVAL with numkeys 0, or a numkeys Redis refuses), and the
// error "CROSSSLOT Keys in request don't hash to the same slot" when keys hash to different slots;
// other errors as ResolveKeys().
common::Result<int> RequestSlot(const CommandInfo& info, std::span<const std::string_view> args);

// RequestSlot() and where the request's first key is (its index in `args`; 0 when it has none),
// so that counting the key (key_load.h) needs no second look-up.
struct KeyedSlot {
  int slot = -1;
  size_t first_key = 0;
};
common::Result<KeyedSlot> RequestKeyedSlot(const CommandInfo& info,
                                           std::span<const std::string_view> args);

// COMMAND GETKEYS: the positions of every key in `args` (args[0] is the command), ZUNIONSTORE's
// destination included. Errors in Redis' words: "ERR Invalid command specified" for a command
// the table does not serve, "ERR The command has no key arguments", "ERR Invalid arguments
// specified for command" when the keys cannot be found (ResolveKeys() fails).
common::Result<std::vector<size_t>> KeyArgumentPositions(std::span<const std::string_view> args);

// True for a command that blocks only with an option: XREAD/XREADGROUP with BLOCK before
// STREAMS. Such a call goes over a pinned connection, like RouteKind::kBlocking.
bool BlocksWithOption(const CommandInfo& info, std::span<const std::string_view> args);

// ASCII lower case, as Redis names commands in its errors ("get", "xreadgroup").
std::string LowerCase(std::string_view text);

// Redis' error for a wrong argument count: "ERR wrong number of arguments for 'get' command",
// with the command lower-cased as Redis prints it.
std::string WrongArgCountError(std::string_view command);

}  // namespace shardctl::proxy
