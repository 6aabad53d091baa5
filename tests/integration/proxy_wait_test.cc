// WAIT through shardproxy: a 2-primary cluster with one replica each, the supervised proxy
// (one thread). WAIT must count the replicas that have this client's writes — never more — and
// a WAIT that blocks must not hold up other clients.
#include <signal.h>

#include <future>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using Clock = std::chrono::steady_clock;

class ProxyWaitTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    auto up = Up(2, {"--replicas", "1", "--proxy-port", std::to_string(ProxyPort()),
                     "--proxy-threads", "1"});
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
  }

  int ProxyPort() const { return base_port() + 45; }

  std::unique_ptr<RedisConnection> Connect() {
    std::string error;
    auto connection = RedisConnection::Open(ProxyPort(), &error);
    EXPECT_TRUE(connection) << error;
    return connection;
  }

  // The primary serving `key`: the one node that answers GET without MOVED (replicas redirect
  // too, without READONLY).
  int PrimaryOf(const std::string& key) {
    const json status = Status();  // kept: a range-for over Status()["shards"] would dangle
    for (const auto& shard : status["shards"]) {
      const int port = shard["port"].get<int>();
      auto reply = QueryRedis(port, {"GET", key});
      if (reply && reply->text.rfind("MOVED", 0) != 0) return port;
    }
    return 0;
  }

  // INFO clients' blocked_clients of the server on `port` (a WAIT counts); -1 without a reply.
  long long BlockedClients(int port) {
    auto info = QueryRedis(port, {"INFO", "clients"});
    const std::string field = "blocked_clients:";
    const size_t at = info ? info->text.find(field) : std::string::npos;
    return at == std::string::npos ? -1 : std::stoll(info->text.substr(at + field.size()));
  }

  // The pid of the replica of the primary on `port` (INFO replication's slave0 port).
  pid_t ReplicaPidOf(int port) {
    auto info = QueryRedis(port, {"INFO", "replication"});
    if (!info) return 0;
    const size_t at = info->text.find("slave0:");
    if (at == std::string::npos) return 0;
    const size_t port_at = info->text.find("port=", at);
    const int replica_port = std::stoi(info->text.substr(port_at + 5));
    const json status = Status();
    for (const auto& shard : status["shards"]) {
      if (shard["port"].get<int>() == replica_port && shard["pid"].is_number_integer()) {
        return shard["pid"].get<pid_t>();
      }
    }
    return 0;
  }
};

// SIGSTOPs a process we started (a replica of our own cluster) and always SIGCONTs it.
class Stopped {
 public:
  explicit Stopped(pid_t pid) : pid_(pid) { kill(pid_, SIGSTOP); }
  ~Stopped() { kill(pid_, SIGCONT); }
  Stopped(const Stopped&) = delete;
  Stopped& operator=(const Stopped&) = delete;

 private:
  pid_t pid_;
};

TEST_F(ProxyWaitTest, WaitCountsTheReplicaThatHasTheClientsWrites) {
  auto client = Connect();
  ASSERT_TRUE(client);
  // First WAIT: the SET went over a shared connection, so the proxy catches up on every primary.
  ASSERT_EQ(TextOf(client->Command({"SET", "{a}k", "1"})), "OK");
  EXPECT_EQ(IntegerOf(client->Command({"WAIT", "1", "5000"})), 1);
  // From now on the client's writes are pinned: WAIT asks the shards it wrote to.
  ASSERT_EQ(TextOf(client->Command({"SET", "{a}k", "2"})), "OK");
  EXPECT_EQ(IntegerOf(client->Command({"WAIT", "1", "5000"})), 1);
  // There is one replica per shard: asking for two waits out the timeout and says 1.
  const auto started = Clock::now();
  EXPECT_EQ(IntegerOf(client->Command({"WAIT", "2", "300"})), 1);
  EXPECT_GE(Clock::now() - started, 250ms);
  EXPECT_EQ(TextOf(client->Command({"WAIT", "1"})),
            "ERR wrong number of arguments for 'wait' command");
}

TEST_F(ProxyWaitTest, WaitNeverCountsAReplicaThatMissedTheWrite) {
  const std::string key = "{b}k";
  ASSERT_EQ(TextOf(QueryRedis(ProxyPort(), {"SET", key, "0"})), "OK");
  const int primary = PrimaryOf(key);
  ASSERT_NE(primary, 0);
  const pid_t replica = ReplicaPidOf(primary);
  ASSERT_GT(replica, 0);
  auto client = Connect();
  ASSERT_TRUE(client);
  for (int round = 0; round < 2; ++round) {  // the catch-up WAIT, then the pinned one
    {
      Stopped frozen(replica);
      ASSERT_EQ(TextOf(client->Command({"SET", key, std::to_string(round)})), "OK");
      EXPECT_EQ(IntegerOf(client->Command({"WAIT", "1", "300"})), 0)
          << "round " << round << ": WAIT counted a stopped replica";
    }
    // Once it runs again it catches up and acknowledges.
    EXPECT_EQ(IntegerOf(client->Command({"WAIT", "1", "5000"})), 1) << "round " << round;
  }
}

TEST_F(ProxyWaitTest, ABlockedWaitHoldsUpNoOtherClient) {
  auto waiter = std::async(std::launch::async, [&] {
    auto connection = RedisConnection::Open(ProxyPort(), nullptr, 10s);
    if (!connection) return -2LL;
    connection->Command({"SET", "{a}w", "1"});
    return IntegerOf(connection->Command({"WAIT", "2", "1500"}));  // only 1 replica: times out
  });
  // The other client starts once the shard holds the WAIT blocked.
  const int primary = PrimaryOf("{a}w");
  ASSERT_NE(primary, 0);
  ASSERT_TRUE(WaitUntil([&] { return BlockedClients(primary) > 0; }, 10s))
      << "the WAIT never blocked on " << primary;
  auto other = Connect();
  ASSERT_TRUE(other);
  const auto started = Clock::now();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(TextOf(other->Command({"SET", "{a}other", std::to_string(i)})), "OK");
  }
  EXPECT_LT(Clock::now() - started, 1s) << "a shared connection stalled behind WAIT";
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiter.get(), 1);
}

}  // namespace
}  // namespace shardctl::integration
