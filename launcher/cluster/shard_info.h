// One shard's numbers as Redis reports them (INFO, CLUSTER INFO, CLUSTER NODES), for the
// supervisor's /metrics and `shardctl top`.
//
//   QueryShardInfo (one pipelined round trip) ──▶ ParseShardInfo (pure) ──▶ ShardInfo
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

// A replica as its primary's INFO replication lists it ("slave0:ip=...,port=...,state=...,lag=").
struct ReplicaLink {
  std::string ip;
  int port = 0;
  std::string state;  // online, wait_bgsave, send_bulk, ...
  int64_t lag_seconds = 0;
  friend bool operator==(const ReplicaLink&, const ReplicaLink&) = default;
};

struct ShardInfo {
  bool up = false;   // the shard answered every command
  std::string role;  // "primary" or "replica" (INFO replication)
  uint64_t used_memory = 0;
  uint64_t maxmemory = 0;
  uint64_t connected_clients = 0;
  uint64_t total_commands_processed = 0;
  uint64_t instantaneous_ops_per_sec = 0;  // Redis' own recent rate
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t evicted_keys = 0;
  uint64_t rdb_last_cow_size = 0;  // bytes copied on write during the last RDB fork
  uint64_t total_forks = 0;
  uint64_t latest_fork_usec = 0;   // how long the last fork() call took
  int64_t rdb_last_save_time = 0;  // unix seconds (the start time when never saved)
  bool forking = false;            // a BGSAVE or AOF rewrite runs now
  std::vector<std::pair<std::string, uint64_t>> db_keys;  // ("db0", keys) per keyspace line
  std::vector<ReplicaLink> replicas;                      // a primary's replicas
  bool cluster_ok = false;                                // CLUSTER INFO cluster_state:ok
  std::vector<int> moving_slots;  // slots this node migrates or imports (CLUSTER NODES markers)
};

// Pure: a ShardInfo from the text of INFO (default sections), CLUSTER INFO and CLUSTER NODES.
// Missing fields stay 0; `up` is set (the caller had the replies).
ShardInfo ParseShardInfo(const std::string& info, const std::string& cluster_info,
                         const std::string& cluster_nodes);

// Asks for INFO, CLUSTER INFO and CLUSTER NODES in one round trip on `connection`. An error means
// the connection is broken (or the shard refused a command); make a new one. Blocking.
common::Result<ShardInfo> QueryShardInfo(RedisConnection& connection);

// The same over a new connection to host:port, the connect and each reply bounded by `timeout`.
// A shard that does not answer comes back with up == false. Blocking: never on an event loop.
ShardInfo ProbeShardInfo(const Access& access, const std::string& host, int port,
                         std::chrono::milliseconds timeout);

}  // namespace shardctl::launcher
