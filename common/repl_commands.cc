#include "common/repl_commands.h"

#include <algorithm>
#include <unordered_map>

#include "common/numbers.h"

namespace shardctl::common {
namespace {

constexpr ReplKeySpec kFirstKey{.first = 1, .last = 1};
constexpr ReplKeySpec kTwoKeys{.first = 1, .last = 2};
constexpr ReplKeySpec kAllKeys{.first = 1, .last = -1};
constexpr ReplKeySpec kKeyValuePairs{.first = 1, .last = -2, .step = 2};
// MSETEX numkeys key value [key value ...] [options]: numkeys pairs after the count.
constexpr ReplKeySpec kCountedPairs{.first = 0, .last = 0, .step = 2, .numkeys_at = 1};

constexpr ReplCommandInfo Single(std::string_view name) {
  return {.name = name, .route = ReplRoute::kSingleKey, .keys = kFirstKey};
}
constexpr ReplCommandInfo Together(std::string_view name, ReplKeySpec keys) {
  return {.name = name, .route = ReplRoute::kKeysTogether, .keys = keys};
}
constexpr ReplCommandInfo Independent(std::string_view name, ReplKeySpec keys) {
  return {.name = name, .route = ReplRoute::kIndependentKeys, .keys = keys};
}
constexpr ReplCommandInfo Keyless(std::string_view name, ReplRoute route) {
  return {.name = name, .route = route};
}
constexpr ReplCommandInfo FanOut(std::string_view name, std::string_view subcommands = {},
                                 bool selected_db_only = false) {
  return {.name = name,
          .route = ReplRoute::kFanOut,
          .fan_out_subcommands = subcommands,
          .selected_db_only = selected_db_only};
}
constexpr ReplCommandInfo Refused(std::string_view name, std::string_view refusal) {
  return {.name = name, .route = ReplRoute::kRefused, .refusal = refusal};
}

// clang-format off
constexpr ReplCommandInfo kCommands[] = {
    // Replication's own traffic, and messages (PUBLISH is replicated in standalone mode): they
    // carry no data, and the cluster's subscribers are not the source's.
    Keyless("PING", ReplRoute::kSkip), Keyless("REPLCONF", ReplRoute::kSkip),
    Keyless("PUBLISH", ReplRoute::kSkip), Keyless("SPUBLISH", ReplRoute::kSkip),
    Keyless("SELECT", ReplRoute::kSelect), Keyless("MULTI", ReplRoute::kMulti),
    Keyless("EXEC", ReplRoute::kExec), Keyless("DISCARD", ReplRoute::kDiscard),

    // Strings and bitmaps.
    Single("SET"), Single("SETNX"), Single("SETEX"), Single("PSETEX"), Single("APPEND"),
    Single("INCR"), Single("DECR"), Single("INCRBY"), Single("DECRBY"), Single("INCRBYFLOAT"),
    Single("SETRANGE"), Single("GETSET"), Single("GETDEL"), Single("GETEX"), Single("SETBIT"),
    Single("BITFIELD"), Single("DELIFEQ"), Single("DELEX"),
    Together("BITOP", {.first = 2, .last = -1}),
    Independent("MSET", kKeyValuePairs), Together("MSETNX", kKeyValuePairs),
    Together("MSETEX", kCountedPairs),  // Valkey 9.1: with NX, all or none

    // Any key.
    Independent("DEL", kAllKeys), Independent("UNLINK", kAllKeys),
    Single("EXPIRE"), Single("PEXPIRE"), Single("EXPIREAT"), Single("PEXPIREAT"),
    Single("PERSIST"), Single("RESTORE"), Single("RESTORE-ASKING"),
    Together("RENAME", kTwoKeys), Together("RENAMENX", kTwoKeys), Together("COPY", kTwoKeys),
    Together("SORT", {.first = 1, .last = 1, .store_options_from = 2}),
    Refused("MOVE", "moves a key to another db; a cluster has only db 0"),
    Refused("SWAPDB", "swaps two dbs; a cluster has only db 0"),

    // Hashes (field expiry: Redis 7.4+, Valkey 9+).
    Single("HSET"), Single("HSETNX"), Single("HMSET"), Single("HDEL"), Single("HINCRBY"),
    Single("HINCRBYFLOAT"), Single("HEXPIRE"), Single("HPEXPIRE"), Single("HEXPIREAT"),
    Single("HPEXPIREAT"), Single("HPERSIST"), Single("HSETEX"), Single("HGETEX"),
    Single("HGETDEL"),

    // Lists. The blocking moves are replicated as LMOVE / RPOPLPUSH; older primaries may differ.
    Single("LPUSH"), Single("RPUSH"), Single("LPUSHX"), Single("RPUSHX"), Single("LPOP"),
    Single("RPOP"), Single("LINSERT"), Single("LSET"), Single("LREM"), Single("LTRIM"),
    Together("LMOVE", kTwoKeys), Together("RPOPLPUSH", kTwoKeys), Together("BLMOVE", kTwoKeys),
    Together("BRPOPLPUSH", kTwoKeys), Together("LMPOP", {.numkeys_at = 1}),

    // Sets.
    Single("SADD"), Single("SREM"), Single("SPOP"), Together("SMOVE", kTwoKeys),
    Together("SINTERSTORE", kAllKeys), Together("SUNIONSTORE", kAllKeys),
    Together("SDIFFSTORE", kAllKeys),

    // Sorted sets.
    Single("ZADD"), Single("ZINCRBY"), Single("ZREM"), Single("ZREMRANGEBYSCORE"),
    Single("ZREMRANGEBYRANK"), Single("ZREMRANGEBYLEX"), Single("ZPOPMIN"), Single("ZPOPMAX"),
    Together("ZUNIONSTORE", {.first = 1, .last = 1, .numkeys_at = 2}),
    Together("ZINTERSTORE", {.first = 1, .last = 1, .numkeys_at = 2}),
    Together("ZDIFFSTORE", {.first = 1, .last = 1, .numkeys_at = 2}),
    Together("ZRANGESTORE", kTwoKeys), Together("ZMPOP", {.numkeys_at = 1}),

    // Streams. XGROUP's key follows its subcommand (XGROUP CREATE key group id).
    Single("XADD"), Single("XTRIM"), Single("XDEL"), Single("XDELEX"), Single("XCLAIM"),
    Single("XAUTOCLAIM"), Single("XACK"), Single("XACKDEL"), Single("XSETID"),
    {.name = "XGROUP", .route = ReplRoute::kSingleKey, .keys = {.first = 2, .last = 2}},

    // HyperLogLog. PFCOUNT is replicated when it refreshes the cached cardinality of its key.
    Single("PFADD"), Together("PFMERGE", kAllKeys), Together("PFCOUNT", kAllKeys),

    // Geo.
    Single("GEOADD"), Together("GEOSEARCHSTORE", kTwoKeys),
    Together("GEORADIUS", {.first = 1, .last = 1, .store_options_from = 6}),
    Together("GEORADIUSBYMEMBER", {.first = 1, .last = 1, .store_options_from = 5}),

    // Vector sets (Redis 8).
    Single("VADD"), Single("VREM"), Single("VSETATTR"),

    // Scripts replicated verbatim by old primaries (Redis < 5, or lua-replicate-commands no): the
    // script runs where its declared keys are, as a cluster client would run it.
    Together("EVAL", {.numkeys_at = 2}), Together("EVALSHA", {.numkeys_at = 2}),

    // Server-wide writes. FLUSHALL empties db 0 too, so it is mirrored whatever db is selected;
    // FLUSHDB only when db 0 is. Functions and scripts must exist on every primary that may run
    // them. FUNCTION RESTORE's APPEND/REPLACE/FLUSH policy applies on each primary alike.
    FanOut("FLUSHALL"), FanOut("FLUSHDB", {}, /*selected_db_only=*/true),
    FanOut("FUNCTION", "LOAD DELETE FLUSH RESTORE"), FanOut("SCRIPT", "LOAD FLUSH"),
};
// clang-format on

// Where the fixed part of the spec ends for `size` arguments; below `first` when the arguments
// end before the keys do.
int LastFixedKey(const ReplKeySpec& keys, int size) {
  return keys.last < 0 ? size + keys.last : keys.last;
}

Status AddFixedKeys(const ReplCommandInfo& info, int size, std::vector<size_t>& positions) {
  const ReplKeySpec& keys = info.keys;
  if (keys.first == 0) return Ok();
  const int last = LastFixedKey(keys, size);
  if (last < keys.first || last >= size || (last - keys.first) % keys.step != 0) {
    return Error(std::string(info.name) + ": wrong number of arguments (" +
                 std::to_string(size - 1) + ") for its keys");
  }
  for (int at = keys.first; at <= last; at += keys.step) positions.push_back(size_t(at));
  return Ok();
}

Status AddCountedKeys(const ReplCommandInfo& info, std::span<const std::string> args,
                      std::vector<size_t>& positions) {
  const size_t at = static_cast<size_t>(info.keys.numkeys_at);
  if (at == 0) return Ok();
  // Keys alone (ZUNIONSTORE), or each followed by its value (MSETEX: step 2).
  const size_t step = static_cast<size_t>(info.keys.step);
  const std::optional<int64_t> count =
      at < args.size()
          ? ParseIntegerIn<int64_t>(args[at], 0, int64_t((args.size() - at - 1) / step))
          : std::nullopt;
  if (at >= args.size()) return Error(std::string(info.name) + ": numkeys is missing");
  if (!count) {
    return Error(std::string(info.name) + ": numkeys '" + args[at].substr(0, 32) +
                 "' is not a count of the keys that follow it");
  }
  for (size_t i = 0; i < static_cast<size_t>(*count); ++i) positions.push_back(at + 1 + i * step);
  return Ok();
}

// SORT's and GEORADIUS' options: STORE/STOREDIST name a key; LIMIT, BY, GET and COUNT take
// values, skipped so that a value spelled "store" is not taken for the option.
Status AddStoreKeys(const ReplCommandInfo& info, std::span<const std::string> args,
                    std::vector<size_t>& positions) {
  for (size_t at = static_cast<size_t>(info.keys.store_options_from); at != 0 && at < args.size();
       ++at) {
    const std::string option = UpperCase(args[at]);
    if (option == "STORE" || option == "STOREDIST") {
      if (at + 1 >= args.size()) {
        return Error(std::string(info.name) + ": " + option + " is not followed by a key");
      }
      positions.push_back(++at);
    } else if (option == "LIMIT") {
      at += 2;
    } else if (option == "BY" || option == "GET" || option == "COUNT") {
      ++at;
    }
  }
  return Ok();
}

}  // namespace

std::string UpperCase(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? char(c - 32) : c; });
  return upper;
}

std::span<const ReplCommandInfo> AllReplCommands() { return kCommands; }

const ReplCommandInfo* FindReplCommand(std::string_view name) {
  static const auto* const kByName = [] {
    auto* by_name = new std::unordered_map<std::string_view, const ReplCommandInfo*>;
    for (const ReplCommandInfo& info : kCommands) by_name->emplace(info.name, &info);
    return by_name;
  }();
  const auto found = kByName->find(UpperCase(name));
  return found == kByName->end() ? nullptr : found->second;
}

Result<std::vector<size_t>> ReplKeyPositions(const ReplCommandInfo& info,
                                             std::span<const std::string> args) {
  std::vector<size_t> positions;
  const int size = static_cast<int>(std::min<size_t>(args.size(), INT32_MAX));
  if (Status fixed = AddFixedKeys(info, size, positions); !fixed) return fixed.error();
  if (Status counted = AddCountedKeys(info, args, positions); !counted) return counted.error();
  if (Status stored = AddStoreKeys(info, args, positions); !stored) return stored.error();
  return positions;
}

}  // namespace shardctl::common
