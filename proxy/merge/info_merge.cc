#include "proxy/merge/info_merge.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "common/numbers.h"

namespace shardctl::proxy {
namespace {

using Field = std::pair<std::string, std::string>;

bool SameName(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
  });
}

// The sections whose figures describe load or contents, which the cluster has the sum of.
bool Counts(std::string_view section) {
  for (std::string_view name :
       {"clients", "stats", "memory", "cpu", "commandstats", "errorstats", "keyspace"}) {
    if (SameName(section, name)) return true;
  }
  return false;
}

Field* FindField(std::vector<Field>& fields, std::string_view name) {
  for (Field& field : fields) {
    if (field.first == name) return &field;
  }
  return nullptr;
}

InfoSection* FindSection(std::vector<InfoSection>& sections, std::string_view name) {
  for (InfoSection& section : sections) {
    if (SameName(section.name, name)) return &section;
  }
  return nullptr;
}

// "calls=1,usec=5,usec_per_call=5.00" -> {calls,1} {usec,5} {usec_per_call,5.00}.
std::vector<Field> SplitList(std::string_view value) {
  std::vector<Field> items;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    const size_t equals = item.find('=');
    if (equals != std::string_view::npos) {
      items.emplace_back(std::string(item.substr(0, equals)), std::string(item.substr(equals + 1)));
    }
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return items;
}

std::optional<int64_t> Integer(std::string_view text) {
  return common::ParseInteger<int64_t>(text);
}

std::string Largest(const std::string& total, std::string_view more) {
  const auto a = Integer(total), b = Integer(more);
  return a && b ? std::to_string(std::max(*a, *b)) : total;
}

// usec_per_call is an average: made again from the summed usec and calls.
void RecomputeAverages(std::vector<Field>& items) {
  Field* per_call = FindField(items, "usec_per_call");
  Field* calls = FindField(items, "calls");
  Field* usec = FindField(items, "usec");
  if (per_call == nullptr || calls == nullptr || usec == nullptr) return;
  const auto c = Integer(calls->second), u = Integer(usec->second);
  if (!c || !u) return;
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", *c > 0 ? static_cast<double>(*u) / *c : 0.0);
  per_call->second = text;
}

// One shard's value added to the cluster's so far: integers summed, "a=1,b=2" lists summed item
// by item (avg_ttl: the largest), anything else kept as the first shard said it.
std::string AddValues(const std::string& total, std::string_view more) {
  const auto a = Integer(total), b = Integer(more);
  if (a && b) return std::to_string(*a + *b);
  if (total.find('=') == std::string::npos) return total;
  std::vector<Field> items = SplitList(total);
  for (const Field& item : SplitList(more)) {
    Field* same = FindField(items, item.first);
    if (same == nullptr) {
      items.push_back(item);
      continue;
    }
    const auto x = Integer(same->second), y = Integer(item.second);
    if (!x || !y) continue;
    same->second = std::to_string(item.first == "avg_ttl" ? std::max(*x, *y) : *x + *y);
  }
  RecomputeAverages(items);
  std::string out;
  for (const Field& item : items) {
    out += (out.empty() ? "" : ",") + item.first + "=" + item.second;
  }
  return out;
}

// Persistence describes each shard's own saves; the cluster's is what holds for all of them:
// writes not yet saved add up (rdb_changes_since_last_save: the dirty count tests and operators
// read), a save or load in progress on any shard is in progress, the data is saved as of the
// oldest shard's last save, and one shard's failed save fails the whole. Other fields (aof_enabled,
// times of the last run) are the first shard's.
enum class Persisted { kFirst, kSum, kAny, kOldest, kWorstStatus };

Persisted PersistenceRule(std::string_view field) {
  for (std::string_view summed :
       {"rdb_changes_since_last_save", "current_save_keys_processed", "current_save_keys_total",
        "rdb_saves", "aof_rewrites", "loading_loaded_bytes", "loading_total_bytes",
        "aof_pending_bio_fsync", "aof_delayed_fsync", "aof_buffer_length",
        "rdb_last_load_keys_expired", "rdb_last_load_keys_loaded"}) {
    if (field == summed) return Persisted::kSum;
  }
  if (field == "rdb_last_save_time") return Persisted::kOldest;
  if (field.ends_with("_status")) return Persisted::kWorstStatus;
  if (field == "loading" || field == "async_loading" || field.ends_with("_in_progress") ||
      field.ends_with("_scheduled") || field.ends_with("_consecutive_failures")) {
    return Persisted::kAny;
  }
  return Persisted::kFirst;
}

std::string MergePersisted(Persisted rule, const std::string& total, std::string_view more) {
  const auto a = Integer(total), b = Integer(more);
  switch (rule) {
    case Persisted::kSum:
      return a && b ? std::to_string(*a + *b) : total;
    case Persisted::kAny:
      return Largest(total, more);
    case Persisted::kOldest:
      return a && b ? std::to_string(std::min(*a, *b)) : total;
    case Persisted::kWorstStatus:
      return total == "ok" ? std::string(more) : total;
    case Persisted::kFirst:
      break;
  }
  return total;
}

// What every primary holds the same of, so the cluster's count is the largest shard's, not the
// sum: scripts and functions that SCRIPT LOAD and FUNCTION LOAD put on every primary (100
// scripts loaded through the proxy are 100, as on one Redis; a keyless EVAL's script cached on
// one primary only is not counted twice either way), and a tracking client of the proxy, which
// tracks on each primary with the same prefixes.
bool SameOnEveryPrimary(std::string_view field) {
  return field == "number_of_cached_scripts" || field == "number_of_functions" ||
         field == "number_of_libraries" || field == "tracking_clients" ||
         field == "tracking_total_prefixes";
}

void AddSection(std::vector<InfoSection>& merged, const InfoSection& section) {
  InfoSection* into = FindSection(merged, section.name);
  if (into == nullptr) {
    merged.push_back(section);
    return;
  }
  const bool counts = Counts(section.name);
  const bool persistence = SameName(section.name, "persistence");
  for (const Field& field : section.fields) {
    Field* same = FindField(into->fields, field.first);
    if (same == nullptr) {
      into->fields.push_back(field);
    } else if (counts && SameOnEveryPrimary(field.first)) {
      same->second = Largest(same->second, field.second);
    } else if (counts) {
      same->second = AddValues(same->second, field.second);
    } else if (persistence) {
      same->second = MergePersisted(PersistenceRule(field.first), same->second, field.second);
    }
  }
}

// The proxy's own figures replace the shards' where both have the field.
void Overlay(std::vector<InfoSection>& merged, const InfoSection& own) {
  InfoSection* into = FindSection(merged, own.name);
  if (into == nullptr) {
    merged.push_back(own);
    return;
  }
  for (const Field& field : own.fields) {
    Field* same = FindField(into->fields, field.first);
    if (same == nullptr) {
      into->fields.push_back(field);
    } else {
      same->second = field.second;
    }
  }
}

// "db0:keys=12,expires=3,avg_ttl=0" of one shard -> "keys=12,expires=3" (0 when it has none).
std::string ShardCounts(const std::vector<InfoSection>& sections) {
  int64_t keys = 0, expires = 0;
  for (const InfoSection& section : sections) {
    if (!SameName(section.name, "keyspace")) continue;
    for (const auto& [name, value] : section.fields) {
      if (name != "db0") continue;
      for (const auto& [item, number] : SplitList(value)) {
        if (item == "keys") keys = Integer(number).value_or(0);
        if (item == "expires") expires = Integer(number).value_or(0);
      }
    }
  }
  return "keys=" + std::to_string(keys) + ",expires=" + std::to_string(expires);
}

}  // namespace

std::vector<InfoSection> ParseInfo(std::string_view text) {
  std::vector<InfoSection> sections;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with("# ")) {
      sections.push_back({std::string(line.substr(2)), {}});
      continue;
    }
    const size_t colon = line.find(':');
    if (sections.empty() || colon == std::string_view::npos) continue;
    sections.back().fields.emplace_back(std::string(line.substr(0, colon)),
                                        std::string(line.substr(colon + 1)));
  }
  return sections;
}

std::string RenderInfo(std::span<const InfoSection> sections) {
  std::string out;
  for (const InfoSection& section : sections) {
    if (!out.empty()) out += "\r\n";
    out += "# " + section.name + "\r\n";
    for (const auto& [name, value] : section.fields) out += name + ":" + value + "\r\n";
  }
  return out;
}

std::string MergeInfo(std::span<const std::string_view> shard_texts,
                      std::span<const std::string> shards, std::string_view own_text) {
  std::vector<InfoSection> merged;
  InfoSection per_shard{"Shards", {}};
  bool keyspace = false;
  for (size_t i = 0; i < shard_texts.size(); ++i) {
    const std::string name = "shard" + std::to_string(i);
    const std::string addr = "addr=" + (i < shards.size() ? shards[i] : std::string("?"));
    if (shard_texts[i].starts_with('-')) {  // its error reply: named, not counted
      const std::string_view error = shard_texts[i].substr(0, shard_texts[i].find('\r'));
      per_shard.fields.emplace_back(name, addr + ",error=" + std::string(error));
      continue;
    }
    const std::vector<InfoSection> sections = ParseInfo(shard_texts[i]);
    for (const InfoSection& section : sections) {
      keyspace = keyspace || SameName(section.name, "keyspace");
      AddSection(merged, section);
    }
    per_shard.fields.emplace_back(name, addr + "," + ShardCounts(sections));
  }
  for (const InfoSection& own : ParseInfo(own_text)) Overlay(merged, own);
  if (keyspace) merged.push_back(std::move(per_shard));
  return RenderInfo(merged);
}

namespace {

// The text of a bulk ("$n\r\n...") or verbatim ("=n\r\ntxt:...") reply; nullopt for others.
std::optional<std::string_view> InfoText(std::string_view frame) {
  const size_t header = frame.find("\r\n");
  if (header == std::string_view::npos || frame.size() < header + 4 ||
      (frame[0] != '$' && frame[0] != '=')) {
    return std::nullopt;
  }
  std::string_view text = frame.substr(header + 2, frame.size() - header - 4);
  if (frame[0] == '=' && text.size() >= 4) text.remove_prefix(4);  // "txt:"
  return text;
}

class Info final : public ReplyAssembly {
 public:
  Info(std::string own_text, std::vector<std::string> shard_names, int protocol)
      : own_text_(std::move(own_text)), shard_names_(std::move(shard_names)), protocol_(protocol) {}
  size_t parts() const override { return shard_names_.size(); }

 private:
  std::string Assemble(std::span<const std::string_view> replies) override {
    // A shard that failed is named with its error; the others still describe the cluster.
    std::vector<std::string_view> texts;
    bool any = false;
    for (std::string_view reply : replies) {
      std::optional<std::string_view> text = InfoText(reply);
      any = any || text.has_value();
      texts.push_back(text ? *text : reply.substr(0, reply[0] == '-' ? reply.size() : 0));
    }
    if (!any) return std::string(replies[0]);
    return InfoFrame(MergeInfo(texts, shard_names_, own_text_), protocol_);
  }
  std::string own_text_;
  std::vector<std::string> shard_names_;
  int protocol_;
};

}  // namespace

std::unique_ptr<ReplyAssembly> InfoAssembly(std::string own_text,
                                            std::vector<std::string> shard_names, int protocol) {
  return std::make_unique<Info>(std::move(own_text), std::move(shard_names), protocol);
}

}  // namespace shardctl::proxy
