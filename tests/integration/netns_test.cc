// A deployment reached from another host: two network namespaces joined by a veth pair stand for
// two machines (10.211.0.1 and 10.211.0.2). shardctl runs in the first, bound to its non-loopback
// address with a password; clients in the second reach the shards, the proxy and the cluster
// through it, and nothing is served without the password. Needs root (it skips otherwise).
#include <unistd.h>

#include <fstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kServerAddress = "10.211.0.1";
constexpr const char* kClientAddress = "10.211.0.2";
constexpr const char* kPassword = "netns-test-pw-5d1e";

class NetnsTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    const std::string id = std::to_string(getpid());
    server_ns_ = "shardctl-" + id + "-srv";
    client_ns_ = "shardctl-" + id + "-cli";
    if (geteuid() != 0 || Ip({"netns", "add", server_ns_}).exit_code != 0) {
      GTEST_SKIP() << "needs root and ip netns to stand two hosts up in network namespaces";
    }
    made_ = true;
    const std::string server_link = "sc" + id + "s", client_link = "sc" + id + "c";
    for (const auto& step : std::vector<std::vector<std::string>>{
             {"netns", "add", client_ns_},
             {"link", "add", server_link, "type", "veth", "peer", "name", client_link},
             {"link", "set", server_link, "netns", server_ns_},
             {"link", "set", client_link, "netns", client_ns_},
             {"-n", server_ns_, "addr", "add", std::string(kServerAddress) + "/24", "dev",
              server_link},
             {"-n", client_ns_, "addr", "add", std::string(kClientAddress) + "/24", "dev",
              client_link},
             {"-n", server_ns_, "link", "set", server_link, "up"},
             {"-n", client_ns_, "link", "set", client_link, "up"},
             {"-n", server_ns_, "link", "set", "lo", "up"},
             {"-n", client_ns_, "link", "set", "lo", "up"}}) {
      auto done = Ip(step);
      ASSERT_EQ(done.exit_code, 0) << done.Describe();
    }
  }
  void TearDown() override {
    ShardctlTest::TearDown();  // down, and every process of the test gone, first
    if (made_) {
      Ip({"netns", "del", server_ns_});
      Ip({"netns", "del", client_ns_});
    }
  }

  static CommandResult Ip(std::vector<std::string> args) {
    args.insert(args.begin(), "ip");
    return RunCommand(args, 20s);
  }
  // `command` run inside network namespace `ns`.
  static CommandResult In(const std::string& ns, std::vector<std::string> command,
                          std::chrono::milliseconds timeout = 90s) {
    command.insert(command.begin(), {"ip", "netns", "exec", ns});
    return RunCommand(command, timeout);
  }
  CommandResult ShardctlOnServer(std::vector<std::string> args) {
    args.insert(args.begin(), ShardctlBinary());
    args.insert(args.end(), {"--name", name(), "--state-dir", state_root().string()});
    return In(server_ns_, args);
  }
  CommandResult CliFromClient(int port, std::vector<std::string> args, bool login = true) {
    std::vector<std::string> command = {"redis-cli", "-h", kServerAddress, "-p",
                                        std::to_string(port)};
    if (login) command.insert(command.end(), {"--no-auth-warning", "-a", kPassword});
    command.insert(command.end(), args.begin(), args.end());
    return In(client_ns_, command, 20s);
  }

  std::string server_ns_, client_ns_;
  bool made_ = false;
};

TEST_F(NetnsTest, ClientsOnAnotherHostReachTheShardsAndTheProxyWithThePassword) {
  const fs::path pass = scratch_dir() / "pass";
  std::ofstream(pass) << kPassword << "\n";
  fs::permissions(pass, fs::perms::owner_read | fs::perms::owner_write);
  const int proxy_port = base_port() + 40;
  auto up = ShardctlOnServer({"up", "--shards", "3", "--replicas", "1", "--base-port",
                              std::to_string(base_port()), "--bind", kServerAddress, "--announce",
                              kServerAddress, "--password-file", pass.string(), "--proxy-port",
                              std::to_string(proxy_port), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();

  // From the other host: nothing without the password; with it, the cluster and the proxy.
  auto refused = CliFromClient(base_port(), {"GET", "k"}, /*login=*/false);
  EXPECT_NE(refused.out.find("NOAUTH"), std::string::npos) << refused.Describe();
  EXPECT_EQ(CliFromClient(base_port(), {"-c", "SET", "from-b", "1"}).out, "OK\n");
  EXPECT_EQ(CliFromClient(proxy_port, {"GET", "from-b"}).out, "1\n");
  auto nodes = CliFromClient(base_port() + 2, {"CLUSTER", "NODES"});
  EXPECT_NE(nodes.out.find(std::string(kServerAddress) + ":" + std::to_string(base_port())),
            std::string::npos)
      << "nodes announce the host's address: " << nodes.out;
  auto bench = In(client_ns_,
                  {ShardctlBinary(), "bench", "run", "--json", "--cluster",
                   std::string(kServerAddress) + ":" + std::to_string(base_port()),
                   "--password-file", pass.string(), "--requests", "2000", "--connections", "2"});
  ASSERT_EQ(bench.exit_code, 0) << bench.Describe();
  EXPECT_NE(bench.out.find("\"errors\": 0"), std::string::npos) << bench.out;

  // On the host itself, status and status --cluster log in and see all six nodes there.
  auto status = ShardctlOnServer({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.Describe();
  auto cluster = ShardctlOnServer({"status", "--cluster", "--json"});
  ASSERT_EQ(cluster.exit_code, 0) << cluster.Describe();
  json view = json::parse(cluster.out);
  EXPECT_EQ(view["hosts"], 1);
  ASSERT_EQ(view["nodes"].size(), 6u) << cluster.out;
  for (const auto& node : view["nodes"]) {
    EXPECT_EQ(node["host"], kServerAddress);
    EXPECT_FALSE(node["shard"].is_null()) << node.dump();
  }
  auto down = ShardctlOnServer({"down"});
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
}

}  // namespace
}  // namespace shardctl::integration
