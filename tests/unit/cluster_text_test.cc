// Text the launcher reads and writes: CLUSTER NODES normalisation, INFO fields, human tables and
// the plan's JSON contract.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/plan.h"
#include "launcher/model/plan_json.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

// ---------------------------------------------------------------------------------------------
// NormalizeSlotMap

// A 3-primary, 3-replica cluster as node e7d1... (the first primary) prints CLUSTER NODES
// (format of Redis 7: ip:port@cport,hostname).
constexpr const char* kFromFirstPrimary =
    "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,hostname4 slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002,hostname2 master - 0 "
    "1426238316232 2 connected 5461-10922\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003,hostname3 master - 0 "
    "1426238318243 3 connected 10923-16383\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005,hostname5 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected\n"
    "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006,hostname6 slave "
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238317741 6 connected\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001,hostname1 myself,master - 0 "
    "0 1 connected 0-5460\n";

// The same cluster as node 292f... (the third primary) prints it: other line order, other
// myself flag, other ping/pong times.
constexpr const char* kFromThirdPrimary =
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003,hostname3 myself,master - 0 "
    "0 3 connected 10923-16383\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001,hostname1 master - 0 "
    "1426238319000 1 connected 0-5460\n"
    "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006,hostname6 slave "
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238318999 6 connected\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002,hostname2 master - 0 "
    "1426238319500 2 connected 5461-10922\n"
    "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,hostname4 slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 1426238319100 1426238319000 4 connected\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005,hostname5 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238319200 5 connected\n";

constexpr const char* kExpectedMap =
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f:10923-16383\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1:5461-10922\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca:0-5460\n";

TEST(NormalizeSlotMapTest, KeepsOnlyPrimariesWithSlotsSortedById) {
  EXPECT_EQ(NormalizeSlotMap(kFromFirstPrimary), kExpectedMap);
}

TEST(NormalizeSlotMapTest, TwoNodesViewingTheSameClusterAgree) {
  EXPECT_EQ(NormalizeSlotMap(kFromFirstPrimary), NormalizeSlotMap(kFromThirdPrimary));
}

TEST(NormalizeSlotMapTest, MigrationMarkersAreIgnored) {
  // Slot 93 migrating from the first primary and importing on the second.
  std::string migrating = kFromFirstPrimary;
  migrating.replace(migrating.find("0-5460"), 6,
                    "0-5460 [93->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]");
  std::string importing = kFromThirdPrimary;
  importing.replace(importing.find("5461-10922"), 10,
                    "5461-10922 [93-<-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]");
  EXPECT_EQ(NormalizeSlotMap(migrating), kExpectedMap);
  EXPECT_EQ(NormalizeSlotMap(importing), kExpectedMap);
}

TEST(NormalizeSlotMapTest, DifferentOwnersDiffer) {
  std::string moved = kFromFirstPrimary;
  moved.replace(moved.find("0-5460"), 6, "0-5459");
  moved.replace(moved.find("5461-10922"), 10, "5460-10922");
  EXPECT_NE(NormalizeSlotMap(moved), NormalizeSlotMap(kFromFirstPrimary));
}

TEST(NormalizeSlotMapTest, SingleSlotsAndSeveralRangesAreKeptInOrder) {
  const char* nodes =
      "bbbb 127.0.0.1:7001@17001 master - 0 1 2 connected 100 200-300 16383\n"
      "aaaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-99 101-199\n";
  EXPECT_EQ(NormalizeSlotMap(nodes), "aaaa:0-99,101-199\nbbbb:100,200-300,16383\n");
}

TEST(NormalizeSlotMapTest, FreshNodesAndHandshakesHaveNoSlotMap) {
  EXPECT_EQ(NormalizeSlotMap(""), "");
  EXPECT_EQ(NormalizeSlotMap("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca :7000@17000 "
                             "myself,master - 0 0 0 connected\n"),
            "");
  EXPECT_EQ(NormalizeSlotMap("e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000 "
                             "myself,master - 0 0 1 connected 0-16383\n"
                             "5a1b2c3d4e5f60718293a4b5c6d7e8f901234567 127.0.0.1:7001@17001 "
                             "handshake - 1426238317239 0 0 disconnected\n"),
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca:0-16383\n");
}

TEST(NormalizeSlotMapTest, ToleratesCarriageReturnsAndMissingFinalNewline) {
  EXPECT_EQ(NormalizeSlotMap("aaaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383"),
            "aaaa:0-16383\n");
  EXPECT_EQ(NormalizeSlotMap("aaaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected "
                             "0-16383\r\n"),
            "aaaa:0-16383\n");
}

TEST(NormalizeSlotMapTest, BlankLinesAreSkippedGarbageNeverAgrees) {
  EXPECT_EQ(NormalizeSlotMap("\n\naaaa 127.0.0.1:7000@17000 master - 0 0 1 connected 5\n"),
            "aaaa:5\n");
  const std::string garbage =
      NormalizeSlotMap("garbage\n\naaaa 127.0.0.1:7000@17000 master - 0 0 1 connected 5\n");
  EXPECT_EQ(garbage, "unreadable CLUSTER NODES: line 1: expected at least 8 fields");
}

// ---------------------------------------------------------------------------------------------
// InfoField

constexpr const char* kClusterInfo =
    "cluster_state:ok\r\n"
    "cluster_slots_assigned:16384\r\n"
    "cluster_slots_ok:16384\r\n"
    "cluster_slots_pfail:0\r\n"
    "cluster_slots_fail:0\r\n"
    "cluster_known_nodes:6\r\n"
    "cluster_size:3\r\n"
    "cluster_current_epoch:6\r\n"
    "cluster_my_epoch:2\r\n"
    "cluster_stats_messages_sent:1483972\r\n"
    "cluster_stats_messages_received:1483968\r\n"
    "total_cluster_links_buffer_limit_exceeded:0\r\n";

constexpr const char* kInfo =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_mode:cluster\r\n"
    "process_id:4242\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1662928\r\n"
    "used_memory_human:1.59M\r\n"
    "maxmemory:2147483648\r\n"
    "maxmemory_human:2.00G\r\n"
    "maxmemory_policy:noeviction\r\n"
    "\r\n"
    "# Keyspace\r\n"
    "db0:keys=12,expires=0,avg_ttl=0\r\n"
    "empty_field:\r\n"
    "last_line:no-newline";

struct InfoCase {
  const char* text;
  const char* field;
  const char* value;
};

class InfoFieldTest : public testing::TestWithParam<InfoCase> {};

TEST_P(InfoFieldTest, ReadsTheValue) {
  EXPECT_EQ(InfoField(GetParam().text, GetParam().field), GetParam().value) << GetParam().field;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, InfoFieldTest,
    testing::Values(
        InfoCase{kClusterInfo, "cluster_state", "ok"},
        InfoCase{kClusterInfo, "cluster_slots_assigned", "16384"},
        InfoCase{kClusterInfo, "cluster_known_nodes", "6"},
        InfoCase{kClusterInfo, "cluster_size", "3"},
        InfoCase{kClusterInfo, "cluster_my_epoch", "2"},
        // Prefixes and suffixes of real fields are not those fields.
        InfoCase{kClusterInfo, "cluster_slots", ""}, InfoCase{kClusterInfo, "state", ""},
        InfoCase{kClusterInfo, "cluster_links_buffer_limit_exceeded", ""},
        InfoCase{kClusterInfo, "no_such_field", ""}, InfoCase{kInfo, "redis_version", "7.0.15"},
        InfoCase{kInfo, "used_memory", "1662928"}, InfoCase{kInfo, "maxmemory", "2147483648"},
        InfoCase{kInfo, "maxmemory_policy", "noeviction"},
        InfoCase{kInfo, "db0", "keys=12,expires=0,avg_ttl=0"}, InfoCase{kInfo, "empty_field", ""},
        InfoCase{kInfo, "last_line", "no-newline"}, InfoCase{kInfo, "memory", ""},
        InfoCase{"", "cluster_state", ""},
        InfoCase{"cluster_state:fail\n", "cluster_state", "fail"}),
    [](const testing::TestParamInfo<InfoCase>& case_info) {
      return std::to_string(case_info.index);
    });

// ---------------------------------------------------------------------------------------------
// FormatTable

TEST(FormatTableTest, AlignsColumnsWithTwoSpaces) {
  std::string table = FormatTable({{"SHARD", "PORT", "CPUS", "NODE"},
                                   {"0", "7000", "0", "0"},
                                   {"10", "7010", "10,42", "1"},
                                   {"100", "7100", "3", "12"}});
  EXPECT_EQ(table,
            "SHARD  PORT  CPUS   NODE\n"
            "0      7000  0      0\n"
            "10     7010  10,42  1\n"
            "100    7100  3      12\n");
}

TEST(FormatTableTest, ColumnWidthComesFromTheWidestCellEvenBelowTheHeader) {
  EXPECT_EQ(FormatTable({{"A", "B"}, {"wide-cell", "x"}}),
            "A          B\n"
            "wide-cell  x\n");
}

TEST(FormatTableTest, LastColumnIsNotPadded) {
  std::string table = FormatTable({{"A", "LONG-HEADER"}, {"1", "x"}});
  EXPECT_EQ(table, "A  LONG-HEADER\n1  x\n");
}

TEST(FormatTableTest, ShortRowsAndEmptyTables) {
  EXPECT_EQ(FormatTable({}), "");
  EXPECT_EQ(FormatTable({{"ONLY"}}), "ONLY\n");
  EXPECT_EQ(FormatTable({{"A", "B", "C"}, {"1"}}),
            "A  B  C\n"
            "1\n");
  EXPECT_EQ(FormatTable({{"A", "B"}, {"", "2"}}),
            "A  B\n"
            "   2\n");
}

// ---------------------------------------------------------------------------------------------
// Plan JSON

Plan SamplePlan() {
  Plan plan;
  plan.name = "cache";
  plan.engine = "valkey";
  plan.bind = "::1";
  plan.maxmemory_policy = "allkeys-lru";
  plan.usable_cpus = 62;
  plan.usable_cores = 31;
  plan.warnings = {"3 shards share 2 CPU(s) on NUMA node 0"};
  plan.shards = {
      ShardPlan{.index = 0,
                .port = 7000,
                .bus_port = 17000,
                .cpus = {2},
                .numa_node = 0,
                .maxmemory = 26843545600,
                .role = Role::kPrimary,
                .primary = std::nullopt,
                .slots = {{0, 8191}}},
      ShardPlan{.index = 1,
                .port = 7001,
                .bus_port = 17001,
                .cpus = {16, 48},
                .numa_node = 1,
                .maxmemory = 26843545600,
                .role = Role::kPrimary,
                .primary = std::nullopt,
                .slots = {{8192, 16000}, {16001, 16383}}},
      ShardPlan{.index = 2,
                .port = 7002,
                .bus_port = 17002,
                .cpus = {17},
                .numa_node = 1,
                .maxmemory = 1048576,
                .role = Role::kReplica,
                .primary = 0,
                .slots = {}},
  };
  return plan;
}

TEST(PlanJsonTest, UsesTheContractFieldNames) {
  nlohmann::json json = PlanToJson(SamplePlan());
  EXPECT_EQ(json.at("name"), "cache");
  EXPECT_EQ(json.at("engine"), "valkey");
  ASSERT_TRUE(json.at("shards").is_array());
  ASSERT_EQ(json.at("shards").size(), 3u);
  const auto& primary = json.at("shards")[1];
  EXPECT_EQ(primary.at("index"), 1);
  EXPECT_EQ(primary.at("port"), 7001);
  EXPECT_EQ(primary.at("bus_port"), 17001);
  EXPECT_EQ(primary.at("cpus"), nlohmann::json::array({16, 48}));
  EXPECT_EQ(primary.at("numa_node"), 1);
  EXPECT_EQ(primary.at("maxmemory"), 26843545600ull);
  EXPECT_EQ(primary.at("role"), "primary");
  EXPECT_FALSE(primary.contains("primary")) << primary.dump();
  EXPECT_EQ(primary.at("slots"), nlohmann::json::parse("[[8192, 16000], [16001, 16383]]"));

  const auto& replica = json.at("shards")[2];
  EXPECT_EQ(replica.at("role"), "replica");
  ASSERT_TRUE(replica.contains("primary")) << replica.dump();
  EXPECT_EQ(replica.at("primary"), 0);
  for (const auto& shard : json.at("shards")) {
    for (const char* field :
         {"index", "port", "bus_port", "cpus", "numa_node", "maxmemory", "role"}) {
      EXPECT_TRUE(shard.contains(field)) << field << " missing from " << shard.dump();
    }
    EXPECT_TRUE(shard.at("maxmemory").is_number_unsigned() ||
                shard.at("maxmemory").is_number_integer());
  }
}

void ExpectSamePlan(const Plan& got, const Plan& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.engine, want.engine);
  EXPECT_EQ(got.bind, want.bind);
  EXPECT_EQ(got.maxmemory_policy, want.maxmemory_policy);
  EXPECT_EQ(got.usable_cpus, want.usable_cpus);
  EXPECT_EQ(got.usable_cores, want.usable_cores);
  EXPECT_EQ(got.warnings, want.warnings);
  EXPECT_EQ(got.shards, want.shards);
}

TEST(PlanJsonTest, RoundTripsThroughJson) {
  Plan plan = SamplePlan();
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ExpectSamePlan(*back, plan);
}

TEST(PlanJsonTest, RoundTripsThroughText) {
  Plan plan = SamplePlan();
  auto back = PlanFromJson(nlohmann::json::parse(PlanToJson(plan).dump(2)));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ExpectSamePlan(*back, plan);
  EXPECT_EQ(PlanToJson(*back), PlanToJson(plan));
}

TEST(PlanJsonTest, RoundTripsAComputedPlan) {
  auto topology = ReadTopology(std::string(SHARDCTL_FIXTURES_DIR) + "/sysfs/four-node");
  ASSERT_TRUE(topology.ok()) << topology.error().message();
  Spec spec;
  spec.shards = 70;
  auto plan = MakePlan(*topology, spec);
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  ASSERT_FALSE(plan->warnings.empty());
  auto back = PlanFromJson(PlanToJson(*plan));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ExpectSamePlan(*back, *plan);
}

TEST(PlanJsonTest, EmptyPlanRoundTrips) {
  Plan plan;
  auto back = PlanFromJson(PlanToJson(plan));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ExpectSamePlan(*back, plan);
}

TEST(PlanJsonTest, MalformedJsonIsAnErrorNotAnException) {
  const std::vector<std::string> bad = {
      "{}",
      "[]",
      R"({"name": "x", "engine": "redis", "bind": "127.0.0.1", "maxmemory_policy": "noeviction"})",
      R"({"name": 1, "engine": "redis", "bind": "127.0.0.1", "maxmemory_policy": "noeviction",
          "shards": []})",
      R"({"name": "x", "engine": "redis", "bind": "127.0.0.1", "maxmemory_policy": "noeviction",
          "shards": [{"index": 0}]})",
      R"({"name": "x", "engine": "redis", "bind": "127.0.0.1", "maxmemory_policy": "noeviction",
          "shards": [{"index": 0, "port": "7000", "bus_port": 17000, "cpus": [0], "numa_node": 0,
                      "maxmemory": 1, "role": "primary"}]})",
  };
  for (const auto& text : bad) {
    auto plan = PlanFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(plan.ok()) << text;
    EXPECT_NE(plan.error().message().find("malformed plan"), std::string::npos)
        << plan.error().message();
  }
}

}  // namespace
}  // namespace shardctl::launcher
