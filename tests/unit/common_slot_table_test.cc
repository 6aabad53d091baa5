#include <gtest/gtest.h>

#include <string_view>

#include "common/cluster_text.h"

namespace shardctl::common {
namespace {

// Captured from redis-server 7.0.15: three primaries on 127.0.0.1:24000-24002 formed by
// `redis-cli --cluster create ... --cluster-yes`.
constexpr std::string_view kSlotsReply =
    "*3\r\n"
    "*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:24000\r\n"
    "$40\r\n875d7c84c9b01ced5f09768f0cc4a67afc1e6530\r\n*0\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:24001\r\n"
    "$40\r\n1a1f99c3eb820f75d973f7e3574242b480f09a91\r\n*0\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:24002\r\n"
    "$40\r\na7f4992de0064cfffcd9366aafeaa5d6d1afc065\r\n*0\r\n";

// The same cluster after `CLUSTER SETSLOT 100 NODE <24001>` on all nodes and slot 200 set
// MIGRATING on 24000 / IMPORTING on 24001; asked over RESP3 (HELLO 3), so the per-node metadata
// is a map ("%0").
constexpr std::string_view kSplitSlotsReplyResp3 =
    "*5\r\n"
    "*3\r\n:0\r\n:99\r\n*4\r\n$9\r\n127.0.0.1\r\n:24000\r\n"
    "$40\r\n875d7c84c9b01ced5f09768f0cc4a67afc1e6530\r\n%0\r\n"
    "*3\r\n:100\r\n:100\r\n*4\r\n$9\r\n127.0.0.1\r\n:24001\r\n"
    "$40\r\n1a1f99c3eb820f75d973f7e3574242b480f09a91\r\n%0\r\n"
    "*3\r\n:101\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:24000\r\n"
    "$40\r\n875d7c84c9b01ced5f09768f0cc4a67afc1e6530\r\n%0\r\n"
    "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:24001\r\n"
    "$40\r\n1a1f99c3eb820f75d973f7e3574242b480f09a91\r\n%0\r\n"
    "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:24002\r\n"
    "$40\r\na7f4992de0064cfffcd9366aafeaa5d6d1afc065\r\n%0\r\n";

// CLUSTER NODES of that state, asked on 24000 (migrating side) and 24001 (importing side).
constexpr std::string_view kSplitNodes24000 =
    "875d7c84c9b01ced5f09768f0cc4a67afc1e6530 127.0.0.1:24000@34000 myself,master - 0 "
    "1795324170000 1 connected 0-99 101-5460 [200->-1a1f99c3eb820f75d973f7e3574242b480f09a91]\n"
    "1a1f99c3eb820f75d973f7e3574242b480f09a91 127.0.0.1:24001@34001 master - 0 1795324171608 2 "
    "connected 100 5461-10922\n"
    "a7f4992de0064cfffcd9366aafeaa5d6d1afc065 127.0.0.1:24002@34002 master - 0 1795324169602 3 "
    "connected 10923-16383\n";
constexpr std::string_view kSplitNodes24001 =
    "875d7c84c9b01ced5f09768f0cc4a67afc1e6530 127.0.0.1:24000@34000 master - 0 1795324171636 1 "
    "connected 0-99 101-5460\n"
    "1a1f99c3eb820f75d973f7e3574242b480f09a91 127.0.0.1:24001@34001 myself,master - 0 "
    "1795324170000 2 connected 100 5461-10922 "
    "[200-<-875d7c84c9b01ced5f09768f0cc4a67afc1e6530]\n"
    "a7f4992de0064cfffcd9366aafeaa5d6d1afc065 127.0.0.1:24002@34002 master - 0 1795324169629 3 "
    "connected 10923-16383\n";

const NodeAddress kNode0{{"127.0.0.1", 24000}, "875d7c84c9b01ced5f09768f0cc4a67afc1e6530"};
const NodeAddress kNode1{{"127.0.0.1", 24001}, "1a1f99c3eb820f75d973f7e3574242b480f09a91"};
const NodeAddress kNode2{{"127.0.0.1", 24002}, "a7f4992de0064cfffcd9366aafeaa5d6d1afc065"};

const NodeAddress& Owner(const SlotTable& map, int slot) {
  return map.primaries().at(static_cast<size_t>(map.PrimaryFor(slot)));
}

void ExpectSplitState(const SlotTable& map) {
  ASSERT_EQ(map.primaries().size(), 3u);
  EXPECT_EQ(map.Unassigned(), 0);
  EXPECT_EQ(Owner(map, 99), kNode0);
  EXPECT_EQ(Owner(map, 100), kNode1);
  EXPECT_EQ(Owner(map, 101), kNode0);
  EXPECT_EQ(Owner(map, 200), kNode0);  // migrating: still the source's until SETSLOT NODE
  EXPECT_EQ(Owner(map, 10923), kNode2);
}

TEST(SlotTableTest, FromClusterSlots) {
  auto map = SlotTable::FromClusterSlots(kSlotsReply);
  ASSERT_TRUE(map) << map.error().message();
  ASSERT_EQ(map->primaries().size(), 3u);
  EXPECT_EQ(map->primaries()[0], kNode0);
  EXPECT_EQ(map->Unassigned(), 0);
  EXPECT_EQ(Owner(*map, 0), kNode0);
  EXPECT_EQ(Owner(*map, 5460), kNode0);
  EXPECT_EQ(Owner(*map, 5461), kNode1);
  EXPECT_EQ(Owner(*map, 10922), kNode1);
  EXPECT_EQ(Owner(*map, 16383), kNode2);
}

TEST(SlotTableTest, FromClusterSlotsOverResp3WithSplitRanges) {
  auto map = SlotTable::FromClusterSlots(kSplitSlotsReplyResp3);
  ASSERT_TRUE(map) << map.error().message();
  ExpectSplitState(*map);
}

TEST(SlotTableTest, FromClusterNodesSkipsMigrationMarkers) {
  for (std::string_view text : {kSplitNodes24000, kSplitNodes24001}) {
    auto map = SlotTable::FromClusterNodes(text);
    ASSERT_TRUE(map) << map.error().message();
    ExpectSplitState(*map);
  }
}

TEST(SlotTableTest, ReplicasAndSlotlessNodesAreNotBackends) {
  constexpr std::string_view text =
      "aaaa 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
      "bbbb 10.0.0.2:7001@17001,host-b slave aaaa 0 0 1 connected\n"
      "cccc [::1]:7002@17002 master - 0 0 2 connected\n";
  auto map = SlotTable::FromClusterNodes(text);
  ASSERT_TRUE(map) << map.error().message();
  ASSERT_EQ(map->primaries().size(), 1u);
  EXPECT_EQ(map->primaries()[0], (NodeAddress{{"10.0.0.1", 7000}, "aaaa"}));
  // The replica is attached to its primary instead.
  ASSERT_EQ(map->ReplicasOf(0).size(), 1u);
  EXPECT_EQ(map->ReplicasOf(0)[0], (NodeAddress{{"10.0.0.2", 7001}, "bbbb", "host-b"}));
}

// CLUSTER SLOTS of a 2-primary, 1-replica-each cluster from `shardctl up --replicas 1`
// (redis-server 7.0.15), RESP2 and RESP3 byte for byte. Redis lists a replica only once its
// replication offset is non-zero, so the first refresh after start may not show it yet.
TEST(SlotTableTest, ReplicasFromClusterSlotsInBothProtocols) {
  const std::string resp2 =
      "*2\r\n*4\r\n:0\r\n:8191\r\n*4\r\n$9\r\n127.0.0.1\r\n:17300\r\n$40\r\n"
      "a9ec737c57d2da597fcee73d280a0bb2b270bd75\r\n*0\r\n*4\r\n$9\r\n127.0.0.1\r\n:17302\r\n"
      "$40\r\ncdd933ea24a2f9586e59cd374dbbd78326920f08\r\n*0\r\n*4\r\n:8192\r\n:16383\r\n*4\r\n"
      "$9\r\n127.0.0.1\r\n:17301\r\n$40\r\na41fff6311f3aebf9bf84b01ed7e8c04fe78424d\r\n*0\r\n"
      "*4\r\n$9\r\n127.0.0.1\r\n:17303\r\n$40\r\nebf7392421b7a674c5e308b3e60637ca454e5731\r\n"
      "*0\r\n";
  std::string resp3 = resp2;
  for (size_t at = resp3.find("*0\r\n"); at != std::string::npos; at = resp3.find("*0\r\n", at)) {
    resp3.replace(at, 1, "%");  // the per-node metadata is a map over RESP3
  }
  for (const std::string& reply : {resp2, resp3}) {
    auto map = SlotTable::FromClusterSlots(reply);
    ASSERT_TRUE(map) << map.error().message();
    ASSERT_EQ(map->primaries().size(), 2u);
    EXPECT_EQ(map->primaries()[map->PrimaryFor(0)].port, 17300);
    const auto& first = map->ReplicasOf(static_cast<size_t>(map->PrimaryFor(0)));
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0],
              (NodeAddress{{"127.0.0.1", 17302}, "cdd933ea24a2f9586e59cd374dbbd78326920f08"}));
    const auto& second = map->ReplicasOf(static_cast<size_t>(map->PrimaryFor(16383)));
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].port, 17303);
  }
}

TEST(SlotTableTest, UncoveredSlotsHaveNoPrimary) {
  auto map =
      SlotTable::FromClusterNodes("aaaa 10.0.0.1:7000@17000 master - 0 0 1 connected 0-99\n");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->PrimaryFor(100), SlotTable::kNoNode);
  EXPECT_EQ(map->Unassigned(), 16384 - 100);
}

TEST(SlotTableTest, BadInputIsAnErrorNamingWhere) {
  auto truncated = SlotTable::FromClusterSlots(kSlotsReply.substr(0, 40));
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().message().rfind("CLUSTER SLOTS", 0), 0u);
  auto error_reply =
      SlotTable::FromClusterSlots("-ERR This instance has cluster support disabled\r\n");
  ASSERT_FALSE(error_reply);
  EXPECT_EQ(error_reply.error().message(),
            "CLUSTER SLOTS: ERR This instance has cluster support disabled");
  auto out_of_range =
      SlotTable::FromClusterNodes("aaaa 10.0.0.1:7000@17000 master - 0 0 1 connected 0-16384\n");
  ASSERT_FALSE(out_of_range);
  EXPECT_EQ(out_of_range.error().message(), "CLUSTER NODES: line 1: bad slot range '0-16384'");
  EXPECT_FALSE(SlotTable::FromClusterNodes("aaaa 10.0.0.1:7000 master\n"));
}

}  // namespace
}  // namespace shardctl::common

namespace shardctl::common {
namespace {

// Captured from a one-node redis-server 7.0.15 cluster that never met another node.
TEST(SlotTableTest, AnEmptyHostMeansTheAddressThatWasAsked) {
  const std::string_view reply =
      "*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$0\r\n\r\n:10550\r\n"
      "$40\r\n0123456789012345678901234567890123456789\r\n*0\r\n";
  auto map = SlotTable::FromClusterSlots(reply, "127.0.0.1");
  ASSERT_TRUE(map) << map.error().message();
  ASSERT_EQ(map->primaries().size(), 1u);
  EXPECT_EQ(map->primaries()[0].host, "127.0.0.1");
  EXPECT_EQ(map->primaries()[0].port, 10550);
}

}  // namespace
}  // namespace shardctl::common
