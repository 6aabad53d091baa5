#include "proxy/commands/command_table.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/numbers.h"
#include "common/slots.h"
#include "common/text.h"

namespace shardctl::proxy {
namespace {

using common::Error;
using common::Result;
constexpr auto EqualsIgnoringCase = common::MatchesUpperCase;

constexpr KeySpec kNoKeys{};
constexpr KeySpec kFirstKey{1, 1, 1};
constexpr KeySpec kAllArgs{1, -1, 1};
constexpr KeySpec kKeyValuePairs{1, -1, 2};
constexpr KeySpec kFirstTwo{1, 2, 1};
constexpr KeySpec kNumKeysFirst{2, 0, 1, 1};  // SINTERCARD numkeys key ...
constexpr KeySpec kDestThenNumKeys{3,     0,     1,   2,
                                   false, false, true};     // ZUNIONSTORE dest numkeys key ...
constexpr KeySpec kSubcommandKey{2, 2, 1, 0, false, true};  // OBJECT ENCODING key

CommandInfo Single(std::string_view name) { return {name, RouteKind::kSingleKey, kFirstKey}; }
CommandInfo OneSlot(std::string_view name, KeySpec keys) {
  return {name, RouteKind::kOneSlot, keys};
}
CommandInfo Split(std::string_view name, KeySpec keys, MergeKind merge) {
  return {name, RouteKind::kSplitBySlot, keys, merge};
}
CommandInfo Local(std::string_view name) { return {name, RouteKind::kLocal, kNoKeys}; }
CommandInfo Unsupported(std::string_view name, std::string_view reason) {
  return {name, RouteKind::kUnsupported, kNoKeys, MergeKind::kNone, reason};
}

// Redis 7.0's, and the ones Redis 8.2 (hash field TTLs, HGETDEL/HGETEX/HSETEX, vector sets,
// XACKDEL/XDELEX) and Valkey 9.1 (the same hash commands, DELIFEQ) added: one key at argument 1.
// An engine without one answers "unknown command" itself.
constexpr std::string_view kSingleKeyCommands[] = {
    "APPEND",
    "BITCOUNT",
    "BITFIELD",
    "BITFIELD_RO",
    "BITPOS",
    "DECR",
    "DECRBY",
    "DELIFEQ",
    "DUMP",
    "EXPIRE",
    "EXPIREAT",
    "EXPIRETIME",
    "GEOADD",
    "GEODIST",
    "GEOHASH",
    "GEOPOS",
    "GEORADIUS",
    "GEORADIUSBYMEMBER",
    "GEORADIUSBYMEMBER_RO",
    "GEORADIUS_RO",
    "GEOSEARCH",
    "GET",
    "GETBIT",
    "GETDEL",
    "GETEX",
    "GETRANGE",
    "GETSET",
    "HDEL",
    "HEXISTS",
    "HEXPIRE",
    "HEXPIREAT",
    "HEXPIRETIME",
    "HGET",
    "HGETALL",
    "HGETDEL",
    "HGETEX",
    "HINCRBY",
    "HINCRBYFLOAT",
    "HKEYS",
    "HLEN",
    "HMGET",
    "HMSET",
    "HPERSIST",
    "HPEXPIRE",
    "HPEXPIREAT",
    "HPEXPIRETIME",
    "HPTTL",
    "HRANDFIELD",
    "HSCAN",
    "HSET",
    "HSETEX",
    "HSETNX",
    "HSTRLEN",
    "HTTL",
    "HVALS",
    "INCR",
    "INCRBY",
    "INCRBYFLOAT",
    "LINDEX",
    "LINSERT",
    "LLEN",
    "LPOP",
    "LPOS",
    "LPUSH",
    "LPUSHX",
    "LRANGE",
    "LREM",
    "LSET",
    "LTRIM",
    "PERSIST",
    "PEXPIRE",
    "PEXPIREAT",
    "PEXPIRETIME",
    "PFADD",
    "PSETEX",
    "PTTL",
    "RESTORE",
    "RPOP",
    "RPUSH",
    "RPUSHX",
    "SADD",
    "SCARD",
    "SET",
    "SETBIT",
    "SETEX",
    "SETNX",
    "SETRANGE",
    "SISMEMBER",
    "SMEMBERS",
    "SMISMEMBER",
    "SORT",
    "SORT_RO",
    "SPOP",
    "SRANDMEMBER",
    "SREM",
    "SSCAN",
    "STRLEN",
    "SUBSTR",
    "TTL",
    "TYPE",
    "VADD",
    "VCARD",
    "VDIM",
    "VEMB",
    "VGETATTR",
    "VINFO",
    "VISMEMBER",
    "VLINKS",
    "VRANDMEMBER",
    "VREM",
    "VSETATTR",
    "VSIM",
    "XACK",
    "XACKDEL",
    "XADD",
    "XAUTOCLAIM",
    "XCLAIM",
    "XDEL",
    "XDELEX",
    "XLEN",
    "XPENDING",
    "XRANGE",
    "XREVRANGE",
    "XSETID",
    "XTRIM",
    "ZADD",
    "ZCARD",
    "ZCOUNT",
    "ZINCRBY",
    "ZLEXCOUNT",
    "ZMSCORE",
    "ZPOPMAX",
    "ZPOPMIN",
    "ZRANDMEMBER",
    "ZRANGE",
    "ZRANGEBYLEX",
    "ZRANGEBYSCORE",
    "ZRANK",
    "ZREM",
    "ZREMRANGEBYLEX",
    "ZREMRANGEBYRANK",
    "ZREMRANGEBYSCORE",
    "ZREVRANGE",
    "ZREVRANGEBYLEX",
    "ZREVRANGEBYSCORE",
    "ZREVRANK",
    "ZSCAN",
    "ZSCORE",
};

constexpr std::string_view kLocalCommands[] = {
    "AUTH", "CLIENT", "COMMAND", "ECHO",  "HELLO",  "INFO",
    "PING", "PROXY",  "QUIT",    "RESET", "SELECT",
};

// The keyed commands the engines flag "readonly" (COMMAND: readonly and not write), plus
// the _RO script commands: the ones a replica in READONLY mode serves.
constexpr std::string_view kReadOnlyCommands[] = {"BITCOUNT",
                                                  "BITFIELD_RO",
                                                  "BITPOS",
                                                  "DUMP",
                                                  "EVALSHA_RO",
                                                  "EVAL_RO",
                                                  "EXISTS",
                                                  "EXPIRETIME",
                                                  "FCALL_RO",
                                                  "GEODIST",
                                                  "GEOHASH",
                                                  "GEOPOS",
                                                  "GEORADIUSBYMEMBER_RO",
                                                  "GEORADIUS_RO",
                                                  "GEOSEARCH",
                                                  "GET",
                                                  "GETBIT",
                                                  "GETRANGE",
                                                  "HEXISTS",
                                                  "HEXPIRETIME",
                                                  "HGET",
                                                  "HGETALL",
                                                  "HKEYS",
                                                  "HLEN",
                                                  "HMGET",
                                                  "HPEXPIRETIME",
                                                  "HPTTL",
                                                  "HRANDFIELD",
                                                  "HSCAN",
                                                  "HSTRLEN",
                                                  "HTTL",
                                                  "HVALS",
                                                  "LCS",
                                                  "LINDEX",
                                                  "LLEN",
                                                  "LPOS",
                                                  "LRANGE",
                                                  "MGET",
                                                  "PEXPIRETIME",
                                                  "PFCOUNT",
                                                  "PTTL",
                                                  "SCARD",
                                                  "SDIFF",
                                                  "SINTER",
                                                  "SISMEMBER",
                                                  "SMEMBERS",
                                                  "SMISMEMBER",
                                                  "SORT_RO",
                                                  "SRANDMEMBER",
                                                  "SSCAN",
                                                  "STRLEN",
                                                  "SUBSTR",
                                                  "SUNION",
                                                  "TOUCH",
                                                  "TTL",
                                                  "TYPE",
                                                  "VCARD",
                                                  "VDIM",
                                                  "VEMB",
                                                  "VGETATTR",
                                                  "VINFO",
                                                  "VISMEMBER",
                                                  "VLINKS",
                                                  "VRANDMEMBER",
                                                  "VSIM",
                                                  "XLEN",
                                                  "XPENDING",
                                                  "XRANGE",
                                                  "XREVRANGE",
                                                  "ZCARD",
                                                  "ZCOUNT",
                                                  "ZLEXCOUNT",
                                                  "ZMSCORE",
                                                  "ZRANDMEMBER",
                                                  "ZRANGE",
                                                  "ZRANGEBYLEX",
                                                  "ZRANGEBYSCORE",
                                                  "ZRANK",
                                                  "ZREVRANGE",
                                                  "ZREVRANGEBYLEX",
                                                  "ZREVRANGEBYSCORE",
                                                  "ZREVRANK",
                                                  "ZSCAN",
                                                  "ZSCORE"};

std::vector<CommandInfo> BuildTable() {
  std::vector<CommandInfo> table;
  for (std::string_view name : kSingleKeyCommands) table.push_back(Single(name));
  for (std::string_view name : kLocalCommands) table.push_back(Local(name));
  table.push_back(Split("MGET", kAllArgs, MergeKind::kArrayByKey));
  table.push_back(Split("MSET", kKeyValuePairs, MergeKind::kAllOk));
  for (std::string_view name : {"DEL", "UNLINK", "EXISTS", "TOUCH"}) {
    table.push_back(Split(name, kAllArgs, MergeKind::kSumIntegers));
  }
  table.push_back(OneSlot("MSETNX", kKeyValuePairs));
  // Valkey 9.1: MSETEX numkeys key value ... [NX|XX] [EX s|...], atomic as MSETNX is.
  table.push_back(OneSlot("MSETEX", {2, 0, 2, 1}));
  for (std::string_view name : {"RENAME", "RENAMENX", "RPOPLPUSH", "LMOVE", "SMOVE", "COPY",
                                "GEOSEARCHSTORE", "ZRANGESTORE"}) {
    table.push_back(OneSlot(name, kFirstTwo));
  }
  for (std::string_view name : {"SDIFF", "SDIFFSTORE", "SINTER", "SINTERSTORE", "SUNION",
                                "SUNIONSTORE", "PFCOUNT", "PFMERGE"}) {
    table.push_back(OneSlot(name, kAllArgs));
  }
  table.push_back(OneSlot("BITOP", {2, -1, 1}));
  table.push_back(OneSlot("LCS", kFirstTwo));
  for (std::string_view name :
       {"SINTERCARD", "LMPOP", "ZMPOP", "ZDIFF", "ZINTER", "ZINTERCARD", "ZUNION"}) {
    table.push_back(OneSlot(name, kNumKeysFirst));
  }
  for (std::string_view name : {"ZDIFFSTORE", "ZINTERSTORE", "ZUNIONSTORE"}) {
    table.push_back(OneSlot(name, kDestThenNumKeys));
  }
  // PFDEBUG <subcommand> <key>; PFSELFTEST has no key: any primary runs it.
  for (std::string_view name : {"OBJECT", "XGROUP", "XINFO", "MEMORY", "PFDEBUG"}) {
    table.push_back({name, RouteKind::kSingleKey, kSubcommandKey});
  }
  for (std::string_view name : {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"}) {
    table.push_back(OneSlot(name, {3, 0, 1, 2}));
  }
  // MULTI/EXEC/DISCARD are queued by the session; WATCH/UNWATCH hold a pinned connection for
  // the transaction (session_transaction.cc, session_pinned.cc).
  for (std::string_view name : {"MULTI", "EXEC", "DISCARD", "UNWATCH"}) {
    table.push_back(Local(name));
  }
  table.push_back({"WATCH", RouteKind::kLocal, {1, -1, 1}});
  // Blocking commands get a backend connection of their own (worker.cc, session.cc).
  for (std::string_view name : {"BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX"}) {
    table.push_back({name, RouteKind::kBlocking, {1, -2, 1}});
  }
  for (std::string_view name : {"BLMOVE", "BRPOPLPUSH"}) {
    table.push_back({name, RouteKind::kBlocking, kFirstTwo});
  }
  for (std::string_view name : {"BLMPOP", "BZMPOP"}) {
    table.push_back({name, RouteKind::kBlocking, {3, 0, 1, 2}});
  }
  // WAIT counts the replicas that have this client's writes: over every pinned connection.
  table.push_back({"WAIT", RouteKind::kBlocking, kNoKeys});
  // Stream reads block only with BLOCK (then pinned, see BlocksWithOption()).
  for (std::string_view name : {"XREAD", "XREADGROUP"}) {
    KeySpec streams;
    streams.first = 1;
    streams.after_streams = true;
    table.push_back(OneSlot(name, streams));
  }
  // Subscriptions are answered by the proxy and fanned in from the cluster (pubsub.h); shard
  // channels hash like keys, so SSUBSCRIBE's channels must share a slot.
  for (std::string_view name : {"SUBSCRIBE", "PSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE"}) {
    table.push_back({name, RouteKind::kPubSub, kNoKeys});
  }
  for (std::string_view name : {"SSUBSCRIBE", "SUNSUBSCRIBE"}) {
    table.push_back({name, RouteKind::kPubSub, {1, -1, 1}});
  }
  table.push_back(OneSlot("PUBLISH", kNoKeys));  // any primary: the bus broadcasts it
  table.push_back(OneSlot("PFSELFTEST", kNoKeys));
  table.push_back({"SPUBLISH", RouteKind::kSingleKey, {1, 1, 1}});  // the channel's slot
  table.push_back({"PUBSUB", RouteKind::kFanOut, kNoKeys});
  table.push_back(Unsupported(
      "ACL", "the proxy's users are its own (shardproxy --auth-file); run ACL on each shard"));
  table.push_back(Unsupported("WAITAOF",
                              "it counts one server's AOF fsyncs; run it on a shard, or WAIT "
                              "through the proxy for the replicas"));
  table.push_back(Unsupported(
      "COMMANDLOG",
      "each shard logs its own commands; run COMMANDLOG on a shard (redis-cli -p PORT)"));
  table.push_back(Unsupported("CLUSTERSCAN",
                              "the proxy is one server to its clients: SCAN covers every shard"));
  table.push_back(Unsupported(
      "MONITOR", "it streams one server's commands; run MONITOR on a shard (redis-cli -p PORT)"));
  for (std::string_view name :
       {"DBSIZE", "KEYS", "RANDOMKEY", "FLUSHALL", "FLUSHDB", "SCRIPT", "FUNCTION", "CONFIG",
        "SLOWLOG", "LATENCY", "SAVE", "BGSAVE", "LASTSAVE", "TIME"}) {
    table.push_back({name, RouteKind::kFanOut, kNoKeys});
  }
  table.push_back({"SCAN", RouteKind::kScan, kNoKeys});
  for (CommandInfo& info : table) {
    info.read_only = std::find(std::begin(kReadOnlyCommands), std::end(kReadOnlyCommands),
                               info.name) != std::end(kReadOnlyCommands);
  }
  std::sort(table.begin(), table.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  return table;
}

const std::vector<CommandInfo>& Table() {
  static const std::vector<CommandInfo> table = BuildTable();
  return table;
}

// An open-addressing index over Table() by upper-case name, so a lookup on the request path is
// one hash and, almost always, one comparison (a binary search made ~8 string comparisons).
class CommandIndex {
 public:
  explicit CommandIndex(const std::vector<CommandInfo>& table) : table_(table) {
    size_t size = 1;
    while (size < table.size() * 4) size <<= 1;  // at most a quarter full: short probes
    slots_.assign(size, kEmpty);
    mask_ = size - 1;
    for (size_t i = 0; i < table.size(); ++i) {
      size_t at = Hash(table[i].name) & mask_;
      while (slots_[at] != kEmpty) at = (at + 1) & mask_;
      slots_[at] = static_cast<int32_t>(i);
    }
  }

  // The entry named `upper` (already upper case, its Hash() `hash`), or nullptr.
  const CommandInfo* Find(std::string_view upper, uint64_t hash) const {
    for (size_t at = hash & mask_; slots_[at] != kEmpty; at = (at + 1) & mask_) {
      const CommandInfo& info = table_[static_cast<size_t>(slots_[at])];
      if (info.name == upper) return &info;
    }
    return nullptr;
  }

  // FNV-1a: command names are short, and the table is fixed. Step() adds one byte.
  static constexpr uint64_t kHashStart = 14695981039346656037ull;
  static uint64_t Step(uint64_t hash, char c) {
    return (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  static uint64_t Hash(std::string_view name) {
    uint64_t hash = kHashStart;
    for (char c : name) hash = Step(hash, c);
    return hash;
  }

 private:
  static constexpr int32_t kEmpty = -1;

  const std::vector<CommandInfo>& table_;
  std::vector<int32_t> slots_;
  size_t mask_ = 0;
};

const CommandIndex& Index() {
  static const CommandIndex index(Table());
  return index;
}

// Redis' string2ll subset for numkeys: plain non-negative decimal.
bool ParseCount(std::string_view text, int64_t& out) {
  std::optional<int64_t> value = common::ParseInteger<int64_t>(text);
  if (value) out = *value;
  return value && *value >= 0;
}

}  // namespace

std::string CommandInfo::UnsupportedError(std::string_view command) const {
  if (unsupported_reason.empty()) return "ERR unknown command '" + std::string(command) + "'";
  return "ERR command '" + LowerCase(command) +
         "' is not supported by shardproxy: " + std::string(unsupported_reason);
}

std::span<const CommandInfo> AllCommands() { return Table(); }

const CommandInfo& LookupCommand(std::string_view name) {
  // Longer than any command name: not in the table, no need to upper-case it.
  constexpr size_t kMaxName = 32;
  std::array<char, kMaxName> upper;  // only the name's bytes are written and read
  if (name.size() <= kMaxName) {
    // Upper-cased and hashed in one pass: on every request.
    uint64_t hash = CommandIndex::kHashStart;
    for (size_t i = 0; i < name.size(); ++i) {
      const char c = name[i];
      upper[i] = c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
      hash = CommandIndex::Step(hash, upper[i]);
    }
    const std::string_view key(upper.data(), name.size());
    if (const CommandInfo* info = Index().Find(key, hash)) return *info;
  }
  thread_local std::string unknown_name;
  thread_local CommandInfo unknown;
  unknown_name.assign(name);
  unknown = CommandInfo{unknown_name, RouteKind::kUnsupported};
  return unknown;
}

std::string LowerCase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return lower;
}

std::string WrongArgCountError(std::string_view command) {
  return "ERR wrong number of arguments for '" + LowerCase(command) + "' command";
}

namespace {

// XREAD ... STREAMS k1 k2 id1 id2: the keys are the first half of what follows STREAMS.
Result<KeyPositions> StreamKeys(const CommandInfo& info, std::string_view command,
                                std::span<const std::string_view> args) {
  // Redis' arity: XREAD STREAMS k id, XREADGROUP GROUP g c STREAMS k id.
  const size_t arity = info.name == "XREADGROUP" ? 7 : 4;
  if (args.size() < arity) return Error(WrongArgCountError(command));
  for (size_t i = static_cast<size_t>(info.keys.first); i < args.size(); ++i) {
    if (!EqualsIgnoringCase(args[i], "STREAMS")) continue;
    const size_t rest = args.size() - i - 1;
    if (rest == 0 || rest % 2 != 0) {
      return Error("ERR Unbalanced " + std::string(info.name) +
                   " list of streams: for each stream key an ID or '$' must be specified.");
    }
    return KeyPositions{i + 1, i + rest / 2, 1};
  }
  return Error("ERR syntax error");
}

// SORT ... STORE dest: the destination is a key too, the last STORE's when there are several.
// LIMIT's two arguments and GET's and BY's one are skipped over, so a pattern named "store" is
// not taken for the option (Redis' sortGetKeys reads them the same way).
void AddSortStore(std::span<const std::string_view> args, std::vector<size_t>& positions) {
  size_t store = 0;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoringCase(args[i], "LIMIT")) {
      i += 2;
    } else if (EqualsIgnoringCase(args[i], "GET") || EqualsIgnoringCase(args[i], "BY")) {
      i += 1;
    } else if (EqualsIgnoringCase(args[i], "STORE") && i + 1 < args.size()) {
      store = ++i;
    }
  }
  if (store > 0) positions.push_back(store);
}

}  // namespace

bool BlocksWithOption(const CommandInfo& info, std::span<const std::string_view> args) {
  if (!info.keys.after_streams) return false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (EqualsIgnoringCase(args[i], "STREAMS")) return false;
    if (EqualsIgnoringCase(args[i], "BLOCK")) return true;
  }
  return false;
}

Result<KeyPositions> ResolveKeys(const CommandInfo& info, std::span<const std::string_view> args) {
  const KeySpec& spec = info.keys;
  if (spec.first == 0) return KeyPositions{};
  const std::string_view command = args.empty() ? info.name : args[0];
  const size_t argc = args.size();
  const auto first = static_cast<size_t>(spec.first);
  if (spec.optional && argc <= first) return KeyPositions{};
  if (spec.after_streams) return StreamKeys(info, command, args);
  if (spec.numkeys_at > 0) {
    const auto at = static_cast<size_t>(spec.numkeys_at);
    if (argc <= at) return Error(WrongArgCountError(command));
    int64_t numkeys = 0;
    // 0 is a keyless EVAL, and refused by the commands that need a key: either way no slot.
    if (ParseCount(args[at], numkeys) && numkeys == 0) return KeyPositions{};
    // MSETEX: numkeys key/value pairs (step 2).
    const auto step = static_cast<size_t>(spec.step);
    if (!ParseCount(args[at], numkeys) || static_cast<uint64_t>(numkeys) > (argc - first) / step) {
      return KeyPositions{.numkeys_refused = true};
    }
    return KeyPositions{first, first + (static_cast<size_t>(numkeys) - 1) * step, step};
  }
  if (argc <= first) return Error(WrongArgCountError(command));
  const auto step = static_cast<size_t>(spec.step);
  size_t last = 0;
  if (spec.last < 0) {
    const auto from_end = static_cast<size_t>(-spec.last);
    if (argc < from_end || argc - from_end < first) return Error(WrongArgCountError(command));
    last = argc - from_end;
  } else {
    last = static_cast<size_t>(spec.last);
    if (last >= argc) return Error(WrongArgCountError(command));
  }
  // MSET k v k: the key list must end where a whole key/value group ends.
  if (step > 1 && (argc - first) % step != 0) return Error(WrongArgCountError(command));
  if (step > 1) last = argc - step;
  return KeyPositions{first, last, step};
}

Result<std::vector<size_t>> KeyArgumentPositions(std::span<const std::string_view> args) {
  if (args.empty()) return Error("ERR Invalid command specified");
  const CommandInfo& info = LookupCommand(args[0]);
  if (info.kind == RouteKind::kUnsupported) return Error("ERR Invalid command specified");
  if (info.keys.first == 0) return Error("ERR The command has no key arguments");
  auto keys = ResolveKeys(info, args);
  if (!keys || keys->numkeys_refused) return Error("ERR Invalid arguments specified for command");
  std::vector<size_t> positions;
  if (info.keys.dest_first && args.size() > 1) positions.push_back(1);
  for (size_t i = keys->first; keys->count() > 0 && i <= keys->last; i += keys->step) {
    positions.push_back(i);
  }
  if (info.name == "SORT") AddSortStore(args, positions);
  // EVAL with numkeys 0 has no keys and is fine (Redis: "no mandatory keys").
  if (positions.empty() && info.keys.numkeys_at == 0) {
    return Error("ERR Invalid arguments specified for command");
  }
  return positions;
}

Result<int> RequestSlot(const CommandInfo& info, std::span<const std::string_view> args) {
  auto keyed = RequestKeyedSlot(info, args);
  if (!keyed) return keyed.error();
  return keyed->slot;
}

Result<KeyedSlot> RequestKeyedSlot(const CommandInfo& info,
                                   std::span<const std::string_view> args) {
  // Most requests (GET, SET, INCR, HSET ...): one key, right after the command name. What
  // ResolveKeys() would find, without resolving.
  const KeySpec& spec = info.keys;
  if (spec.first == 1 && spec.last == 1 && spec.step == 1 && spec.numkeys_at == 0 &&
      !spec.after_streams && !spec.optional && !spec.dest_first && args.size() >= 2) {
    return KeyedSlot{common::KeySlot(args[1]), 1};
  }
  auto keys = ResolveKeys(info, args);
  if (!keys) return keys.error();
  const bool dest = info.keys.dest_first && args.size() > 1;
  if (keys->count() == 0) {
    return dest ? KeyedSlot{common::KeySlot(args[1]), 1} : KeyedSlot{};
  }
  const int slot = common::KeySlot(args[keys->first]);
  if (dest && common::KeySlot(args[1]) != slot) {
    return Error("CROSSSLOT Keys in request don't hash to the same slot");
  }
  for (size_t i = keys->first + keys->step; i <= keys->last; i += keys->step) {
    if (common::KeySlot(args[i]) != slot) {
      return Error("CROSSSLOT Keys in request don't hash to the same slot");
    }
  }
  return KeyedSlot{slot, dest ? size_t{1} : keys->first};
}

}  // namespace shardctl::proxy
