// Replica reads through shardproxy (--read-from): a real 2-primary cluster with one replica each,
// the proxy started standalone (fast map refresh) or by `shardctl up --proxy-read-from`. Where
// commands ran is read from each node's INFO commandstats.
#include <signal.h>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

class ProxyReplicaTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    auto up = Up(2, {"--replicas", "1"});
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    const json status = Status();
    for (const auto& shard : status["shards"]) {
      const int port = shard["port"].get<int>();
      (shard.value("role", "") == "replica" ? replicas_ : primaries_).push_back(port);
      pids_[port] = shard["pid"].get<pid_t>();
    }
    ASSERT_EQ(primaries_.size(), 2u);
    ASSERT_EQ(replicas_.size(), 2u);
  }

  // shardproxy on base+45+offset with --read-from `mode`; waits until its map lists both
  // replicas (Redis lists a replica in CLUSTER SLOTS once it has replicated something).
  int StartProxy(const std::string& mode, int offset = 0) {
    const int port = base_port() + 45 + offset;
    proxies_.push_back(std::make_unique<BackgroundCommand>(
        std::vector<std::string>{
            ShardproxyBinary(), "--cluster", "127.0.0.1:" + std::to_string(primaries_[0]),
            "--listen", "127.0.0.1:" + std::to_string(port), "--threads", "1", "--read-from", mode,
            "--refresh-interval", "300ms", "--timeout", "500ms"},
        scratch_dir() / ("proxy" + std::to_string(offset) + ".out"),
        scratch_dir() / ("proxy" + std::to_string(offset) + ".err")));
    EXPECT_TRUE(WaitUntil([&] { return TextOf(QueryRedis(port, {"PING"})) == "PONG"; }, 10s));
    for (int i = 0; i < 20; ++i) QueryRedis(port, {"SET", "warm:" + std::to_string(i), "x"});
    EXPECT_TRUE(WaitUntil([&] { return Info(port, "proxy", "slot_map_replicas") == "2"; }, 20s))
        << "the proxy's map never listed the replicas";
    return port;
  }

  void TearDown() override {
    for (auto& proxy : proxies_) {
      kill(proxy->pid(), SIGTERM);
      EXPECT_EQ(proxy->WaitForExit(10s), 0) << "shardproxy did not exit cleanly";
    }
    proxies_.clear();
    ShardctlTest::TearDown();
  }

  static std::string Info(int port, const std::string& section, const std::string& field) {
    auto info = QueryRedis(port, {"INFO", section});
    if (!info) return "";
    for (const auto& line : SplitLines(info->text)) {
      if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
    }
    return "";
  }

  // GETs run on the nodes at `ports`, per INFO commandstats.
  static long long Gets(const std::vector<int>& ports) {
    long long total = 0;
    for (int port : ports) {
      const std::string stat = Info(port, "commandstats", "cmdstat_get");
      if (stat.rfind("calls=", 0) == 0) total += std::stoll(stat.substr(6));
    }
    return total;
  }

  // Every replica has applied all its primary has written (INFO replication offsets).
  bool ReplicasCaughtUp() const {
    for (int replica : replicas_) {
      const std::string master_port = Info(replica, "replication", "master_port");
      const std::string applied = Info(replica, "replication", "slave_repl_offset");
      if (master_port.empty() || applied.empty()) return false;
      const std::string written = Info(std::stoi(master_port), "replication", "master_repl_offset");
      if (written.empty() || std::stoll(applied) < std::stoll(written)) return false;
    }
    return true;
  }

  std::vector<int> primaries_, replicas_;
  std::map<int, pid_t> pids_;
  std::vector<std::unique_ptr<BackgroundCommand>> proxies_;
};

TEST_F(ProxyReplicaTest, ReplicaModeSendsEveryReadToReplicasAndWritesToPrimaries) {
  const int proxy = StartProxy("replica");
  auto client = RedisConnection::Open(proxy);
  ASSERT_TRUE(client);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(TextOf(client->Command({"SET", "k" + std::to_string(i), std::to_string(i)})), "OK");
  }
  // Replication is asynchronous: read once it has caught up.
  ASSERT_TRUE(WaitUntil([&] { return TextOf(client->Command({"GET", "k99"})) == "99"; }, 5s));
  const long long on_primaries = Gets(primaries_);
  const long long on_replicas = Gets(replicas_);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(TextOf(client->Command({"GET", "k" + std::to_string(i)})), std::to_string(i));
  }
  auto mget = client->Command({"MGET", "k1", "k2", "k3", "k4"});  // split by slot, parts too
  ASSERT_TRUE(mget);
  EXPECT_EQ(mget->elements.size(), 4u);
  EXPECT_EQ(Gets(primaries_), on_primaries) << "a read went to a primary";
  EXPECT_EQ(Gets(replicas_), on_replicas + 100);
  EXPECT_EQ(Info(proxy, "proxy", "read_from"), "replica");
  EXPECT_GE(std::stoll(Info(proxy, "proxy", "replica_reads")), 104);
}

TEST_F(ProxyReplicaTest, PreferReplicaReadsAClientsOwnFreshWritesFromThePrimary) {
  const int proxy = StartProxy("prefer-replica");
  auto client = RedisConnection::Open(proxy);
  ASSERT_TRUE(client);
  ASSERT_EQ(TextOf(client->Command({"SET", "fresh", "1"})), "OK");
  const auto written = std::chrono::steady_clock::now();
  const long long on_primaries = Gets(primaries_);
  const long long on_replicas = Gets(replicas_);
  EXPECT_EQ(TextOf(client->Command({"GET", "fresh"})), "1");  // just written: the primary
  EXPECT_EQ(Gets(primaries_), on_primaries + 1);
  EXPECT_EQ(Gets(replicas_), on_replicas);
  // Once the replicas have the write and the client's second of reading its own writes from the
  // primary is over (both conditions, not a guess at how long replication takes).
  ASSERT_TRUE(WaitUntil([&] { return ReplicasCaughtUp(); }, 10s)) << "replication stalled";
  std::this_thread::sleep_until(written + 1100ms);
  EXPECT_EQ(TextOf(client->Command({"GET", "fresh"})), "1");  // a second later: a replica
  EXPECT_EQ(Gets(replicas_), on_replicas + 1);
  // Another client never wrote it: a replica at once.
  EXPECT_EQ(TextOf(QueryRedis(proxy, {"GET", "fresh"})), "1");
  EXPECT_EQ(Gets(replicas_), on_replicas + 2);
}

TEST_F(ProxyReplicaTest, AStoppedReplicaFallsBackToThePrimary) {
  const int proxy = StartProxy("replica");
  auto client = RedisConnection::Open(proxy);
  ASSERT_TRUE(client);
  ASSERT_EQ(TextOf(client->Command({"SET", "f", "v"})), "OK");
  ASSERT_TRUE(WaitUntil([&] { return TextOf(client->Command({"GET", "f"})) == "v"; }, 5s));
  const long long fallbacks = std::stoll(Info(proxy, "proxy", "replica_fallbacks"));
  for (int replica : replicas_) kill(pids_[replica], SIGSTOP);
  std::vector<std::string> answers;
  for (int i = 0; i < 5; ++i) answers.push_back(TextOf(client->Command({"GET", "f"})));
  for (int replica : replicas_) kill(pids_[replica], SIGCONT);
  // The first read times out on its replica (--timeout 500ms) and is retried on the primary;
  // the replica is then skipped for a while.
  EXPECT_EQ(answers, std::vector<std::string>(5, "v"));
  EXPECT_GT(std::stoll(Info(proxy, "proxy", "replica_fallbacks")), fallbacks);
}

TEST_F(ProxyReplicaTest, PrimaryModeSendsNothingToReplicas) {
  const int proxy = StartProxy("primary");
  const long long on_replicas = Gets(replicas_);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(QueryRedis(proxy, {"GET", "k" + std::to_string(i)}));
  EXPECT_EQ(Gets(replicas_), on_replicas);
}

TEST_F(ProxyReplicaTest, RedisPyReadsThroughReplicas) {
  const int proxy = StartProxy("prefer-replica");
  for (int protocol : {3, 2}) {
    const char* python = std::getenv("SHARDCTL_PYTHON");
    auto run =
        RunCommand({python != nullptr && *python != '\0' ? python : "python3",
                    (SourceDir() / "tests/integration/proxy_clients.py").string(), "--port",
                    std::to_string(proxy), "--protocol", std::to_string(protocol), "pipeline"},
                   60s);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
  }
  EXPECT_GT(std::stoll(Info(proxy, "proxy", "replica_reads")), 0);
}

}  // namespace
}  // namespace shardctl::integration
