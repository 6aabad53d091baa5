// `status --cluster`: every node of the cluster, this deployment's and others', one table; the
// exit code follows the worst node.
#include <signal.h>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class StatusClusterTest : public ShardctlTest {};

TEST_F(StatusClusterTest, ListsNodesThatAreNotOursAndTheirFailures) {
  ASSERT_EQ(Up(2, {"--cluster-node-timeout", "1s"}).exit_code, 0);
  // A node of no deployment of ours (another host's, in real life) joins the cluster.
  const int stranger = base_port() + 30;
  TempDir data;
  BackgroundCommand server({"redis-server", "--port", std::to_string(stranger), "--bind",
                            "127.0.0.1", "--cluster-enabled", "yes", "--cluster-node-timeout",
                            "1000", "--cluster-config-file", (data.path() / "nodes.conf").string(),
                            "--dir", data.path().string(), "--save", "", "--appendonly", "no"},
                           data.path() / "out", data.path() / "err");
  ASSERT_TRUE(WaitUntil([&] { return QueryRedis(stranger, {"PING"}).has_value(); }, 10s, 50ms));
  ASSERT_TRUE(QueryRedis(base_port(), {"CLUSTER", "MEET", "127.0.0.1", std::to_string(stranger)}));
  CommandResult view;
  ASSERT_TRUE(WaitUntil(
      [&] {
        view = OnDeployment("status", {"--cluster", "--json"});
        return view.exit_code == 0 && view.out.find("\"handshake\"") == std::string::npos &&
               json::parse(view.out, nullptr, false).value("nodes", json::array()).size() == 3;
      },
      20s, 200ms))
      << view.Describe();
  json parsed = json::parse(view.out);
  EXPECT_EQ(parsed["cluster_state"], "ok");
  EXPECT_EQ(parsed["hosts"], 1);
  std::vector<json> shards;
  int slots = 0;
  for (const auto& node : parsed["nodes"]) {
    shards.push_back(node["shard"]);
    slots += node["slots"].get<int>();
    EXPECT_EQ(node["state"], "ok") << node.dump();
  }
  EXPECT_EQ(shards, (std::vector<json>{0, 1, nullptr}));  // by port: ours, then the stranger's
  EXPECT_EQ(slots, 16384);
  auto table = OnDeployment("status", {"--cluster"});
  EXPECT_EQ(table.exit_code, 0) << table.Describe();
  EXPECT_NE(table.out.find("3 node(s) on 1 host(s)"), std::string::npos) << table.out;

  kill(server.pid(), SIGKILL);
  server.WaitForExit(5s);
  // Its link drops at once, but comes and goes while the nodes retry it; after the node timeout
  // it is pfail, then fail, and stays so.
  json after;
  int code = -1;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto result = OnDeployment("status", {"--cluster", "--json"});
        code = result.exit_code;
        after = json::parse(result.out, nullptr, false);
        if (!after.is_object()) return false;
        for (const auto& node : after["nodes"]) {
          if (node["shard"].is_null()) return node["state"] == "fail";
        }
        return false;
      },
      30s, 200ms))
      << after.dump();
  EXPECT_EQ(code, 1) << after.dump();
  for (const auto& node : after["nodes"]) {
    if (!node["shard"].is_null()) {
      EXPECT_EQ(node["state"], "ok") << node.dump();
    }
  }
}

}  // namespace
}  // namespace shardctl::integration
