#include "launcher/cluster/shard_info.h"

#include <algorithm>
#include <string_view>

#include "common/cluster_text.h"
#include "common/numbers.h"

namespace shardctl::launcher {
namespace {

// The value of `key` in "k1=v1,k2=v2" (INFO's keyspace and replica lines).
std::string_view SubField(std::string_view text, std::string_view key) {
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=') {
      return item.substr(key.size() + 1);
    }
    start = comma + 1;
  }
  return {};
}

// Every "name:value" line of INFO whose name starts with `prefix` followed by digits
// ("db0", "slave1").
std::vector<std::pair<std::string, std::string>> NumberedLines(const std::string& info,
                                                               std::string_view prefix) {
  std::vector<std::pair<std::string, std::string>> found;
  size_t at = 0;
  while (at < info.size()) {
    size_t end = info.find('\n', at);
    if (end == std::string::npos) end = info.size();
    std::string_view line(info.data() + at, end - at);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const size_t colon = line.find(':');
    if (line.starts_with(prefix) && colon != std::string_view::npos && colon > prefix.size() &&
        std::all_of(line.begin() + prefix.size(), line.begin() + colon,
                    [](char c) { return c >= '0' && c <= '9'; })) {
      found.emplace_back(line.substr(0, colon), line.substr(colon + 1));
    }
    at = end + 1;
  }
  return found;
}

std::vector<int> MovingSlots(const std::string& cluster_nodes) {
  std::vector<int> slots;
  auto nodes = common::ParseClusterNodes(cluster_nodes);
  if (!nodes.ok()) return slots;
  // Redis lists migration markers on the line of the node that reports them ("myself").
  if (const common::NodeLine* me = common::FindMyself(*nodes)) {
    for (const auto& migration : me->migrations) slots.push_back(migration.slot);
  }
  return slots;
}

}  // namespace

ShardInfo ParseShardInfo(const std::string& info, const std::string& cluster_info,
                         const std::string& cluster_nodes) {
  ShardInfo shard;
  shard.up = true;
  auto number = [&](const char* field) { return InfoNumber<uint64_t>(info, field); };
  shard.role = InfoField(info, "role") == "slave" ? "replica" : "primary";
  shard.used_memory = number("used_memory");
  shard.maxmemory = number("maxmemory");
  shard.connected_clients = number("connected_clients");
  shard.total_commands_processed = number("total_commands_processed");
  shard.instantaneous_ops_per_sec = number("instantaneous_ops_per_sec");
  shard.keyspace_hits = number("keyspace_hits");
  shard.keyspace_misses = number("keyspace_misses");
  shard.evicted_keys = number("evicted_keys");
  shard.rdb_last_cow_size = number("rdb_last_cow_size");
  shard.total_forks = number("total_forks");
  shard.latest_fork_usec = number("latest_fork_usec");
  shard.rdb_last_save_time = InfoNumber<int64_t>(info, "rdb_last_save_time");
  shard.forking = InfoField(info, "rdb_bgsave_in_progress") == "1" ||
                  InfoField(info, "aof_rewrite_in_progress") == "1";
  for (const auto& [db, text] : NumberedLines(info, "db")) {
    shard.db_keys.emplace_back(db,
                               common::ParseInteger<uint64_t>(SubField(text, "keys")).value_or(0));
  }
  for (const auto& [name, text] : NumberedLines(info, "slave")) {
    shard.replicas.push_back(
        {.ip = std::string(SubField(text, "ip")),
         .port = common::ParseInteger<int>(SubField(text, "port")).value_or(0),
         .state = std::string(SubField(text, "state")),
         .lag_seconds = common::ParseInteger<int64_t>(SubField(text, "lag")).value_or(0)});
  }
  shard.cluster_ok = InfoField(cluster_info, "cluster_state") == "ok";
  shard.moving_slots = MovingSlots(cluster_nodes);
  return shard;
}

common::Result<ShardInfo> QueryShardInfo(RedisConnection& connection) {
  auto replies = connection.Pipeline({{"INFO"}, {"CLUSTER", "INFO"}, {"CLUSTER", "NODES"}});
  if (!replies.ok()) return replies.error();
  for (const auto& reply : *replies) {
    if (!reply.ok()) return reply.error();
  }
  return ParseShardInfo(*(*replies)[0], *(*replies)[1], *(*replies)[2]);
}

ShardInfo ProbeShardInfo(const Access& access, const std::string& host, int port,
                         std::chrono::milliseconds timeout) {
  auto connection = RedisConnection::Connect(access, host, port, timeout);
  if (!connection.ok()) return {};
  auto info = QueryShardInfo(*connection);
  return info.ok() ? std::move(info).value() : ShardInfo{};
}

}  // namespace shardctl::launcher
