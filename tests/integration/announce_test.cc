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

}  // namespace
}  // namespace shardctl::integration
