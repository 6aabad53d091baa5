// Introspection through shardproxy as one Redis answers it (Redis' unit/introspection,
// introspection-2, info-command and pause tests): INFO from every primary's own figures,
// COMMAND from the engine, CLIENT about the client itself, CLIENT REPLY, CLIENT PAUSE on every
// primary. A real 3-shard cluster behind the real proxy.
#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using namespace std::chrono_literals;

constexpr int kShards = 3;

class ProxyIntrospectionTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy();
  }
};

// "cmdstat_set:calls=3,..." -> 3; -1 when the line is missing.
long long Calls(const std::string& info, const std::string& command) {
  const std::string line = "cmdstat_" + command + ":calls=";
  const size_t at = info.find(line);
  return at == std::string::npos ? -1 : std::stoll(info.substr(at + line.size()));
}

TEST_F(ProxyIntrospectionTest, InfoCommandstatsAndErrorstatsAddUpEveryShard) {
  ASSERT_EQ(Keys(), 0);
  ASSERT_EQ(TextOf(Proxy({"CONFIG", "RESETSTAT"})), "OK");
  const std::vector<std::string> keys = KeyPerShard(kShards, "k");
  for (const std::string& key : keys) ASSERT_EQ(TextOf(Proxy({"SET", key, "v"})), "OK");
  EXPECT_EQ(Keys(), kShards);
  auto wrong = Proxy({"LPUSH", keys[1], "x"});  // WRONGTYPE, counted by that shard
  ASSERT_TRUE(wrong && wrong->kind == RedisReply::Kind::kError) << TextOf(wrong);
  const std::string stats = TextOf(Proxy({"INFO", "commandstats"}));
  EXPECT_EQ(Calls(stats, "set"), kShards) << stats;
  EXPECT_NE(stats.find("cmdstat_lpush:calls=1,usec="), std::string::npos) << stats;
  EXPECT_NE(stats.find(",rejected_calls=0,failed_calls=1"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("used_memory"), std::string::npos) << "only the asked section";
  const std::string errors = TextOf(Proxy({"INFO", "errorstats"}));
  EXPECT_NE(errors.find("errorstat_WRONGTYPE:count=1"), std::string::npos) << errors;
  // Several sections at once, each once; the proxy's own figures overlay the shards'.
  const std::string several = TextOf(Proxy({"INFO", "cpu", "clients", "keyspace"}));
  EXPECT_NE(several.find("used_cpu_user:"), std::string::npos) << several;
  // The proxy's clients: this one, and the previous call's if the proxy has not seen it close
  // yet (the shards' own count, several connections each, would be larger).
  const size_t clients = several.find("connected_clients:");
  ASSERT_NE(clients, std::string::npos) << several;
  EXPECT_LE(std::stoll(several.substr(clients + 18)), 2) << several;
  EXPECT_NE(several.find("db0:keys=" + std::to_string(kShards) + ","), std::string::npos);
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[0], keys[1], keys[2]})), kShards);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyIntrospectionTest, CommandDescribesTheEngineBehindTheProxy) {
  auto xread = Proxy({"COMMAND", "INFO", "xread", "sort"});
  ASSERT_TRUE(xread && xread->elements.size() == 2) << TextOf(xread);
  for (const RedisReply& entry : xread->elements) {
    ASSERT_GE(entry.elements.size(), 3u);
    bool movable = false;
    for (const RedisReply& flag : entry.elements[2].elements) movable |= flag.text == "movablekeys";
    EXPECT_TRUE(movable) << entry.elements[0].text << " has movable keys";
  }
  auto flags = Proxy({"COMMAND", "GETKEYSANDFLAGS", "LMOVE", "a", "b", "LEFT", "RIGHT"});
  ASSERT_TRUE(flags && flags->elements.size() == 2) << TextOf(flags);
  EXPECT_EQ(flags->elements[0].elements[0].text, "a");
  auto list = Proxy({"COMMAND", "LIST", "FILTERBY", "PATTERN", "xread*"});
  ASSERT_TRUE(list);
  EXPECT_EQ(list->elements.size(), 2u);  // xread, xreadgroup
  EXPECT_GT(IntegerOf(Proxy({"COMMAND", "COUNT"})), 200);
}

TEST_F(ProxyIntrospectionTest, ClientReplyOffSkipAndOnSilenceTheClientsReplies) {
  RawConnection raw(proxy_port());
  ASSERT_TRUE(raw.connected());
  const std::string key = KeyOn(shard_port(2), "reply");
  ASSERT_TRUE(raw.Send("CLIENT REPLY OFF\r\nSET " + key + " 1\r\nPING a\r\nCLIENT REPLY ON\r\n" +
                       "CLIENT REPLY SKIP\r\nGET " + key + "\r\nPING b\r\n"));
  // Only ON's +OK and the last PING: the silenced commands ran all the same (the SET).
  const std::string expected = "+OK\r\n$1\r\nb\r\n";
  EXPECT_EQ(raw.ReadUntil(expected.size() + 1, 2s), expected);
  EXPECT_EQ(TextOf(Proxy({"GET", key})), "1");
  EXPECT_EQ(IntegerOf(Proxy({"DEL", key})), 1);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyIntrospectionTest, ClientPauseWritePausesEveryPrimaryUntilUnpause) {
  ASSERT_EQ(Keys(), 0);
  ASSERT_EQ(TextOf(Proxy({"CLIENT", "PAUSE", "20000", "WRITE"})), "OK");
  // Straight to each shard: a write waits there (no reply in time), a read does not.
  std::vector<std::string> paused;
  for (int shard = 0; shard < kShards; ++shard) {
    auto direct = RedisConnection::Open(shard_port(shard), nullptr, 300ms);
    ASSERT_TRUE(direct);
    EXPECT_EQ(TextOf(direct->Command({"PING"})), "PONG");
    paused.push_back(KeyOn(shard_port(shard), "paused"));
    auto write = direct->Command({"SET", paused.back(), "1"});
    EXPECT_FALSE(write) << "shard " << shard << " was not paused: " << TextOf(write);
  }
  // A write through the proxy waits too, on a connection UNPAUSE must not queue behind.
  const std::vector<std::string> keys = KeyPerShard(kShards, "k");
  RawConnection writer(proxy_port());
  ASSERT_TRUE(writer.connected());
  ASSERT_TRUE(writer.Send("SET " + keys[1] + " 1\r\n"));
  EXPECT_EQ(writer.ReadUntil(5, 300ms), "");
  ASSERT_EQ(TextOf(Proxy({"CLIENT", "UNPAUSE"})), "OK");
  EXPECT_EQ(writer.ReadUntil(5, 5s), "+OK\r\n");
  for (const std::string& key : keys) EXPECT_EQ(TextOf(Proxy({"SET", key, "1"})), "OK");
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[0], keys[1], keys[2]})), kShards);
  // A paused SET may still have run once its shard resumed: whatever it left goes.
  Proxy({"DEL", paused[0], paused[1], paused[2]});
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyIntrospectionTest, ClientListInfoAndKillSpeakAboutTheClientItself) {
  auto connection = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(connection);
  const long long id = IntegerOf(connection->Command({"CLIENT", "ID"}));
  const std::string list =
      TextOf(connection->Command({"CLIENT", "LIST", "ID", std::to_string(id)}));
  EXPECT_EQ(list.rfind("id=" + std::to_string(id) + " addr=127.0.0.1:", 0), 0u) << list;
  EXPECT_NE(list.find(" laddr=127.0.0.1:" + std::to_string(proxy_port()) + " "), std::string::npos)
      << list;
  EXPECT_NE(list.find(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf="), std::string::npos);
  EXPECT_NE(list.find(" cmd=client|list user=default redir=-1 resp=2"), std::string::npos);
  EXPECT_EQ(TextOf(connection->Command({"CLIENT", "KILL", "ID", "-1"})),
            "ERR client-id should be greater than 0");
  EXPECT_EQ(TextOf(connection->Command({"CLIENT", "KILL", "USER", "nobody"})),
            "ERR No such user 'nobody'");
  EXPECT_EQ(IntegerOf(connection->Command({"CLIENT", "KILL", "ID", std::to_string(id)})), 0);
  EXPECT_EQ(
      IntegerOf(connection->Command({"CLIENT", "KILL", "ID", std::to_string(id), "SKIPME", "no"})),
      1);
  EXPECT_FALSE(connection->Command({"PING"})) << "the killed client's connection is closed";
}

}  // namespace
}  // namespace shardctl::integration
