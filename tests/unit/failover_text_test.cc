// The text side of failover (launcher/failover.h): which node a shard is (MyselfId on its
// nodes.conf), what a peer says about the cluster (ParseClusterNodes on CLUSTER NODES) and which
// replicas may take a primary's place (ReplicaEndpoints). No sockets: PromoteReplica is not here.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/failover.h"

namespace shardctl::launcher {
namespace {

using common::NodeLine;

// The common reader (common/cluster_text.h) on text that must parse.
std::vector<NodeLine> Nodes(const std::string& text) {
  auto nodes = common::ParseClusterNodes(text);
  EXPECT_TRUE(nodes.ok()) << nodes.error().message();
  return nodes.ok() ? *nodes : std::vector<NodeLine>{};
}

constexpr const char* kPrimaryA = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
constexpr const char* kPrimaryB = "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1";
constexpr const char* kPrimaryC = "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f";

// nodes.conf of shard 0 of a 3 x 2 deployment as redis-server 7.0 writes it: one line per node
// (its own marked myself) and a trailing vars line.
constexpr const char* kNodesConf =
    "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:7003@17003 slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1700000003000 4 connected\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:7001@17001 master - 0 1700000002000 2 "
    "connected 5461-10922\n"
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000 myself,master - 0 0 1 "
    "connected 0-5460\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:7002@17002 master - 0 1700000001000 3 "
    "connected 10923-16383\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:7004@17004 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1700000004000 5 connected\n"
    "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:7005@17005 slave "
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1700000005000 6 connected\n"
    "vars currentEpoch 6 lastVoteEpoch 0\n";

// ---------------------------------------------------------------------------------------------
// MyselfId

struct MyselfCase {
  const char* name;
  const char* text;
  std::optional<std::string> id;
};

class MyselfIdTest : public testing::TestWithParam<MyselfCase> {};

TEST_P(MyselfIdTest, FindsTheMyselfLine) { EXPECT_EQ(MyselfId(GetParam().text), GetParam().id); }

INSTANTIATE_TEST_SUITE_P(
    NodesConf, MyselfIdTest,
    testing::Values(
        MyselfCase{"redis7_with_vars_line", kNodesConf, kPrimaryA},
        // Redis 7.2 / Valkey: empty hostname and aux fields after the cluster bus port.
        MyselfCase{
            "aux_fields",
            "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 "
            "127.0.0.1:7005@17005,,tls-port=0,shard-id=4fa7c4cbbd0e0d1e2b8d3c5a6f7e8d9c0b1a2f3e "
            "myself,slave 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1700000005000 6 "
            "connected\n"
            "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f "
            "127.0.0.1:7002@17002,,tls-port=0,shard-id=4fa7c4cbbd0e0d1e2b8d3c5a6f7e8d9c0b1a2f3e "
            "master - 0 1700000001000 3 connected 10923-16383\n"
            "vars currentEpoch 6 lastVoteEpoch 6\n",
            "824fe116063bc5fcf9f4ffd895bc17aee7731ac3"},
        // A node that has not met any other yet knows no address of its own.
        MyselfCase{"fresh_node",
                   "4b3ad1c5e1f0d2a3b4c5d6e7f8091a2b3c4d5e6f :0@0 myself,master - 0 0 0 connected\n"
                   "vars currentEpoch 0 lastVoteEpoch 0\n",
                   "4b3ad1c5e1f0d2a3b4c5d6e7f8091a2b3c4d5e6f"},
        MyselfCase{
            "no_trailing_newline",
            "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000 myself,master - 0 "
            "0 1 connected 0-5460",
            kPrimaryA},
        MyselfCase{"empty", "", std::nullopt},
        MyselfCase{"only_vars", "vars currentEpoch 6 lastVoteEpoch 0\n", std::nullopt},
        MyselfCase{"no_myself_line",
                   "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:7001@17001 master - 0 "
                   "1700000002000 2 connected 5461-10922\n",
                   std::nullopt},
        // A file cut short while written: the incomplete line is not a node.
        MyselfCase{"truncated_myself_line",
                   "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000 myself,master -",
                   std::nullopt}),
    [](const testing::TestParamInfo<MyselfCase>& case_info) { return case_info.param.name; });

// ---------------------------------------------------------------------------------------------
// ParseClusterNodes

// CLUSTER NODES as shard 3 sees it while shard 1's primary is down and its slots partly migrate:
// every flag combination the supervisor meets, with hostnames after the cluster bus port.
constexpr const char* kClusterNodes =
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:7000@17000,shard0 master - 0 "
    "1700000000000 1 connected 0-5460 [5461-<-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]\n"
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:7001@17001,shard1 master,fail - "
    "1700000000500 1700000000400 2 disconnected 5462-10922 "
    "[5461->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]\n"
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:7002@17002,shard2 master,fail? - "
    "1700000000600 1700000000300 3 connected 10923-16383\n"
    "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:7003@17003,shard3 myself,slave "
    "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 0 4 connected\n"
    "6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:7004@17004,shard4 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1700000004000 5 connected\n"
    "824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:7005@17005,shard5 slave,fail? "
    "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 1700000005500 1700000005000 6 connected\n"
    "a0c3f9e2d1b4a5c6d7e8f9011223344556677889 127.0.0.1:7006@17006,shard6 slave "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1700000006000 7 connected\n"
    "b1d4e0f3a2c5b6d7e8f901a2233445566778899a 127.0.0.1:7007@17007,shard7 slave,fail "
    "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 1700000007500 1700000007000 8 disconnected\n"
    "c2e5f1a4b3d6c7e8f9012a3b4455667788990aab 127.0.0.1:7008@17008 master - 0 1700000008000 9 "
    "connected [100-<-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]\n";

struct Expected {
  const char* id;
  const char* host;
  int port;
  const char* flags;
  const char* master_id;
  bool has_slots;
  bool primary;
  bool failing;
};

TEST(ParseClusterNodesTest, ReadsEveryLine) {
  const std::vector<Expected> expected = {
      {kPrimaryA, "127.0.0.1", 7000, "master", "-", true, true, false},
      {kPrimaryB, "127.0.0.1", 7001, "master,fail", "-", true, true, true},
      {kPrimaryC, "127.0.0.1", 7002, "master,fail?", "-", true, true, true},
      {"07c37dfeb235213a872192d90877d0cd55635b91", "127.0.0.1", 7003, "myself,slave", kPrimaryA,
       false, false, false},
      {"6ec23923021cf3ffec47632106199cb7f496ce01", "127.0.0.1", 7004, "slave", kPrimaryB, false,
       false, false},
      {"824fe116063bc5fcf9f4ffd895bc17aee7731ac3", "127.0.0.1", 7005, "slave,fail?", kPrimaryC,
       false, false, true},
      {"a0c3f9e2d1b4a5c6d7e8f9011223344556677889", "127.0.0.1", 7006, "slave", kPrimaryB, false,
       false, false},
      {"b1d4e0f3a2c5b6d7e8f901a2233445566778899a", "127.0.0.1", 7007, "slave,fail", kPrimaryB,
       false, false, true},
      // Only an importing marker: a slot on its way in is not owned yet.
      {"c2e5f1a4b3d6c7e8f9012a3b4455667788990aab", "127.0.0.1", 7008, "master", "-", false, true,
       false},
  };
  auto nodes = Nodes(kClusterNodes);
  ASSERT_EQ(nodes.size(), expected.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    EXPECT_EQ(nodes[i].id, expected[i].id);
    EXPECT_EQ(nodes[i].address.host, expected[i].host);
    EXPECT_EQ(nodes[i].address.port, expected[i].port);
    EXPECT_EQ(nodes[i].flags, expected[i].flags);
    EXPECT_EQ(nodes[i].master_id, expected[i].master_id);
    EXPECT_EQ(nodes[i].HasSlots(), expected[i].has_slots);
    EXPECT_EQ(nodes[i].IsPrimary(), expected[i].primary);
    EXPECT_EQ(nodes[i].Failing(), expected[i].failing);
  }
}

struct AddressCase {
  const char* name;
  const char* address;
  const char* host;
  int port;
};

class ParseAddressTest : public testing::TestWithParam<AddressCase> {};

TEST_P(ParseAddressTest, SplitsHostAndPort) {
  const AddressCase& c = GetParam();
  std::string line =
      std::string(kPrimaryA) + " " + c.address + " master - 0 1700000000000 1 connected 0-16383\n";
  auto nodes = Nodes(line);
  ASSERT_EQ(nodes.size(), 1u) << line;
  EXPECT_EQ(nodes[0].address.host, c.host);
  EXPECT_EQ(nodes[0].address.port, c.port);
  EXPECT_TRUE(nodes[0].HasSlots());
}

INSTANTIATE_TEST_SUITE_P(
    Addresses, ParseAddressTest,
    testing::Values(AddressCase{"plain", "127.0.0.1:7000@17000", "127.0.0.1", 7000},
                    AddressCase{"hostname", "127.0.0.1:7000@17000,host", "127.0.0.1", 7000},
                    AddressCase{"hostname_fqdn", "10.1.2.3:30001@40001,redis-0.example.com",
                                "10.1.2.3", 30001},
                    AddressCase{"aux_fields", "127.0.0.1:7000@17000,,tls-port=0,shard-id=ab12",
                                "127.0.0.1", 7000},
                    AddressCase{"ipv6", "::1:7000@17000", "::1", 7000},
                    AddressCase{"ipv6_hostname", "fe80::1:6379@16379,node-a", "fe80::1", 6379},
                    AddressCase{"no_bus_port", "127.0.0.1:7000", "127.0.0.1", 7000},
                    AddressCase{"unknown_address", ":0@0", "", 0}),
    [](const testing::TestParamInfo<AddressCase>& case_info) { return case_info.param.name; });

struct SlotsCase {
  const char* name;
  const char* slots;  // what follows "connected"
  bool has_slots;
};

class ParseSlotsTest : public testing::TestWithParam<SlotsCase> {};

TEST_P(ParseSlotsTest, MigrationMarkersAreNotOwnedSlots) {
  std::string line = std::string(kPrimaryA) +
                     " 127.0.0.1:7000@17000 master - 0 1700000000000 1 connected " +
                     GetParam().slots + "\n";
  auto nodes = Nodes(line);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].HasSlots(), GetParam().has_slots);
}

INSTANTIATE_TEST_SUITE_P(
    Slots, ParseSlotsTest,
    testing::Values(
        SlotsCase{"none", "", false}, SlotsCase{"range", "0-5460", true},
        SlotsCase{"single", "5461", true}, SlotsCase{"many", "0-100 200 300-400", true},
        SlotsCase{"range_and_migrating", "0-5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]",
                  true},
        SlotsCase{"only_importing", "[5461-<-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]", false},
        SlotsCase{"only_migrating", "[5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]", false},
        SlotsCase{"markers_then_range", "[1->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1] 2-100",
                  true}),
    [](const testing::TestParamInfo<SlotsCase>& case_info) { return case_info.param.name; });

TEST(ParseClusterNodesTest, SkipsTheVarsLineAndBlankLinesRefusesGarbage) {
  std::string node =
      std::string(kPrimaryA) + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n";
  auto nodes = Nodes("\nvars currentEpoch 6 lastVoteEpoch 0\n" + node);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].id, kPrimaryA);
  EXPECT_TRUE(Nodes("").empty());
  auto garbage = common::ParseClusterNodes(node + "garbage\n");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().message(), "line 2: expected at least 8 fields");
}

struct FlagsCase {
  const char* flags;
  bool primary;
  bool failing;
};

class NodeFlagsTest : public testing::TestWithParam<FlagsCase> {};

TEST_P(NodeFlagsTest, PrimaryAndFailing) {
  NodeLine node;
  node.flags = GetParam().flags;
  EXPECT_EQ(node.IsPrimary(), GetParam().primary) << node.flags;
  EXPECT_EQ(node.Failing(), GetParam().failing) << node.flags;
}

INSTANTIATE_TEST_SUITE_P(
    Flags, NodeFlagsTest,
    testing::Values(FlagsCase{"master", true, false}, FlagsCase{"myself,master", true, false},
                    FlagsCase{"master,fail", true, true}, FlagsCase{"master,fail?", true, true},
                    FlagsCase{"slave", false, false}, FlagsCase{"myself,slave", false, false},
                    FlagsCase{"slave,fail", false, true}, FlagsCase{"slave,fail?", false, true},
                    FlagsCase{"slave,noaddr", false, true},
                    FlagsCase{"master,noaddr,fail", true, true},
                    // cluster-replica-no-failover: the replica only skips *automatic* failover;
                    // it is healthy and CLUSTER FAILOVER still promotes it.
                    FlagsCase{"slave,nofailover", false, false},
                    FlagsCase{"myself,slave,nofailover", false, false},
                    FlagsCase{"slave,nofailover,fail?", false, true},
                    FlagsCase{"handshake", false, false}, FlagsCase{"noflags", false, false}),
    [](const testing::TestParamInfo<FlagsCase>& case_info) {
      std::string name;
      for (const char* c = case_info.param.flags; *c; ++c) {
        name += *c == ',' ? '_' : *c == '?' ? 'Q' : *c;
      }
      return name;
    });

// ---------------------------------------------------------------------------------------------
// ReplicaEndpoints

// The ports of ReplicaEndpoints(nodes, primary, "127.0.0.1").
std::vector<int> ReplicaPorts(const std::vector<common::NodeLine>& nodes,
                              const std::string& primary) {
  std::vector<int> ports;
  for (const auto& endpoint : ReplicaEndpoints(nodes, primary, "127.0.0.1")) {
    ports.push_back(endpoint.port);
  }
  return ports;
}

TEST(ReplicaPortsTest, HealthyReplicasOfThatPrimaryOnly) {
  auto nodes = Nodes(kClusterNodes);
  // Primary B (port 7001): 7004 and 7006 are fine; 7007 is failing.
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryB), (std::vector<int>{7004, 7006}));
  // Primary A: its replica is the node listing (myself,slave).
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryA), std::vector<int>{7003});
  // Primary C: its only replica is suspected failing (fail?).
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryC), std::vector<int>{});
  // Not a node of this cluster, and "-" (the master_id of every primary).
  EXPECT_EQ(ReplicaPorts(nodes, "ffffffffffffffffffffffffffffffffffffffff"), std::vector<int>{});
  EXPECT_EQ(ReplicaPorts(nodes, "-"), std::vector<int>{});
}

TEST(ReplicaPortsTest, FromTheNodesConfText) {
  auto nodes = Nodes(kNodesConf);
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryA), std::vector<int>{7003});
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryB), std::vector<int>{7004});
  EXPECT_EQ(ReplicaPorts(nodes, kPrimaryC), std::vector<int>{7005});
}

TEST(ReplicaPortsTest, ExcludesFailingAndUnreachableReplicasKeepsNoFailoverOnes) {
  std::string primary = kPrimaryA;
  auto replica = [&](const char* id, int port, const char* flags) {
    return std::string(id) + " 127.0.0.1:" + std::to_string(port) + "@" +
           std::to_string(port + 10000) + " " + flags + " " + primary +
           " 0 1700000000000 2 connected\n";
  };
  std::string text = primary + " 127.0.0.1:7000@17000 master,fail - 0 1700000000000 1 connected " +
                     "0-16383\n" +
                     replica("1111111111111111111111111111111111111111", 7001, "slave") +
                     replica("2222222222222222222222222222222222222222", 7002, "slave,fail") +
                     replica("3333333333333333333333333333333333333333", 7003, "slave,fail?") +
                     replica("4444444444444444444444444444444444444444", 7004, "slave,noaddr") +
                     replica("5555555555555555555555555555555555555555", 7005, "slave,nofailover") +
                     replica("6666666666666666666666666666666666666666", 7006, "myself,slave");
  EXPECT_EQ(ReplicaPorts(Nodes(text), primary), (std::vector<int>{7001, 7005, 7006}));
}

TEST(ReplicaPortsTest, AReplicaOnAnotherHostKeepsItsHostOneWithoutAHostGetsTheLocalOne) {
  std::string primary = kPrimaryA;
  std::string text = primary + " 10.0.0.1:7000@17000 myself,master - 0 1700000000000 1 " +
                     "connected 0-16383\n" +
                     "1111111111111111111111111111111111111111 10.0.0.2:7000@17000 slave " +
                     primary + " 0 1700000000000 1 connected\n" +
                     "2222222222222222222222222222222222222222 :7003@17003 slave " + primary +
                     " 0 1700000000000 1 connected\n";
  EXPECT_EQ(ReplicaEndpoints(Nodes(text), primary, "10.0.0.1"),
            (std::vector<common::Endpoint>{{"10.0.0.2", 7000}, {"10.0.0.1", 7003}}));
}

// INFO replication of a replica, laid out as redis-server 7.0 and valkey-server 9.1 print it,
// with the fields that tell the states apart (as measured on both) passed in.
std::string ReplicaInfo(const std::string& link, const std::string& sync_in_progress,
                        const std::string& down_since) {
  std::string info = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n";
  info += "master_port:7000\r\nmaster_link_status:" + link + "\r\n";
  info += "master_last_io_seconds_ago:-1\r\nmaster_sync_in_progress:" + sync_in_progress + "\r\n";
  info += "slave_read_repl_offset:14\r\nslave_repl_offset:14\r\n";
  if (!down_since.empty()) info += "master_link_down_since_seconds:" + down_since + "\r\n";
  return info + "slave_priority:100\r\nslave_read_only:1\r\nconnected_slaves:0\r\n";
}

TEST(WhyNotPromotableTest, AReplicaThatFinishedASyncMayTakeItsDeadPrimarysPlace) {
  EXPECT_EQ(WhyNotPromotable(ReplicaInfo("up", "0", "")), std::nullopt);     // not noticed yet
  EXPECT_EQ(WhyNotPromotable(ReplicaInfo("down", "0", "0")), std::nullopt);  // noticed just now
  EXPECT_EQ(WhyNotPromotable(ReplicaInfo("down", "0", "1")), std::nullopt);
  EXPECT_EQ(WhyNotPromotable("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n"),
            std::nullopt);  // promoted already
}

TEST(WhyNotPromotableTest, AReplicaMidSyncOrNeverSyncedSinceItStartedMayNot) {
  auto mid_sync = WhyNotPromotable(ReplicaInfo("down", "1", "-1"));
  ASSERT_TRUE(mid_sync.has_value());
  EXPECT_NE(mid_sync->find("full sync is in progress"), std::string::npos) << *mid_sync;
  // Redis 7.0 while its primary waits out repl-diskless-sync-delay: not yet "in progress".
  auto never = WhyNotPromotable(ReplicaInfo("down", "0", "-1"));
  ASSERT_TRUE(never.has_value());
  EXPECT_NE(never->find("not finished a sync"), std::string::npos) << *never;
}

}  // namespace
}  // namespace shardctl::launcher
