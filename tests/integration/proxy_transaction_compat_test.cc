// MULTI through shardproxy as Redis' own multi.tcl sees it: a shard out of memory refuses a
// queued write at queue time (-OOM) and EXEC then aborts; EXEC waits for those answers even when
// the client pipelines; commands Redis refuses inside MULTI are refused in its words; server-wide
// commands inside MULTI run on every shard, their replies merged in EXEC's. Real
// 3-shard cluster, real proxy, hiredis clients; maxmemory is put back by TearDown.
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

class ProxyTransactionCompatTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy({"--threads", "1"});
    client_ = RedisConnection::Open(proxy_port());
    ASSERT_TRUE(client_);
  }

  void TearDown() override {
    Proxy({"CONFIG", "SET", "maxmemory", "0"});
    ProxyTest::TearDown();
  }

  std::string Proxy(const std::vector<std::string>& command) {
    return TextOf(QueryRedis(proxy_port(), command));
  }
  std::string Client(const std::vector<std::string>& command) {
    return TextOf(client_->Command(command));
  }

  std::unique_ptr<RedisConnection> client_;
};

TEST_F(ProxyTransactionCompatTest, AWriteQueuedOnAShardOutOfMemoryIsRefusedAtQueueTime) {
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "1"}), "OK");
  EXPECT_EQ(Client({"MULTI"}), "OK");
  const std::string refused = Client({"SET", "x", "1"});
  EXPECT_EQ(refused.rfind("OOM command not allowed", 0), 0u) << refused;
  // Reads are not refused, and DISCARD ends the transaction as on Redis.
  EXPECT_EQ(Client({"GET", "x"}), "QUEUED");
  EXPECT_EQ(Client({"DISCARD"}), "OK");
  EXPECT_EQ(Client({"PING"}), "PONG");
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "0"}), "OK");
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

// Redis' "EXEC fails if there are errors while queueing commands #2".
TEST_F(ProxyTransactionCompatTest, ARefusedWriteMakesExecAbortAfterMemoryIsBack) {
  EXPECT_EQ(Client({"MULTI"}), "OK");
  EXPECT_EQ(Client({"SET", "foo1{t}", "bar1"}), "QUEUED");
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "1"}), "OK");
  EXPECT_EQ(Client({"LPUSH", "mylist{t}", "v"}).rfind("OOM", 0), 0u);
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "0"}), "OK");
  EXPECT_EQ(Client({"SET", "foo2{t}", "bar2"}), "QUEUED");
  EXPECT_EQ(Client({"EXEC"}).rfind("EXECABORT", 0), 0u);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"EXISTS", "foo1{t}", "foo2{t}", "mylist{t}"})), 0);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

// Redis' "EXEC with at least one use-memory command should fail": queued while memory was
// fine, refused by the shard at EXEC, which names why.
TEST_F(ProxyTransactionCompatTest, ExecNamesTheShardsRefusal) {
  EXPECT_EQ(Client({"MULTI"}), "OK");
  EXPECT_EQ(Client({"SET", "x", "1"}), "QUEUED");
  EXPECT_EQ(Client({"GET", "x"}), "QUEUED");
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "1"}), "OK");
  const std::string exec = Client({"EXEC"});
  EXPECT_EQ(exec.rfind("EXECABORT Transaction discarded because of: OOM", 0), 0u) << exec;
  ASSERT_EQ(Proxy({"CONFIG", "SET", "maxmemory", "0"}), "OK");
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

// A pipelined transaction and the read after it: EXEC waits for the queue answers, and the
// read after EXEC sees its write.
TEST_F(ProxyTransactionCompatTest, APipelinedTransactionKeepsItsOrder) {
  for (int round = 0; round < 20; ++round) {
    const std::string value = std::to_string(round);
    client_->Append({"MULTI"});
    client_->Append({"SET", "k{p}", value});
    client_->Append({"INCR", "n{p}"});
    client_->Append({"EXEC"});
    client_->Append({"GET", "k{p}"});
    EXPECT_EQ(TextOf(client_->GetReply()), "OK");
    EXPECT_EQ(TextOf(client_->GetReply()), "QUEUED");
    EXPECT_EQ(TextOf(client_->GetReply()), "QUEUED");
    auto exec = client_->GetReply();
    ASSERT_TRUE(exec);
    ASSERT_EQ(exec->elements.size(), 2u);
    EXPECT_EQ(exec->elements[1].integer, round + 1);
    EXPECT_EQ(TextOf(client_->GetReply()), value);
  }
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 2);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DEL", "k{p}", "n{p}"})), 2);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

TEST_F(ProxyTransactionCompatTest, SaveAndShutdownAreRefusedInsideMulti) {
  for (const std::string command : {"SAVE", "SHUTDOWN"}) {
    EXPECT_EQ(Client({"MULTI"}), "OK");
    EXPECT_EQ(Client({"SET", "foo", "bar"}), "QUEUED");
    EXPECT_EQ(Client({command}), "ERR Command not allowed inside a transaction");
    EXPECT_EQ(Client({"EXEC"}).rfind("EXECABORT", 0), 0u);
  }
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

// Redis' "MULTI with config error" and "MULTI with FLUSHALL".
TEST_F(ProxyTransactionCompatTest, ServerWideCommandsRunInsideMultiOnEveryShard) {
  EXPECT_EQ(Client({"MULTI"}), "OK");
  EXPECT_EQ(Client({"SET", "foo", "bar"}), "QUEUED");
  EXPECT_EQ(Client({"CONFIG", "SET", "maxmemory", "bla"}), "QUEUED");
  EXPECT_EQ(Client({"CONFIG", "SET", "slowlog-max-len", "77"}), "QUEUED");
  EXPECT_EQ(Client({"DBSIZE"}), "QUEUED");
  auto exec = client_->Command({"EXEC"});
  ASSERT_TRUE(exec);
  ASSERT_EQ(exec->elements.size(), 4u) << exec->text;
  EXPECT_EQ(exec->elements[0].text, "OK");
  EXPECT_EQ(exec->elements[1].text.rfind("ERR CONFIG SET failed", 0), 0u);
  EXPECT_EQ(exec->elements[2].text, "OK");
  EXPECT_EQ(exec->elements[3].integer, 1);  // the cluster's keys, not one shard's
  for (int shard = 0; shard < 3; ++shard) {
    auto setting = QueryRedis(shard_port(shard), {"CONFIG", "GET", "slowlog-max-len"});
    ASSERT_TRUE(setting);
    ASSERT_EQ(setting->elements.size(), 2u);
    EXPECT_EQ(setting->elements[1].text, "77") << "shard " << shard;
  }
  EXPECT_EQ(Proxy({"CONFIG", "SET", "slowlog-max-len", "128"}), "OK");
  EXPECT_EQ(Proxy({"SET", "other", "x"}), "OK");
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 2);
  EXPECT_EQ(Client({"MULTI"}), "OK");
  EXPECT_EQ(Client({"FLUSHALL"}), "QUEUED");
  EXPECT_EQ(Client({"DBSIZE"}), "QUEUED");
  exec = client_->Command({"EXEC"});
  ASSERT_TRUE(exec);
  ASSERT_EQ(exec->elements.size(), 2u) << exec->text;
  EXPECT_EQ(exec->elements[0].text, "OK");
  EXPECT_EQ(exec->elements[1].integer, 0);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
}

}  // namespace
}  // namespace shardctl::integration
