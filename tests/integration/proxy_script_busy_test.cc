// Long scripts and functions through shardproxy, as Redis' own "Timedout script" and "function
// kill" tests see them: while a keyless script runs on one shard, another client's PING answers
// -BUSY (the proxy would otherwise answer PONG itself), FUNCTION STATS names the running
// function, SCRIPT KILL and FUNCTION KILL say why they cannot stop the other kind. Real 3-shard
// cluster, real proxy, hiredis clients.
#include <thread>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

class ProxyScriptBusyTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy({"--threads", "1"});
    ASSERT_EQ(Proxy({"CONFIG", "SET", "busy-reply-threshold", "10"}), "OK");
  }

  std::string Proxy(const std::vector<std::string>& command) {
    return TextOf(QueryRedis(proxy_port(), command));
  }

  // Starts `command` (a script that loops until killed) on a connection of its own, and waits
  // until another client's PING through the proxy answers BUSY.
  std::string StartBusy(const std::vector<std::string>& command) {
    busy_ = RedisConnection::Open(proxy_port());
    EXPECT_TRUE(busy_);
    if (!busy_) return "<no connection>";
    busy_->Append(command);
    reader_ = std::thread([this] { killed_ = TextOf(busy_->GetReply()); });
    std::string ping;
    for (int attempt = 0; attempt < 50 && ping.rfind("BUSY", 0) != 0; ++attempt) {
      std::this_thread::sleep_for(50ms);
      ping = Proxy({"PING"});
    }
    return ping;
  }

  // The busy client's reply, once the script was killed.
  std::string Finish() {
    if (reader_.joinable()) reader_.join();
    return killed_;
  }

  void TearDown() override {
    // A failed assertion must not leave a script running (nor the thread waiting for it).
    if (reader_.joinable()) {
      Proxy({"SCRIPT", "KILL"});
      Proxy({"FUNCTION", "KILL"});
      reader_.join();
    }
    ProxyTest::TearDown();
  }

  std::unique_ptr<RedisConnection> busy_;
  std::thread reader_;
  std::string killed_;
};

TEST_F(ProxyScriptBusyTest, PingAnswersBusyWhileAKeylessScriptRunsAndPongAfterKill) {
  EXPECT_EQ(Proxy({"PING"}), "PONG");
  const std::string ping = StartBusy({"EVAL", "while true do end", "0"});
  EXPECT_EQ(ping.rfind("BUSY Redis is busy running a script.", 0), 0u) << ping;
  // PING with a message is asked of the shards too, and still echoes once they are free.
  EXPECT_EQ(Proxy({"PING", "hello"}).rfind("BUSY", 0), 0u);
  // The running script is not a blocked client (Redis does not count it as one).
  EXPECT_NE(Proxy({"INFO", "clients"}).find("blocked_clients:0"), std::string::npos);
  // FUNCTION KILL does not stop a script: the busy shard's refusal, not another's NOTBUSY.
  const std::string wrong_kill = Proxy({"FUNCTION", "KILL"});
  EXPECT_EQ(wrong_kill.rfind("BUSY", 0), 0u) << wrong_kill;
  EXPECT_EQ(Proxy({"SCRIPT", "KILL"}), "OK");
  EXPECT_EQ(Finish().rfind("ERR Script killed by user", 0), 0u) << killed_;
  EXPECT_EQ(Proxy({"PING"}), "PONG");
  EXPECT_EQ(Proxy({"PING", "hello"}), "hello");
}

// Redis' "Timedout script does not cause a false dead client": the busy client's own PING,
// pipelined behind its script, is answered PONG once the script is killed, not BUSY.
TEST_F(ProxyScriptBusyTest, TheScriptsOwnClientGetsPongAfterItsScript) {
  auto client = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(client);
  client->Append({"EVAL", "while 1 do redis.call('ping') end", "0"});
  client->Append({"PING"});
  std::string script, pong;
  std::thread reader([&] {
    script = TextOf(client->GetReply());
    pong = TextOf(client->GetReply());
  });
  std::string ping;
  for (int attempt = 0; attempt < 50 && ping.rfind("BUSY", 0) != 0; ++attempt) {
    std::this_thread::sleep_for(50ms);
    ping = Proxy({"PING"});
  }
  EXPECT_EQ(ping.rfind("BUSY", 0), 0u) << ping;
  EXPECT_EQ(Proxy({"SCRIPT", "KILL"}), "OK");
  reader.join();
  EXPECT_EQ(script.rfind("ERR Script killed by user", 0), 0u) << script;
  EXPECT_EQ(pong, "PONG");
}

TEST_F(ProxyScriptBusyTest, FunctionStatsNamesTheRunningFunction) {
  const std::string library =
      "#!lua name=busy\nredis.register_function('spin', function() while true do end end)";
  ASSERT_EQ(Proxy({"FUNCTION", "LOAD", "REPLACE", library}), "busy");
  auto idle = QueryRedis(proxy_port(), {"FUNCTION", "STATS"});
  ASSERT_TRUE(idle);
  ASSERT_EQ(idle->elements.size(), 4u);
  EXPECT_EQ(idle->elements[1].kind, RedisReply::Kind::kNil);
  const std::string ping = StartBusy({"FCALL", "spin", "0"});
  EXPECT_EQ(ping.rfind("BUSY", 0), 0u) << ping;
  // Whichever shard runs it: STATS is every shard's, the running one's reply wins.
  auto stats = QueryRedis(proxy_port(), {"FUNCTION", "STATS"});
  ASSERT_TRUE(stats);
  ASSERT_EQ(stats->elements.size(), 4u);
  ASSERT_EQ(stats->elements[1].elements.size(), 6u) << "running_script is not set";
  EXPECT_EQ(stats->elements[1].elements[1].text, "spin");
  const std::string wrong_kill = Proxy({"SCRIPT", "KILL"});
  EXPECT_EQ(wrong_kill.rfind("BUSY", 0), 0u) << wrong_kill;
  EXPECT_EQ(Proxy({"FUNCTION", "KILL"}), "OK");
  EXPECT_EQ(Finish().rfind("ERR Script killed by user", 0), 0u) << killed_;
  EXPECT_EQ(Proxy({"FUNCTION", "DELETE", "busy"}), "OK");
}

// Redis' own texts for script arguments it refuses: a primary words them (Redis looks the
// function up before its numkeys, so the function exists here, as in the suite's tests).
TEST_F(ProxyScriptBusyTest, ScriptArgumentErrorsUseRedisWords) {
  ASSERT_EQ(Proxy({"FUNCTION", "LOAD",
                   "#!lua name=args\nredis.register_function('f', function() return 1 end)"}),
            "args");
  EXPECT_EQ(Proxy({"EVAL", "return 1", "-12"}), "ERR Number of keys can't be negative");
  EXPECT_EQ(Proxy({"FCALL", "f", "-1", "k"}), "ERR Number of keys can't be negative");
  EXPECT_EQ(Proxy({"FCALL", "f", "bad_arg"}), "ERR Bad number of keys provided");
  EXPECT_EQ(Proxy({"FCALL", "nosuch", "-1", "k"}), "ERR Function not found");
  EXPECT_EQ(Proxy({"FUNCTION", "DELETE", "args"}), "OK");
  EXPECT_EQ(Proxy({"EVAL", "return 1", "x"}), "ERR value is not an integer or out of range");
  EXPECT_EQ(Proxy({"FUNCTION", "BAD_SUBCOMMAND"}).rfind("ERR unknown subcommand", 0), 0u);
  EXPECT_EQ(Proxy({"SCRIPT", "BAD_SUBCOMMAND"}).rfind("ERR unknown subcommand", 0), 0u);
}

}  // namespace
}  // namespace shardctl::integration
