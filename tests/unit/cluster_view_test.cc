// ops/cluster_view.h: the whole cluster as one node sees it, local shards matched by address.
#include "launcher/ops/cluster_view.h"

#include <gtest/gtest.h>

namespace shardctl::launcher {
namespace {

Plan TwoShardPlan() {
  Plan plan;
  plan.bind = "10.0.0.1";
  plan.shards = {{.index = 0, .port = 7000}, {.index = 1, .port = 7001}};
  return plan;
}

std::vector<common::NodeLine> Nodes(const std::string& text) {
  auto parsed = common::ParseClusterNodes(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message();
  return parsed.ok() ? *parsed : std::vector<common::NodeLine>{};
}

const char* kTwoHosts =
    "aaa 10.0.0.1:7000@17000,host-a myself,master - 0 0 1 connected 0-8191\n"
    "bbb 10.0.0.2:7000@17000,host-b master - 0 1 2 connected 8192-16383\n"
    "ccc 10.0.0.1:7001@17001 slave bbb 0 1 2 connected\n"
    "ddd 10.0.0.2:7001@17001 slave aaa 0 1 1 connected\n";

TEST(ClusterViewTest, SortsByHostAndPortAndMatchesLocalShardsByAddress) {
  auto view = MakeClusterView(TwoShardPlan(), Nodes(kTwoHosts), "ok", "10.0.0.1:7000");
  ASSERT_EQ(view.nodes.size(), 4u);
  EXPECT_EQ(view.hosts, 2);
  std::vector<std::string> order;
  std::vector<int> shards;
  for (const auto& entry : view.nodes) {
    order.push_back(entry.node.id);
    shards.push_back(entry.local_shard);
    EXPECT_EQ(entry.state, "ok") << entry.node.id;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"aaa", "ccc", "bbb", "ddd"}));
  EXPECT_EQ(shards, (std::vector<int>{0, 1, -1, -1}));
  EXPECT_EQ(view.nodes[0].node.hostname, "host-a");
  EXPECT_EQ(ClusterViewVerdict(view), Verdict::kOk);
}

TEST(ClusterViewTest, AFailingOrUnlinkedNodeDegradesAndAClusterNotOkIsDown) {
  const std::string failing =
      "aaa 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"
      "bbb 10.0.0.2:7000@17000 master,fail - 0 1 2 disconnected\n"
      "ccc 10.0.0.2:7001@17001 master,fail? - 0 1 3 connected\n"
      "ddd 10.0.0.3:7001@17001 slave aaa 0 1 1 disconnected\n"
      "eee :0@0 handshake,noaddr - 0 0 0 disconnected\n";
  auto view = MakeClusterView(TwoShardPlan(), Nodes(failing), "ok", "10.0.0.1:7000");
  std::map<std::string, std::string> state;
  for (const auto& entry : view.nodes) state[entry.node.id] = entry.state;
  EXPECT_EQ(state, (std::map<std::string, std::string>{{"aaa", "ok"},
                                                       {"bbb", "fail"},
                                                       {"ccc", "pfail"},
                                                       {"ddd", "disconnected"},
                                                       {"eee", "handshake"}}));
  EXPECT_EQ(ClusterViewVerdict(view), Verdict::kDegraded);
  view.cluster_state = "fail";
  EXPECT_EQ(ClusterViewVerdict(view), Verdict::kDown);
}

}  // namespace
}  // namespace shardctl::launcher
