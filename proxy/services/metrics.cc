#include "proxy/services/metrics.h"

#include <algorithm>
#include <chrono>

#include "common/prometheus.h"

namespace shardctl::proxy {
namespace {

using common::MetricsWriter;
using common::MetricType;

// Commands counted under their own name: what most workloads are made of.
constexpr std::string_view kNamedCommands[] = {
    "GET",           "SET",   "MGET",    "MSET",    "DEL",    "EXISTS",  "INCR",
    "INCRBY",        "DECR",  "EXPIRE",  "TTL",     "SETEX",  "GETDEL",  "HGET",
    "HSET",          "HMGET", "HGETALL", "HINCRBY", "HDEL",   "LPUSH",   "RPUSH",
    "LPOP",          "RPOP",  "LRANGE",  "LLEN",    "SADD",   "SREM",    "SMEMBERS",
    "SISMEMBER",     "SCARD", "ZADD",    "ZRANGE",  "ZSCORE", "ZINCRBY", "ZREM",
    "ZRANGEBYSCORE", "XADD",  "XRANGE",  "EVALSHA", "EVAL",   "PUBLISH", "PING",
};

std::string_view KindFamily(RouteKind kind) {
  switch (kind) {
    case RouteKind::kSingleKey:
      return "kind_single_key";
    case RouteKind::kSplitBySlot:
      return "kind_split";
    case RouteKind::kOneSlot:
      return "kind_one_slot";
    case RouteKind::kLocal:
      return "kind_local";
    case RouteKind::kFanOut:
      return "kind_fanout";
    case RouteKind::kScan:
      return "kind_scan";
    case RouteKind::kBlocking:
      return "kind_blocking";
    case RouteKind::kPubSub:
      return "kind_pubsub";
    case RouteKind::kUnsupported:
      break;
  }
  return "kind_unsupported";
}

constexpr RouteKind kKinds[] = {
    RouteKind::kSingleKey, RouteKind::kSplitBySlot, RouteKind::kOneSlot,
    RouteKind::kLocal,     RouteKind::kFanOut,      RouteKind::kScan,
    RouteKind::kBlocking,  RouteKind::kPubSub,      RouteKind::kUnsupported};

// The family names and, for every entry of AllCommands(), its family. Built once.
struct FamilyTable {
  std::vector<std::string> owned_names;
  std::vector<std::string_view> names;
  std::vector<uint32_t> of_command;
  uint32_t other = 0;

  FamilyTable() {
    for (std::string_view name : kNamedCommands) owned_names.push_back(LowerCase(name));
    for (RouteKind kind : kKinds) owned_names.emplace_back(KindFamily(kind));
    owned_names.emplace_back("other");
    names.assign(owned_names.begin(), owned_names.end());
    other = static_cast<uint32_t>(names.size() - 1);
    for (const CommandInfo& info : AllCommands()) {
      const auto* named =
          std::find(std::begin(kNamedCommands), std::end(kNamedCommands), info.name);
      const size_t kind_index = static_cast<size_t>(
          std::find(std::begin(kKinds), std::end(kKinds), info.kind) - std::begin(kKinds));
      of_command.push_back(named != std::end(kNamedCommands)
                               ? static_cast<uint32_t>(named - std::begin(kNamedCommands))
                               : static_cast<uint32_t>(std::size(kNamedCommands) + kind_index));
    }
  }
};

const FamilyTable& Families() {
  static const FamilyTable table;
  return table;
}

}  // namespace

std::span<const std::string_view> CommandFamilies() { return Families().names; }

uint32_t CommandFamilyOf(const CommandInfo& info) {
  const auto at = reinterpret_cast<uintptr_t>(&info);
  const auto begin = reinterpret_cast<uintptr_t>(AllCommands().data());
  if (at < begin || (at - begin) / sizeof(CommandInfo) >= AllCommands().size()) {
    return Families().other;
  }
  return Families().of_command[(at - begin) / sizeof(CommandInfo)];
}

ThreadMetrics::ThreadMetrics()
    : table_(AllCommands().data()),
      table_size_(AllCommands().size()),
      family_of_(Families().of_command.data()),
      other_(Families().other),
      families_(new Family[Families().names.size()]) {}

uint64_t ThreadMetrics::ClockNs() {
  const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<uint64_t>(
             std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count()) |
         1;  // never 0, which means "not timed" in a CommandStamp
}

uint64_t ThreadMetrics::commands(size_t family) const {
  return families_[family].commands.load(std::memory_order_relaxed);
}

uint64_t ThreadMetrics::bucket(size_t family, size_t bucket) const {
  return families_[family].buckets[bucket].load(std::memory_order_relaxed);
}

uint64_t ThreadMetrics::duration_sum_ns(size_t family) const {
  return families_[family].sum_ns.load(std::memory_order_relaxed);
}

ProxyMetrics::ProxyMetrics(int threads)
    : threads_(new ThreadMetrics[static_cast<size_t>(threads)]),
      thread_count_(static_cast<size_t>(threads)) {}

void ProxyMetrics::CountBackendError(const std::string& host, int port) {
  constexpr size_t kMaxShards = 1024;
  std::string shard = host + ":" + std::to_string(port);
  std::lock_guard lock(mutex_);
  if (backend_errors_.size() >= kMaxShards && !backend_errors_.contains(shard)) shard = "other";
  ++backend_errors_[shard];
}

ProxyMetricsSnapshot ProxyMetrics::Snapshot() const {
  ProxyMetricsSnapshot snapshot;
  const auto names = CommandFamilies();
  for (size_t f = 0; f < names.size(); ++f) {
    ProxyMetricsSnapshot::Family family{.name = names[f]};
    uint64_t sum_ns = 0;
    for (size_t t = 0; t < thread_count_; ++t) {
      const ThreadMetrics& thread = threads_[t];
      family.commands += thread.commands(f);
      for (size_t b = 0; b < family.buckets.size(); ++b) family.buckets[b] += thread.bucket(f, b);
      sum_ns += thread.duration_sum_ns(f);
    }
    family.duration_sum_seconds = static_cast<double>(sum_ns) / 1e9;
    if (family.commands > 0) snapshot.families.push_back(family);
  }
  std::lock_guard lock(mutex_);
  snapshot.backend_errors = backend_errors_;
  return snapshot;
}

std::string RenderProxyMetrics(const ProxyMetricsSnapshot& snapshot) {
  MetricsWriter out;
  out.Family("shardproxy_commands_total", MetricType::kCounter,
             "Commands read from clients, by family (the command, or its routing kind).");
  for (const auto& family : snapshot.families) {
    out.Sample({{"cmd", std::string(family.name)}}, static_cast<double>(family.commands));
  }
  out.Family("shardproxy_command_duration_seconds", MetricType::kHistogram,
             "From reading a command to its complete reply, by family.");
  for (const auto& family : snapshot.families) {
    out.Histogram({{"cmd", std::string(family.name)}}, kDurationBounds, family.buckets,
                  family.duration_sum_seconds);
  }
  out.Family("shardproxy_client_connections", MetricType::kGauge, "Clients connected now.");
  out.Sample({}, static_cast<double>(snapshot.client_connections));
  out.Family("shardproxy_backend_errors_total", MetricType::kCounter,
             "Shard connections that failed (connect, read, write or timeout), by shard.");
  for (const auto& [shard, errors] : snapshot.backend_errors) {
    out.Sample({{"shard", shard}}, static_cast<double>(errors));
  }
  out.Family("shardproxy_redirects_total", MetricType::kCounter,
             "MOVED and ASK redirects the proxy followed, by kind.");
  out.Sample({{"kind", "moved"}}, static_cast<double>(snapshot.moved));
  out.Sample({{"kind", "ask"}}, static_cast<double>(snapshot.ask));
  out.Family("shardproxy_slot_map_version", MetricType::kGauge,
             "Version of the slot map in use; it grows with every change the proxy sees.");
  out.Sample({}, static_cast<double>(snapshot.slot_map_version));
  if (snapshot.hot_keys.empty() && snapshot.hot_slots.empty()) return out.text();
  out.Family("shardproxy_hot_key_requests_total", MetricType::kCounter,
             "Requests for the hottest keys the proxy routed (Space-Saving top-K: at most the "
             "key's error too high), by key.");
  for (const HotKey& key : snapshot.hot_keys) {
    out.Sample({{"key", key.key}}, static_cast<double>(key.count));
  }
  out.Family("shardproxy_hot_key_reads_total", MetricType::kCounter,
             "Of those, requests of read-only commands since the key entered the table.");
  for (const HotKey& key : snapshot.hot_keys) {
    out.Sample({{"key", key.key}}, static_cast<double>(key.reads));
  }
  out.Family("shardproxy_slot_requests_total", MetricType::kCounter,
             "Requests the proxy routed to the busiest slots, by slot.");
  for (const auto& [slot, requests] : snapshot.hot_slots) {
    out.Sample({{"slot", std::to_string(slot)}}, static_cast<double>(requests));
  }
  return out.text();
}

}  // namespace shardctl::proxy
