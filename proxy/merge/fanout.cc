#include "proxy/merge/fanout.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "common/numbers.h"
#include "common/resp.h"
#include "common/text.h"
#include "proxy/merge/frames.h"

namespace shardctl::proxy {
namespace {

using common::Error;
using common::Result;
constexpr auto Is = common::MatchesUpperCase;

bool IsNull(std::string_view frame) {
  return frame == "$-1\r\n" || frame == "*-1\r\n" || frame == "_\r\n";
}

std::string SumIntegers(std::span<const std::string_view> replies) {
  int64_t sum = 0;
  for (std::string_view reply : replies) {
    int64_t value = 0;
    if (!ParseIntegerReply(reply, value)) return MergeError("expected an integer reply");
    sum += value;
  }
  std::string out;
  common::AppendInteger(out, sum);
  return out;
}

std::string MinInteger(std::span<const std::string_view> replies) {
  std::optional<int64_t> least;
  for (std::string_view reply : replies) {
    int64_t value = 0;
    if (!ParseIntegerReply(reply, value)) return MergeError("expected an integer reply");
    if (!least || value < *least) least = value;
  }
  std::string out;
  common::AppendInteger(out, *least);
  return out;
}

// Every shard answers the same names in the request's order; only the counts differ.
std::string SumPairs(std::span<const std::string_view> replies) {
  std::vector<std::string_view> names;
  std::vector<int64_t> counts;
  for (size_t r = 0; r < replies.size(); ++r) {
    auto elements = ArrayElements(replies[r]);
    if (!elements) return MergeError(elements.error().message());
    if (elements->size() % 2 != 0) return MergeError("expected name, count pairs");
    if (r == 0) {
      counts.assign(elements->size() / 2, 0);
      for (size_t i = 0; i < elements->size(); i += 2) names.push_back((*elements)[i]);
    }
    if (elements->size() / 2 != counts.size()) return MergeError("shards answered differently");
    for (size_t i = 0; i < counts.size(); ++i) {
      int64_t value = 0;
      if (!ParseIntegerReply((*elements)[2 * i + 1], value)) return MergeError("expected counts");
      counts[i] += value;
    }
  }
  std::string out;
  common::AppendArrayHeader(out, 2 * counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    out += names[i];
    common::AppendInteger(out, counts[i]);
  }
  return out;
}

// Every shard's elements in one array; with `unique`, each element once (channel names can be
// on several nodes; keys never are, so KEYS skips the search).
std::string ConcatArrays(std::span<const std::string_view> replies, bool unique) {
  std::vector<std::string_view> all;
  for (std::string_view reply : replies) {
    auto elements = ArrayElements(reply, /*allow_set=*/true);
    if (!elements) return MergeError(elements.error().message());
    for (std::string_view element : *elements) {
      if (!unique || std::find(all.begin(), all.end(), element) == all.end()) {
        all.push_back(element);
      }
    }
  }
  std::string out;
  common::AppendArrayHeader(out, all.size());
  for (std::string_view element : all) out += element;
  return out;
}

std::string AndIntegerArrays(std::span<const std::string_view> replies) {
  std::vector<int64_t> all;
  for (size_t r = 0; r < replies.size(); ++r) {
    auto elements = ArrayElements(replies[r]);
    if (!elements) return MergeError(elements.error().message());
    if (r == 0) all.assign(elements->size(), 1);
    if (elements->size() != all.size()) return MergeError("shards answered different lengths");
    for (size_t i = 0; i < elements->size(); ++i) {
      int64_t value = 0;
      if (!ParseIntegerReply((*elements)[i], value)) return MergeError("expected integers");
      all[i] = all[i] && value;
    }
  }
  std::string out;
  common::AppendArrayHeader(out, all.size());
  for (int64_t value : all) common::AppendInteger(out, value);
  return out;
}

// SCRIPT/FUNCTION KILL: one shard's +OK is the answer. Without one, the shard that runs a
// script says why it was not stopped (BUSY: a function, not a script; UNKILLABLE: it wrote);
// the others' NOTBUSY only says they run none.
std::string AnyOk(std::span<const std::string_view> replies) {
  for (std::string_view reply : replies) {
    if (reply == "+OK\r\n") return std::string(reply);
  }
  for (std::string_view reply : replies) {
    if (!reply.starts_with("-NOTBUSY")) return std::string(reply);
  }
  return std::string(replies[0]);
}

// FUNCTION STATS ([running_script, engines] as an array or a RESP3 map): every shard has the
// same engines' counts; running_script is non-null on the shard running a function.
std::string RunningScript(std::span<const std::string_view> replies) {
  for (std::string_view reply : replies) {
    if (!reply.empty() && reply[0] == '-') return std::string(reply);
  }
  for (std::string_view reply : replies) {
    // A RESP3 map's pairs read as an array of twice as many elements.
    std::string flat(reply);
    const size_t header_end = flat.find("\r\n");
    if (flat[0] == '%' && header_end != std::string::npos) {
      auto pairs = common::ParseInteger<size_t>(flat.substr(1, header_end - 1));
      if (pairs) flat.replace(0, header_end, "*" + std::to_string(*pairs * 2));
    }
    auto fields = ArrayElements(flat);
    if (fields && fields->size() >= 2 && !IsNull((*fields)[1])) return std::string(reply);
  }
  return std::string(replies[0]);
}

}  // namespace

namespace {

constexpr FanOutPlan kAnyShard{false, FanOutMerge::kFirst};
constexpr FanOutPlan kEveryShardOk{true, FanOutMerge::kAllOk};

// SLOWLOG GET [count]: Redis' default is 10 entries, -1 means all. A count the shards will refuse
// keeps the default here; their error is what the client sees.
int64_t SlowlogLimit(std::span<const std::string_view> args) {
  if (args.size() < 3) return 10;
  std::optional<int64_t> count = common::ParseInteger<int64_t>(args[2]);
  return count && *count >= -1 ? *count : 10;
}

// Server-wide commands other than the keyspace's: what one Redis would answer about itself,
// made from every shard's answer, or any one shard's where they all answer alike.
std::optional<FanOutPlan> PlanServerCommand(std::string_view name, std::string_view sub,
                                            std::span<const std::string_view> args) {
  if (Is(name, "CONFIG")) {
    if (Is(sub, "GET") || Is(sub, "HELP")) return kAnyShard;
    // One Redis applies a setting to all of its keyspace: so does every shard.
    if (Is(sub, "SET") || Is(sub, "RESETSTAT") || Is(sub, "REWRITE")) return kEveryShardOk;
  }
  if (Is(name, "SLOWLOG")) {
    if (Is(sub, "GET")) return FanOutPlan{true, FanOutMerge::kNewestEntries, SlowlogLimit(args)};
    if (Is(sub, "LEN")) return FanOutPlan{true, FanOutMerge::kSumIntegers};
    if (Is(sub, "RESET")) return kEveryShardOk;
    if (Is(sub, "HELP")) return kAnyShard;
  }
  if (Is(name, "LATENCY")) {
    if (Is(sub, "RESET")) return FanOutPlan{true, FanOutMerge::kSumIntegers};
    if (Is(sub, "LATEST") || Is(sub, "HISTORY"))
      return FanOutPlan{true, FanOutMerge::kConcatArrays};
    if (Is(sub, "HISTOGRAM")) return FanOutPlan{true, FanOutMerge::kHistograms};
    if (Is(sub, "DOCTOR") || Is(sub, "GRAPH") || Is(sub, "HELP")) return kAnyShard;
  }
  // Any other word after CONFIG, SLOWLOG or LATENCY is no subcommand of Redis 7: a shard
  // answers it with Redis' own error ("unknown subcommand", "wrong number of arguments").
  if (Is(name, "CONFIG") || Is(name, "SLOWLOG") || Is(name, "LATENCY")) return kAnyShard;
  if (Is(name, "SAVE")) return kEveryShardOk;
  // Every shard starts its own background save; they answer alike.
  if (Is(name, "BGSAVE")) return FanOutPlan{true, FanOutMerge::kFirst};
  if (Is(name, "LASTSAVE") || Is(name, "TIME")) return kAnyShard;
  return std::nullopt;
}

// Scripts and functions are loaded on every shard, so any shard describes them; changes go to
// all of them.
std::optional<FanOutPlan> PlanScripting(std::string_view name, std::string_view sub) {
  if (Is(name, "SCRIPT")) {
    if (Is(sub, "LOAD")) return FanOutPlan{true, FanOutMerge::kSameReply};
    if (Is(sub, "FLUSH")) return kEveryShardOk;
    if (Is(sub, "EXISTS")) return FanOutPlan{true, FanOutMerge::kAndIntegerArrays};
    if (Is(sub, "KILL")) return FanOutPlan{true, FanOutMerge::kAnyOk};
    // SCRIPT DEBUG holds one connection's debugger session: not through the proxy. Other
    // words (HELP, a wrong subcommand): one shard answers with Redis' text.
    if (!Is(sub, "DEBUG")) return kAnyShard;
  }
  if (Is(name, "FUNCTION")) {
    if (Is(sub, "LOAD")) return FanOutPlan{true, FanOutMerge::kSameReply};
    if (Is(sub, "DELETE") || Is(sub, "FLUSH") || Is(sub, "RESTORE")) return kEveryShardOk;
    if (Is(sub, "KILL")) return FanOutPlan{true, FanOutMerge::kAnyOk};
    // Every shard has the same libraries; only one runs a given function.
    if (Is(sub, "STATS")) return FanOutPlan{true, FanOutMerge::kRunningScript};
    // LIST, DUMP, HELP, and any other word: one shard's answer is Redis' (its own error text).
    return kAnyShard;
  }
  return std::nullopt;
}

}  // namespace

Result<FanOutPlan> PlanFanOut(std::span<const std::string_view> args) {
  const std::string_view name = args[0];
  const std::string_view sub = args.size() > 1 ? args[1] : "";
  if (Is(name, "DBSIZE")) return FanOutPlan{true, FanOutMerge::kSumIntegers};
  if (Is(name, "KEYS")) return FanOutPlan{true, FanOutMerge::kConcatArrays};
  if (Is(name, "FLUSHALL") || Is(name, "FLUSHDB")) return kEveryShardOk;
  if (Is(name, "RANDOMKEY")) return FanOutPlan{true, FanOutMerge::kAnyNonNull};
  if (auto plan = PlanScripting(name, sub)) return *plan;
  if (auto plan = PlanServerCommand(name, sub, args)) return *plan;
  if (Is(name, "PUBSUB")) {
    // Each node knows only its own subscribers: ask every primary and add up.
    if (Is(sub, "CHANNELS") || Is(sub, "SHARDCHANNELS")) {
      return FanOutPlan{true, FanOutMerge::kUniqueArrays};
    }
    if (Is(sub, "NUMPAT")) return FanOutPlan{true, FanOutMerge::kSumIntegers};
    if (Is(sub, "NUMSUB") || Is(sub, "SHARDNUMSUB"))
      return FanOutPlan{true, FanOutMerge::kSumPairs};
  }
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  std::string lower_sub(sub);
  for (char& c : lower_sub) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return Error("ERR command '" + lower + (sub.empty() ? "" : "|" + lower_sub) +
               "' is not supported by shardproxy: it would apply to one shard only (run it on "
               "each shard, e.g. with redis-cli --cluster call)");
}

std::string MergeFanOut(FanOutMerge merge, std::span<const std::string_view> replies, size_t start,
                        int64_t limit) {
  if (replies.empty()) return MergeError("no shard to ask");
  if (merge == FanOutMerge::kAnyOk) return AnyOk(replies);
  if (merge == FanOutMerge::kRunningScript) return RunningScript(replies);
  for (std::string_view reply : replies) {
    if (!reply.empty() && reply[0] == '-') return std::string(reply);
  }
  switch (merge) {
    case FanOutMerge::kSumIntegers:
      return SumIntegers(replies);
    case FanOutMerge::kConcatArrays:
      return ConcatArrays(replies, /*unique=*/false);
    case FanOutMerge::kAllOk:
      for (std::string_view reply : replies) {
        if (reply != "+OK\r\n") return MergeError("expected +OK from every shard");
      }
      return "+OK\r\n";
    case FanOutMerge::kSameReply:
      for (std::string_view reply : replies) {
        if (reply != replies[0]) return MergeError("shards answered differently");
      }
      return std::string(replies[0]);
    case FanOutMerge::kAndIntegerArrays:
      return AndIntegerArrays(replies);
    case FanOutMerge::kAnyNonNull:
      for (size_t i = 0; i < replies.size(); ++i) {
        std::string_view reply = replies[(start + i) % replies.size()];
        if (!IsNull(reply)) return std::string(reply);
      }
      return std::string(replies[0]);
    case FanOutMerge::kFirst:
      return std::string(replies[0]);
    case FanOutMerge::kMinInteger:
      return MinInteger(replies);
    case FanOutMerge::kUniqueArrays:
      return ConcatArrays(replies, /*unique=*/true);
    case FanOutMerge::kSumPairs:
      return SumPairs(replies);
    case FanOutMerge::kNewestEntries:
      return MergeNewestEntries(replies, limit);
    case FanOutMerge::kHistograms:
      return MergeLatencyHistograms(replies);
    case FanOutMerge::kAnyOk:
    case FanOutMerge::kRunningScript:
      break;  // answered above, before errors pass through
  }
  return MergeError("internal error: unknown merge");
}

std::string MergeNewestEntries(std::span<const std::string_view> replies, int64_t limit) {
  struct Entry {
    int64_t time = 0;
    std::string_view frame;
  };
  std::vector<Entry> entries;
  for (std::string_view reply : replies) {
    auto elements = ArrayElements(reply);
    if (!elements) return MergeError(elements.error().message());
    for (std::string_view element : *elements) {
      auto fields = ArrayElements(element);
      Entry entry{0, element};
      if (!fields || fields->size() < 2 || !ParseIntegerReply((*fields)[1], entry.time)) {
        return MergeError("expected slow log entries");
      }
      entries.push_back(entry);
    }
  }
  // Each shard lists its entries newest first; a stable sort keeps that order within a second.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.time > b.time; });
  if (limit >= 0 && entries.size() > static_cast<size_t>(limit)) {
    entries.resize(static_cast<size_t>(limit));
  }
  std::string out;
  common::AppendArrayHeader(out, entries.size());
  for (const Entry& entry : entries) out += entry.frame;
  return out;
}

Result<ScanPosition> DecodeScanCursor(std::string_view text, size_t shards) {
  std::optional<uint64_t> parsed = common::ParseInteger<uint64_t>(text);
  if (!parsed) return Error("ERR invalid cursor");
  const uint64_t value = *parsed;
  ScanPosition position{value & ((1u << kScanShardBits) - 1), value >> kScanShardBits};
  if (position.shard >= shards) return Error("ERR invalid cursor");
  return position;
}

std::string EncodeScanCursor(ScanPosition position) {
  return std::to_string(position.cursor << kScanShardBits | position.shard);
}

std::string RewriteScanReply(std::string_view reply, size_t shard, size_t shards) {
  if (!reply.empty() && reply[0] == '-') return std::string(reply);
  auto elements = ArrayElements(reply);
  if (!elements || elements->size() != 2) return MergeError("unexpected SCAN reply");
  const std::string_view cursor_frame = (*elements)[0];
  const size_t header_end = cursor_frame.find("\r\n");
  if (cursor_frame.empty() || cursor_frame[0] != '$' || header_end == std::string_view::npos) {
    return MergeError("unexpected SCAN cursor");
  }
  const std::string_view text =
      cursor_frame.substr(header_end + 2, cursor_frame.size() - header_end - 4);
  std::optional<uint64_t> parsed = common::ParseInteger<uint64_t>(text);
  if (!parsed) return MergeError("unexpected SCAN cursor");
  const uint64_t cursor = *parsed;
  if (cursor >> (64 - kScanShardBits) != 0) return MergeError("shard cursor too large");
  ScanPosition next{shard, cursor};
  if (cursor == 0) next = {shard + 1, 0};
  std::string out;
  common::AppendArrayHeader(out, 2);
  common::AppendBulk(out, next.shard >= shards ? "0" : EncodeScanCursor(next));
  out += (*elements)[1];
  return out;
}

}  // namespace shardctl::proxy
