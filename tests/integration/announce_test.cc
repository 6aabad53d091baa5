// `up --announce`: the shards tell other nodes and clients the announced name (beside their IP),
// and the cluster, shardctl and shardproxy work as before.
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class AnnounceTest : public ShardctlTest {};

TEST_F(AnnounceTest, AHostNameIsAnnouncedBesideTheAddress) {
  const int proxy_port = base_port() + 40;
  auto up = Up(3, {"--announce", "shardctl-test.invalid", "--proxy-port",
                   std::to_string(proxy_port), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  for (int shard = 0; shard < 3; ++shard) {
    auto nodes = QueryRedis(base_port() + shard, {"CLUSTER", "NODES"});
    ASSERT_TRUE(nodes);
    // Every node knows every other's name: "ip:port@cport,hostname".
    size_t named = 0;
    for (size_t at = 0; (at = nodes->text.find(",shardctl-test.invalid ", at)) != std::string::npos;
         ++at) {
      ++named;
    }
    EXPECT_EQ(named, 3u) << nodes->text;
  }
  auto slots =
      RunCommand({"redis-cli", "-p", std::to_string(base_port()), "CLUSTER", "SLOTS"}, 10s);
  EXPECT_NE(slots.out.find("shardctl-test.invalid"), std::string::npos) << slots.out;
  EXPECT_NE(slots.out.find("127.0.0.1"), std::string::npos) << "the IP stays first: " << slots.out;
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0);
  auto set = QueryRedis(proxy_port, {"MSET", "a", "1", "b", "2", "c", "3"});
  ASSERT_TRUE(set);
  EXPECT_EQ(set->text, "OK");
  EXPECT_NE(ReadFileText(deployment_dir() / "shards/0/redis.conf")
                .find("cluster-announce-hostname shardctl-test.invalid"),
            std::string::npos);
}

// --preferred-endpoint hostname: redirects and CLUSTER SLOTS name the host first (a name no
// resolver knows, here), and shardproxy and bench still route, by the IP CLUSTER SLOTS carries in
// its metadata and, for redirects, by the name-to-IP table they learnt from it.
TEST_F(AnnounceTest, HostNameEndpointsStillRouteThroughTheProxyAndBench) {
  const int proxy_port = base_port() + 40;
  auto up = Up(3, {"--announce", "shardctl-test.invalid", "--preferred-endpoint", "hostname",
                   "--proxy-port", std::to_string(proxy_port), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_NE(ReadFileText(deployment_dir() / "shards/0/redis.conf")
                .find("cluster-preferred-endpoint-type hostname"),
            std::string::npos);
  auto slots =
      RunCommand({"redis-cli", "-p", std::to_string(base_port()), "CLUSTER", "SLOTS"}, 10s);
  const auto name_at = slots.out.find("shardctl-test.invalid");
  ASSERT_NE(name_at, std::string::npos) << slots.out;
  EXPECT_LT(name_at, slots.out.find("127.0.0.1")) << "the name comes first: " << slots.out;
  // Key "a" is in slot 15495, on the third shard: the first one redirects by name.
  auto moved = QueryRedis(base_port(), {"GET", "a"});
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->text, "MOVED 15495 shardctl-test.invalid:" + std::to_string(base_port() + 2));

  auto set = QueryRedis(proxy_port, {"MSET", "a", "1", "b", "2", "c", "3"});
  ASSERT_TRUE(set);
  EXPECT_EQ(set->text, "OK");
  // Slot 15495 moves to the first shard: the proxy's map is stale until it refreshes, and the
  // shard's MOVED names the host; either way the value comes back.
  auto move = OnDeployment("move-slots", {"15495", "--to", "0"});
  ASSERT_EQ(move.exit_code, 0) << move.Describe();
  auto read = QueryRedis(proxy_port, {"MGET", "a", "b", "c"});
  ASSERT_TRUE(read);
  ASSERT_EQ(read->elements.size(), 3u);
  EXPECT_EQ(read->elements[0].text, "1");
  EXPECT_EQ(read->elements[2].text, "3");
  auto bench =
      Shardctl({"bench", "run", "--json", "--cluster", "127.0.0.1:" + std::to_string(base_port()),
                "--requests", "2000", "--connections", "2"});
  ASSERT_EQ(bench.exit_code, 0) << bench.Describe();
  EXPECT_NE(bench.out.find("\"errors\": 0"), std::string::npos) << bench.out;
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace shardctl::integration
