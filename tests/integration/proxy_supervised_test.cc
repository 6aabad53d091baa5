// `shardctl up --proxy-port`: the supervisor runs shardproxy in front of the cluster, heals it
// when it dies, reports it in status, and stops it with the deployment. Bad proxy settings are
// refused before anything starts.
#include <signal.h>
#include <unistd.h>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class ProxySupervisedTest : public ShardctlTest {
 protected:
  int ProxyPort() const { return base_port() + 45; }

  std::optional<RedisReply> ThroughProxy(const std::vector<std::string>& command) {
    std::string error;
    auto reply = QueryRedis(ProxyPort(), command, &error);
    if (!reply) ADD_FAILURE() << "proxy on port " << ProxyPort() << ": " << error;
    return reply;
  }

  pid_t ProxyPid() {
    json proxy = Status().value("proxy", json());
    return proxy.is_object() && proxy["pid"].is_number_integer() ? proxy["pid"].get<pid_t>() : 0;
  }
};

TEST_F(ProxySupervisedTest, ServesPlainClientsIsHealedAndStopsWithTheDeployment) {
  auto up = Up(3, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_NE(up.out.find("redis-cli -h 127.0.0.1 -p " + std::to_string(ProxyPort())),
            std::string::npos)
      << up.out;
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  ASSERT_TRUE(status.contains("proxy")) << status.dump(2);
  EXPECT_EQ(status["proxy"]["port"], ProxyPort());
  EXPECT_EQ(status["proxy"]["health"], "ok");
  EXPECT_EQ(status["proxy"]["restarts"], 0);
  const pid_t first = ProxyPid();
  ASSERT_GT(first, 0);

  // Keys on every shard, through one plain connection each time (no cluster support).
  auto set = ThroughProxy({"MSET", "a", "1", "b", "2", "c", "3", "d", "4"});
  ASSERT_TRUE(set);
  EXPECT_EQ(set->text, "OK");
  auto get = ThroughProxy({"MGET", "d", "c", "b", "a"});
  ASSERT_TRUE(get);
  ASSERT_EQ(get->elements.size(), 4u);
  EXPECT_EQ(get->elements[0].text, "4");
  EXPECT_EQ(get->elements[3].text, "1");

  // Killed: the supervisor starts a new one on the same port, and the data is still there.
  ASSERT_EQ(kill(first, SIGKILL), 0);
  const bool healed = WaitUntil(
      [&] {
        json proxy = Status().value("proxy", json());
        return proxy.is_object() && proxy["pid"].is_number_integer() &&
               proxy["pid"].get<pid_t>() != first && proxy["health"] == "ok";
      },
      20s, 50ms);
  ASSERT_TRUE(healed) << Status().dump(2);
  status = Status();
  EXPECT_EQ(status["proxy"]["restarts"], 1) << status.dump(2);
  EXPECT_EQ(status["proxy"]["last_exit"], "killed by signal 9") << status.dump(2);
  auto again = ThroughProxy({"GET", "c"});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->text, "3");

  const pid_t second = ProxyPid();
  auto down = OnDeployment("down");
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_TRUE(WaitUntil([&] { return !IsAlive(second); }, 5s)) << "proxy pid " << second;
  EXPECT_TRUE(PortBindable(ProxyPort()));
  EXPECT_FALSE(std::filesystem::exists(deployment_dir() / "proxy.pid"));
  ExpectNothingRunning("after down");
}

TEST_F(ProxySupervisedTest, AProxyPortTheShardsUseIsRefusedBeforeAnythingStarts) {
  auto up = Up(3, {"--proxy-port", std::to_string(base_port() + 1)});
  EXPECT_EQ(up.exit_code, 2) << up.Describe();
  EXPECT_NE(up.err.find("--proxy-port " + std::to_string(base_port() + 1) + ": shard 1 uses it"),
            std::string::npos)
      << up.err;
  ExpectNothingRunning("after a refused up");
}

TEST_F(ProxySupervisedTest, ATakenProxyPortIsRefusedBeforeAnythingStarts) {
  const int taken = ListenOn(ProxyPort());
  ASSERT_GE(taken, 0);
  auto up = Up(3, {"--proxy-port", std::to_string(ProxyPort())});
  close(taken);
  EXPECT_EQ(up.exit_code, 1) << up.Describe();
  EXPECT_NE(up.err.find("--proxy-port " + std::to_string(ProxyPort()) + " is in use"),
            std::string::npos)
      << up.err;
  ExpectNothingRunning("after a refused up");
}

TEST_F(ProxySupervisedTest, AMissingProxyBinaryIsRefusedWithTheFix) {
  auto up = RunCommand({SHARDCTL_BINARY, "up", "--shards", "1", "--base-port",
                        std::to_string(base_port()), "--proxy-port", std::to_string(ProxyPort()),
                        "--name", name(), "--state-dir", state_root().string()},
                       30s, {{"SHARDCTL_PROXY_BINARY", "/nonexistent/shardproxy"}});
  EXPECT_EQ(up.exit_code, 2) << up.Describe();
  EXPECT_NE(up.err.find("SHARDCTL_PROXY_BINARY"), std::string::npos) << up.err;
  ExpectNothingRunning("after a refused up");
}

TEST_F(ProxySupervisedTest, ProxyThreadsWithoutAProxyPortIsAUsageError) {
  auto up = Up(1, {"--proxy-threads", "2"});
  EXPECT_EQ(up.exit_code, 2) << up.Describe();
  EXPECT_NE(up.err.find("--proxy-threads: needs --proxy-port"), std::string::npos) << up.err;
  ExpectNothingRunning("after a refused up");
}

TEST_F(ProxySupervisedTest, ProxyReadFromReachesTheProxyAndIsValidated) {
  auto bad = Up(1, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-read-from", "any"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("expected primary, prefer-replica or replica"), std::string::npos)
      << bad.err;
  auto alone = Up(1, {"--proxy-read-from", "replica"});
  EXPECT_EQ(alone.exit_code, 2) << alone.Describe();
  EXPECT_NE(alone.err.find("--proxy-read-from: needs --proxy-port"), std::string::npos)
      << alone.err;
  ExpectNothingRunning("after refused ups");
  auto up = Up(2, {"--replicas", "1", "--proxy-port", std::to_string(ProxyPort()),
                   "--proxy-read-from", "replica"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(Status()["proxy"].value("read_from", ""), "replica");
  auto info = ThroughProxy({"INFO", "proxy"});
  ASSERT_TRUE(info);
  EXPECT_NE(info->text.find("read_from:replica"), std::string::npos) << info->text;
}

}  // namespace
}  // namespace shardctl::integration
