// Commands that need a connection of their own through shardproxy: WATCH transactions, XREAD
// BLOCK, and the per-thread pool the pinned connections go back to. Real 3-shard cluster, real
// proxy (one thread, so every client meets the same pool), hiredis and redis-py clients.
#include <signal.h>

#include <future>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using Clock = std::chrono::steady_clock;

class ProxyPinnedTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    // --timeout 1000: a stopped shard fails pinned connections quickly (blocking ones exempt).
    UpWithProxy({"--threads", "1", "--timeout", "1000"});
  }

  std::unique_ptr<RedisConnection> Connect() {
    std::string error;
    auto connection = RedisConnection::Open(proxy_port(), &error);
    EXPECT_TRUE(connection) << error;
    return connection;
  }

  // The clients on shard `port` blocked in `command`, per CLIENT LIST.
  int BlockedOn(int port, const std::string& command) {
    auto list = QueryRedis(port, {"CLIENT", "LIST"});
    int blocked = 0;
    for (const auto& line : SplitLines(list ? list->text : "")) {
      if (line.find("cmd=" + command) != std::string::npos &&
          line.find("flags=b") != std::string::npos) {
        ++blocked;
      }
    }
    return blocked;
  }
};

std::string Text(RedisConnection& connection, const std::vector<std::string>& argv) {
  return TextOf(connection.Command(argv));
}

TEST_F(ProxyPinnedTest, WatchAbortsExecWhenAnotherClientChangedTheKey) {
  auto mine = Connect();
  auto other = Connect();
  ASSERT_TRUE(mine && other);
  ASSERT_EQ(Text(*mine, {"SET", "{w}k", "1"}), "OK");
  ASSERT_EQ(Text(*mine, {"WATCH", "{w}k"}), "OK");
  EXPECT_EQ(Text(*mine, {"GET", "{w}k"}), "1");
  ASSERT_EQ(Text(*other, {"SET", "{w}k", "2"}), "OK");
  ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
  ASSERT_EQ(Text(*mine, {"SET", "{w}k", "3"}), "QUEUED");
  auto aborted = mine->Command({"EXEC"});
  ASSERT_TRUE(aborted);
  EXPECT_EQ(aborted->kind, RedisReply::Kind::kNil) << aborted->text;
  EXPECT_EQ(Text(*other, {"GET", "{w}k"}), "2");

  // Unchanged: EXEC runs, and the watch ended with it.
  ASSERT_EQ(Text(*mine, {"WATCH", "{w}k"}), "OK");
  ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
  ASSERT_EQ(Text(*mine, {"INCR", "{w}k"}), "QUEUED");
  auto ran = mine->Command({"EXEC"});
  ASSERT_TRUE(ran);
  ASSERT_EQ(ran->elements.size(), 1u) << ran->text;
  EXPECT_EQ(ran->elements[0].integer, 3);
  ASSERT_EQ(Text(*other, {"SET", "{w}k", "9"}), "OK");
  ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
  ASSERT_EQ(Text(*mine, {"INCR", "{w}k"}), "QUEUED");
  auto unwatched = mine->Command({"EXEC"});
  ASSERT_TRUE(unwatched);
  ASSERT_EQ(unwatched->elements.size(), 1u) << unwatched->text;
  EXPECT_EQ(unwatched->elements[0].integer, 10);
}

TEST_F(ProxyPinnedTest, DiscardAndUnwatchEndTheWatch) {
  auto mine = Connect();
  auto other = Connect();
  ASSERT_TRUE(mine && other);
  for (const std::string end : {"DISCARD", "UNWATCH"}) {
    ASSERT_EQ(Text(*mine, {"WATCH", "{w}d"}), "OK");
    if (end == "DISCARD") {
      ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
      ASSERT_EQ(Text(*mine, {"DISCARD"}), "OK");
    } else {
      ASSERT_EQ(Text(*mine, {"UNWATCH"}), "OK");
    }
    ASSERT_EQ(Text(*other, {"SET", "{w}d", end}), "OK");
    ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
    ASSERT_EQ(Text(*mine, {"SET", "{w}d", "mine"}), "QUEUED");
    auto ran = mine->Command({"EXEC"});
    ASSERT_TRUE(ran);
    EXPECT_EQ(ran->elements.size(), 1u) << end << ": EXEC still watched: " << ran->text;
  }
}

TEST_F(ProxyPinnedTest, WatchedKeysMustShareTheTransactionsSlot) {
  auto mine = Connect();
  ASSERT_TRUE(mine);
  EXPECT_EQ(Text(*mine, {"WATCH", "a", "b"}).rfind("CROSSSLOT", 0), 0u);
  ASSERT_EQ(Text(*mine, {"WATCH", "{w}a"}), "OK");
  EXPECT_EQ(Text(*mine, {"WATCH", "{other}b"}).rfind("CROSSSLOT", 0), 0u);
  ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
  EXPECT_EQ(Text(*mine, {"WATCH", "{w}a"}), "ERR WATCH inside MULTI is not allowed");
  EXPECT_EQ(Text(*mine, {"SET", "{other}b", "1"}).rfind("CROSSSLOT", 0), 0u);
  EXPECT_EQ(Text(*mine, {"EXEC"}).rfind("EXECABORT", 0), 0u);
  // EXEC ended the watch, even aborted: another slot is fine now.
  ASSERT_EQ(Text(*mine, {"WATCH", "{other}b"}), "OK");
  ASSERT_EQ(Text(*mine, {"UNWATCH"}), "OK");
}

// A client that leaves while watching gives its connection back to the pool; the proxy sends
// UNWATCH first, so the next client's transaction is not aborted by the old watch.
TEST_F(ProxyPinnedTest, APooledConnectionCarriesNoOldWatch) {
  {
    auto leaver = Connect();
    ASSERT_TRUE(leaver);
    ASSERT_EQ(Text(*leaver, {"WATCH", "{w}old"}), "OK");
    auto nil = leaver->Command({"GET", "{w}old"});
    ASSERT_TRUE(nil);
    EXPECT_EQ(nil->kind, RedisReply::Kind::kNil);
  }
  ASSERT_TRUE(WaitUntil([&] { return ProxyCounter("pinned_connections_idle") == 1; }, 5s))
      << "the watch connection never went back to the pool";
  const long long opened = ProxyCounter("pinned_connections_opened");
  auto next = Connect();
  auto other = Connect();
  ASSERT_TRUE(next && other);
  ASSERT_EQ(Text(*next, {"WATCH", "{w}new"}), "OK");
  EXPECT_EQ(ProxyCounter("pinned_connections_reused"), 1);
  EXPECT_EQ(ProxyCounter("pinned_connections_opened"), opened);
  ASSERT_EQ(Text(*other, {"SET", "{w}old", "changed"}), "OK");  // the leaver's key
  ASSERT_EQ(Text(*next, {"MULTI"}), "OK");
  ASSERT_EQ(Text(*next, {"SET", "{w}new", "1"}), "QUEUED");
  auto ran = next->Command({"EXEC"});
  ASSERT_TRUE(ran);
  EXPECT_EQ(ran->elements.size(), 1u) << "aborted by a watch left on a pooled connection";
}

TEST_F(ProxyPinnedTest, BlockingCommandsReuseThePool) {
  auto first = Connect();
  ASSERT_TRUE(first);
  auto timed_out = first->Command({"BLPOP", "{q}none", "0.1"});
  ASSERT_TRUE(timed_out);
  EXPECT_EQ(timed_out->kind, RedisReply::Kind::kNil);
  EXPECT_EQ(ProxyCounter("pinned_connections_opened"), 1);
  EXPECT_EQ(ProxyCounter("pinned_connections_idle"), 1);
  auto second = Connect();
  ASSERT_TRUE(second);
  for (int i = 0; i < 5; ++i) {
    auto again = second->Command({"BLPOP", "{q}none", "0.05"});
    ASSERT_TRUE(again);
  }
  EXPECT_EQ(ProxyCounter("pinned_connections_opened"), 1);
  EXPECT_EQ(ProxyCounter("pinned_connections_reused"), 5);
}

TEST_F(ProxyPinnedTest, XreadBlockWaitsOnItsOwnConnection) {
  const std::string stream = KeyOn(shard_port(1), "stream");
  auto reader = std::async(std::launch::async, [&] {
    auto connection = RedisConnection::Open(proxy_port(), nullptr, 15s);
    if (!connection) return RedisReply{};
    auto reply = connection->Command({"XREAD", "BLOCK", "10000", "STREAMS", stream, "$"});
    return reply ? *reply : RedisReply{};
  });
  ASSERT_TRUE(WaitUntil([&] { return BlockedOn(shard_port(1), "xread") == 1; }, 5s))
      << "XREAD BLOCK never blocked on the shard";
  auto writer = Connect();
  ASSERT_TRUE(writer);
  const auto started = Clock::now();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(Text(*writer, {"SET", KeyOn(shard_port(1), "plain" + std::to_string(i)), "v"}), "OK");
  }
  EXPECT_LT(Clock::now() - started, 2s) << "the shared connection stalled behind XREAD BLOCK";
  const std::string id = Text(*writer, {"XADD", stream, "*", "field", "value"});
  ASSERT_EQ(reader.wait_for(10s), std::future_status::ready);
  RedisReply read = reader.get();
  ASSERT_EQ(read.elements.size(), 1u) << read.text;
  ASSERT_EQ(read.elements[0].elements.size(), 2u);
  EXPECT_EQ(read.elements[0].elements[0].text, stream);
  EXPECT_EQ(read.elements[0].elements[1].elements[0].elements[0].text, id);
  // Without BLOCK it is an ordinary keyed read over the shared connection.
  auto plain = writer->Command({"XREAD", "COUNT", "1", "STREAMS", stream, "0"});
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->elements.size(), 1u);
  EXPECT_EQ(Text(*writer, {"XREAD", "STREAMS", "a", "b", "0", "0"}).rfind("CROSSSLOT", 0), 0u);
}

// A shard that stops answering fails the watch connection after --timeout like a shared one:
// the client gets an error instead of hanging, and its EXEC answers null (the watch is lost).
// A blocked BLPOP on the same shard is not timed out: it waits by design.
TEST_F(ProxyPinnedTest, AStoppedShardTimesOutTheWatchButNotABlockedPop) {
  const std::string key = KeyOn(shard_port(2), "watch:");
  const std::string list = KeyOn(shard_port(2), "list:");
  auto mine = Connect();
  ASSERT_TRUE(mine);
  ASSERT_EQ(Text(*mine, {"WATCH", key}), "OK");
  auto popper = std::async(std::launch::async, [&] {
    auto connection = RedisConnection::Open(proxy_port(), nullptr, 15s);
    auto reply = connection ? connection->Command({"BLPOP", list, "8"}) : std::nullopt;
    return reply ? *reply : RedisReply{};
  });
  ASSERT_TRUE(WaitUntil([&] { return BlockedOn(shard_port(2), "blpop") == 1; }, 5s));
  const pid_t shard = ShardPid(2);
  ASSERT_GT(shard, 0);
  ASSERT_EQ(kill(shard, SIGSTOP), 0);
  const auto started = Clock::now();
  auto stalled = mine->Command({"GET", key});
  const auto waited = Clock::now() - started;
  kill(shard, SIGCONT);
  ASSERT_TRUE(stalled);
  EXPECT_EQ(stalled->kind, RedisReply::Kind::kError);
  EXPECT_NE(stalled->text.find("no reply within 1000ms"), std::string::npos) << stalled->text;
  EXPECT_LT(waited, 5s);
  ASSERT_EQ(Text(*mine, {"MULTI"}), "OK");
  ASSERT_EQ(Text(*mine, {"SET", key, "1"}), "QUEUED");
  auto aborted = mine->Command({"EXEC"});
  ASSERT_TRUE(aborted);
  EXPECT_EQ(aborted->kind, RedisReply::Kind::kNil) << aborted->text;
  // The BLPOP survived the stop: a push still wakes it.
  ASSERT_EQ(IntegerOf(mine->Command({"RPUSH", list, "late"})), 1);
  ASSERT_EQ(popper.wait_for(10s), std::future_status::ready);
  RedisReply popped = popper.get();
  ASSERT_EQ(popped.elements.size(), 2u) << "BLPOP: " << popped.text;
  EXPECT_EQ(popped.elements[1].text, "late");
}

TEST_F(ProxyPinnedTest, RedisPyOptimisticLockingLosesNoIncrement) {
  for (int protocol : {3, 2}) {
    auto run = RunPythonScenario("watch", protocol);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
  }
}

TEST_F(ProxyPinnedTest, RedisPyXreadBlock) {
  for (int protocol : {3, 2}) {
    auto run = RunPythonScenario("streams", protocol);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
  }
}

}  // namespace
}  // namespace shardctl::integration
