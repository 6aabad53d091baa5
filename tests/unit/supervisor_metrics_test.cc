// The supervisor's /metrics: ParseShardInfo (INFO, CLUSTER INFO and CLUSTER NODES text into
// numbers) and RenderSupervisorMetrics (the numbers into Prometheus text with redis_exporter's
// names and our labels).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "launcher/cluster/shard_info.h"
#include "launcher/supervisor/fork_scheduler.h"
#include "launcher/supervisor/metrics.h"

namespace shardctl::launcher {
namespace {

const char* const kPrimaryInfo =
    "# Server\r\nredis_version:7.0.15\r\nredis_mode:cluster\r\n\r\n"
    "# Clients\r\nconnected_clients:3\r\n\r\n"
    "# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:268435456\r\n\r\n"
    "# Persistence\r\nrdb_bgsave_in_progress:1\r\nrdb_last_save_time:1700000000\r\n"
    "rdb_last_cow_size:4096\r\naof_rewrite_in_progress:0\r\n\r\n"
    "# Stats\r\ntotal_commands_processed:12345\r\nevicted_keys:7\r\nkeyspace_hits:90\r\n"
    "keyspace_misses:10\r\nlatest_fork_usec:321\r\ntotal_forks:2\r\n\r\n"
    "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
    "slave0:ip=127.0.0.1,port=7003,state=online,offset=100,lag=0\r\n"
    "slave1:ip=::1,port=7004,state=wait_bgsave,offset=0,lag=3\r\n"
    "master_repl_offset:100\r\n\r\n"
    "# Keyspace\r\ndb0:keys=42,expires=1,avg_ttl=0\r\n";

const char* const kClusterNodes =
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000 myself,master - 0 0 1 "
    "connected 0-5460 [5461->-292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f] "
    "[93-<-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:7001@17001 master - 0 1 2 connected "
    "5461-10922\n";

TEST(ParseShardInfoTest, ReadsTheFieldsMetricsAndTopShow) {
  ShardInfo info = ParseShardInfo(kPrimaryInfo, "cluster_state:ok\r\n", kClusterNodes);
  EXPECT_TRUE(info.up);
  EXPECT_EQ(info.role, "primary");
  EXPECT_EQ(info.used_memory, 1048576u);
  EXPECT_EQ(info.maxmemory, 268435456u);
  EXPECT_EQ(info.connected_clients, 3u);
  EXPECT_EQ(info.total_commands_processed, 12345u);
  EXPECT_EQ(info.keyspace_hits, 90u);
  EXPECT_EQ(info.keyspace_misses, 10u);
  EXPECT_EQ(info.evicted_keys, 7u);
  EXPECT_EQ(info.rdb_last_cow_size, 4096u);
  EXPECT_EQ(info.total_forks, 2u);
  EXPECT_EQ(info.latest_fork_usec, 321u);
  EXPECT_EQ(info.rdb_last_save_time, 1700000000);
  EXPECT_TRUE(info.forking);
  ASSERT_EQ(info.db_keys.size(), 1u);
  EXPECT_EQ(info.db_keys[0], (std::pair<std::string, uint64_t>("db0", 42)));
  const std::vector<ReplicaLink> replicas = {{"127.0.0.1", 7003, "online", 0},
                                             {"::1", 7004, "wait_bgsave", 3}};
  EXPECT_EQ(info.replicas, replicas);
  EXPECT_TRUE(info.cluster_ok);
  EXPECT_EQ(info.moving_slots, (std::vector<int>{5461, 93}));
}

TEST(ParseShardInfoTest, ReplicaWithoutKeysOrMigrations) {
  ShardInfo info = ParseShardInfo("role:slave\r\nmaster_link_status:up\r\n",
                                  "cluster_state:fail\r\n", "not cluster nodes text");
  EXPECT_EQ(info.role, "replica");
  EXPECT_TRUE(info.db_keys.empty());
  EXPECT_TRUE(info.replicas.empty());
  EXPECT_FALSE(info.cluster_ok);
  EXPECT_TRUE(info.moving_slots.empty());
  EXPECT_FALSE(info.forking);
}

DeploymentMetrics TwoShards() {
  DeploymentMetrics metrics{.name = "main", .engine = "redis", .engine_version = "7.0.15"};
  ShardMetrics up{.index = 0, .port = 7000, .numa_node = 1, .restarts = 2};
  up.info = ParseShardInfo(kPrimaryInfo, "cluster_state:ok\r\n", kClusterNodes);
  up.cpu_seconds = 1.5;
  ShardMetrics down{.index = 1, .port = 7001, .planned_role = "replica"};
  metrics.shards = {up, down};
  return metrics;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(RenderSupervisorMetricsTest, RedisExporterNamesWithShardLabels) {
  const std::string text = RenderSupervisorMetrics(TwoShards());
  const std::string up = R"({shard="0",port="7000",role="primary",numa_node="1"})";
  const std::string down = R"({shard="1",port="7001",role="replica",numa_node="0"})";
  const std::vector<std::string> lines = {
      "# TYPE redis_up gauge",
      "redis_up" + up + " 1",
      "redis_up" + down + " 0",
      "redis_memory_used_bytes" + up + " 1048576",
      "redis_memory_max_bytes" + up + " 268435456",
      "redis_connected_clients" + up + " 3",
      "# TYPE redis_commands_processed_total counter",
      "redis_commands_processed_total" + up + " 12345",
      "redis_keyspace_hits_total" + up + " 90",
      "redis_keyspace_misses_total" + up + " 10",
      "redis_evicted_keys_total" + up + " 7",
      R"(redis_db_keys{shard="0",port="7000",role="primary",numa_node="1",db="db0"} 42)",
      "redis_rdb_last_cow_size_bytes" + up + " 4096",
      R"(redis_connected_slave_lag_seconds{shard="0",port="7000",role="primary",numa_node="1",)"
      R"(slave_ip="::1",slave_port="7004",slave_state="wait_bgsave"} 3)",
      "shardctl_shard_restarts_total" + up + " 2",
      "shardctl_shard_restarts_total" + down + " 0",
      "shardctl_shard_cpu_seconds_total" + up + " 1.5",
      "shardctl_forks_in_progress 1",
      "shardctl_fork_wait_seconds_total 0",
      "shardctl_cluster_state_ok 0",
      "shardctl_slot_moves_in_progress 2",
      R"(shardctl_deployment_info{name="main",engine="redis",engine_version="7.0.15"} 1)",
  };
  for (const auto& line : lines) EXPECT_TRUE(Has(text, line)) << line << "\nnot in:\n" << text;
  // A shard that did not answer has only redis_up and what the supervisor itself knows.
  EXPECT_FALSE(Has(text, "redis_memory_used_bytes" + down + " 0")) << text;
  EXPECT_EQ(text.find("shardctl_shard_cpu_seconds_total" + down), std::string::npos) << text;
}

TEST(RenderSupervisorMetricsTest, ClusterOkNeedsEveryShardAndSchedulerNumbersWin) {
  DeploymentMetrics metrics = TwoShards();
  metrics.shards[1].info = metrics.shards[0].info;
  metrics.shards[1].info.moving_slots = {5461};  // the other side of the same move
  metrics.shards[1].info.db_keys.clear();        // Redis prints no keyspace line without keys
  metrics.forks_in_progress = 0;
  metrics.fork_wait_seconds = 2.25;
  const std::string text = RenderSupervisorMetrics(metrics);
  EXPECT_TRUE(Has(text, "shardctl_cluster_state_ok 1")) << text;
  EXPECT_TRUE(Has(text, "shardctl_slot_moves_in_progress 2")) << text;
  EXPECT_TRUE(Has(text, "shardctl_forks_in_progress 0")) << text;
  EXPECT_TRUE(Has(text, "shardctl_fork_wait_seconds_total 2.25")) << text;
  EXPECT_TRUE(
      Has(text, R"(redis_db_keys{shard="1",port="7001",role="primary",numa_node="0",db="db0"} 0)"))
      << text;
}

// Placement has series of its own (the per-shard labels stay redis_exporter-shaped), and the
// fork times INFO gives are in redis_exporter's names and units; a silent shard has no fork times.
TEST(RenderSupervisorMetricsTest, ShardInfoForJoinsAndForkTimes) {
  DeploymentMetrics metrics = TwoShards();
  metrics.host = "db1";
  metrics.address = "10.0.0.5";
  metrics.shards[0].cpus = {2, 3, 4, 8};
  metrics.shards[1].cpus = {5};
  const std::string text = RenderSupervisorMetrics(metrics);
  const std::string up = R"({shard="0",port="7000",role="primary",numa_node="1"})";
  for (const std::string& line : std::vector<std::string>{
           R"(shardctl_shard_info{shard="0",port="7000",numa_node="1",cpus="2-4,8",host="db1",)"
           R"(address="10.0.0.5"} 1)",
           R"(shardctl_shard_info{shard="1",port="7001",numa_node="0",cpus="5",host="db1",)"
           R"(address="10.0.0.5"} 1)",
           "redis_latest_fork_seconds" + up + " 0.000321",
           "redis_rdb_last_save_timestamp_seconds" + up + " 1700000000"}) {
    EXPECT_TRUE(Has(text, line)) << line << "\nnot in:\n" << text;
  }
  EXPECT_EQ(text.find(R"(redis_latest_fork_seconds{shard="1")"), std::string::npos) << text;
}

TEST(RenderSupervisorMetricsTest, EveryFamilyOnceWithHelpBeforeType) {
  const std::string text = RenderSupervisorMetrics(TwoShards());
  std::vector<std::string> families;
  size_t at = 0;
  while ((at = text.find("# HELP ", at)) != std::string::npos) {
    at += 7;
    std::string name = text.substr(at, text.find(' ', at) - at);
    EXPECT_EQ(std::count(families.begin(), families.end(), name), 0) << name;
    EXPECT_NE(text.find("# TYPE " + name + " ", at), std::string::npos) << name;
    families.push_back(name);
  }
  EXPECT_EQ(families.size(), 22u) << text;  // the slot families only with hot slots
}

TEST(ForkWaitTest, DueShardsNotChosenWait) {
  Durability durability{.persistence = Persistence::kRdb, .fork_limit = 1};
  std::vector<PersistenceView> shards(3);
  for (auto& shard : shards) {
    shard.reachable = true;
    shard.save_requested = true;
  }
  size_t cursor = 0;
  auto chosen = ChooseForks(shards, durability, 1000, UINT64_MAX, cursor);
  EXPECT_EQ(chosen.size(), 1u);
  EXPECT_EQ(CountWaiting(shards, durability, 1000, chosen), 2u);
  shards[1].save_requested = false;
  shards[2].save_requested = false;
  EXPECT_EQ(CountWaiting(shards, durability, 1000, chosen), 0u);
}

}  // namespace
}  // namespace shardctl::launcher
