// Keyspace-wide commands through shardproxy, against a real 3-shard cluster: counts summed, key
// lists joined, SCAN walking every shard once, scripts loaded everywhere, flushes everywhere,
// server-wide settings (CONFIG SET, RESETSTAT), slow logs and function libraries on every shard.
#include <hiredis/hiredis.h>

#include <optional>
#include <set>
#include <thread>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

constexpr int kShards = 3;
constexpr int kKeys = 300;

class ProxyFanOutTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    auto up = Up(kShards, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-threads", "2"});
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    std::vector<std::string> mset = {"MSET"};
    for (int i = 0; i < kKeys; ++i) {
      mset.push_back("key:" + std::to_string(i));
      mset.push_back(std::to_string(i));
    }
    auto set = Proxy(mset);
    ASSERT_EQ(set.text, "OK");
  }

  int ProxyPort() const { return base_port() + 45; }

  RedisReply Proxy(const std::vector<std::string>& command) {
    std::string error;
    auto reply = QueryRedis(ProxyPort(), command, &error);
    EXPECT_TRUE(reply) << error;
    return reply ? *reply : RedisReply{};
  }

  long long ShardKeys(int shard) {
    auto reply = QueryRedis(base_port() + shard, {"DBSIZE"});
    EXPECT_TRUE(reply);
    return reply ? reply->integer : -1;
  }
};

TEST_F(ProxyFanOutTest, CountsAndKeyListsCoverEveryShard) {
  long long total = 0;
  for (int shard = 0; shard < kShards; ++shard) {
    EXPECT_GT(ShardKeys(shard), 0) << "shard " << shard << " got none of the keys";
    total += ShardKeys(shard);
  }
  EXPECT_EQ(total, kKeys);
  EXPECT_EQ(Proxy({"DBSIZE"}).integer, kKeys);
  auto info = Proxy({"INFO"});
  EXPECT_NE(info.text.find("# Proxy"), std::string::npos) << info.text;
  EXPECT_NE(info.text.find("db0:keys=" + std::to_string(kKeys) + ","), std::string::npos)
      << info.text;
  EXPECT_NE(info.text.find("shard2:addr=127.0.0.1:" + std::to_string(base_port() + 2)),
            std::string::npos)
      << info.text;
  auto keys = Proxy({"KEYS", "key:*"});
  EXPECT_EQ(keys.elements.size(), static_cast<size_t>(kKeys));
  auto random = Proxy({"RANDOMKEY"});
  EXPECT_EQ(random.kind, RedisReply::Kind::kString);
  EXPECT_EQ(random.text.rfind("key:", 0), 0u) << random.text;
}

TEST_F(ProxyFanOutTest, ScanReturnsEveryKeyExactlyOnce) {
  redisContext* context = redisConnect("127.0.0.1", ProxyPort());
  ASSERT_TRUE(context && !context->err);
  std::multiset<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    auto* reply = static_cast<redisReply*>(
        redisCommand(context, "SCAN %s MATCH key:* COUNT 17", cursor.c_str()));
    ASSERT_NE(reply, nullptr);
    RedisReply converted = ConvertRedisReply(reply);
    freeReplyObject(reply);
    ASSERT_EQ(converted.elements.size(), 2u) << converted.text;
    cursor = converted.elements[0].text;
    for (const auto& key : converted.elements[1].elements) seen.insert(key.text);
  } while (cursor != "0" && ++calls < 1000);
  redisFree(context);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size())
      << "a key came back twice";
  EXPECT_GE(calls, kShards - 1) << "the iteration must visit every shard";
  EXPECT_EQ(Proxy({"SCAN", "not-a-cursor"}).text, "ERR invalid cursor");
}

TEST_F(ProxyFanOutTest, ScriptsAreLoadedOnEveryShardAndRunWhereTheirKeysLive) {
  auto sha = Proxy({"SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"});
  ASSERT_EQ(sha.text.size(), 40u) << sha.text;
  for (int shard = 0; shard < kShards; ++shard) {
    auto exists = QueryRedis(base_port() + shard, {"SCRIPT", "EXISTS", sha.text});
    ASSERT_TRUE(exists);
    ASSERT_EQ(exists->elements.size(), 1u);
    EXPECT_EQ(exists->elements[0].integer, 1) << "shard " << shard;
  }
  for (int i : {0, 1, 2, 150, 299}) {
    auto value = Proxy({"EVALSHA", sha.text, "1", "key:" + std::to_string(i)});
    EXPECT_EQ(value.text, std::to_string(i));
  }
  auto exists = Proxy({"SCRIPT", "EXISTS", sha.text, std::string(40, '0')});
  ASSERT_EQ(exists.elements.size(), 2u);
  EXPECT_EQ(exists.elements[0].integer, 1);
  EXPECT_EQ(exists.elements[1].integer, 0);
}

TEST_F(ProxyFanOutTest, AShardThatLostItsScriptsGetsThemAgainOnNoscript) {
  auto sha = Proxy({"SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"});
  ASSERT_EQ(sha.text.size(), 40u) << sha.text;
  // As after a restart without persistence: every shard forgets its scripts.
  for (int shard = 0; shard < kShards; ++shard) {
    auto flushed = QueryRedis(base_port() + shard, {"SCRIPT", "FLUSH"});
    ASSERT_TRUE(flushed);
  }
  for (int i : {3, 4, 5, 250}) {
    auto value = Proxy({"EVALSHA", sha.text, "1", "key:" + std::to_string(i)});
    EXPECT_EQ(value.text, std::to_string(i));
  }
  auto info = Proxy({"INFO", "proxy"});
  EXPECT_NE(info.text.find("script_reloads:"), std::string::npos);
  EXPECT_EQ(info.text.find("script_reloads:0\r\n"), std::string::npos) << info.text;
  // A script the proxy never saw: Redis' own NOSCRIPT reaches the client.
  auto unknown = Proxy({"EVALSHA", std::string(40, 'a'), "1", "key:1"});
  EXPECT_EQ(unknown.kind, RedisReply::Kind::kError);
  EXPECT_EQ(unknown.text.rfind("NOSCRIPT", 0), 0u) << unknown.text;
}

TEST_F(ProxyFanOutTest, TransactionsRunAtomicallyOnTheirSlotsPrimary) {
  auto connection = RedisConnection::Open(ProxyPort());
  ASSERT_TRUE(connection);
  auto run = [&](const std::vector<std::string>& command) {
    return connection->Command(command).value_or(RedisReply{});
  };
  EXPECT_EQ(run({"MULTI"}).text, "OK");
  EXPECT_EQ(run({"SET", "{tx}a", "1"}).text, "QUEUED");
  EXPECT_EQ(run({"INCRBY", "{tx}a", "41"}).text, "QUEUED");
  EXPECT_EQ(run({"MGET", "{tx}a", "{tx}missing"}).text, "QUEUED");
  RedisReply exec = run({"EXEC"});
  ASSERT_EQ(exec.elements.size(), 3u) << exec.text;
  EXPECT_EQ(exec.elements[0].text, "OK");
  EXPECT_EQ(exec.elements[1].integer, 42);
  ASSERT_EQ(exec.elements[2].elements.size(), 2u);
  EXPECT_EQ(exec.elements[2].elements[0].text, "42");
  EXPECT_EQ(exec.elements[2].elements[1].kind, RedisReply::Kind::kNil);

  // Keys of two slots: the command is refused and EXEC aborts, as in Redis Cluster.
  EXPECT_EQ(run({"MULTI"}).text, "OK");
  EXPECT_EQ(run({"SET", "{tx}a", "2"}).text, "QUEUED");
  EXPECT_EQ(run({"SET", "{other}b", "2"}).text.rfind("CROSSSLOT", 0), 0u);
  EXPECT_EQ(run({"EXEC"}).text.rfind("EXECABORT", 0), 0u);
  EXPECT_EQ(run({"GET", "{tx}a"}).text, "42") << "an aborted transaction changed data";

  EXPECT_EQ(run({"MULTI"}).text, "OK");
  EXPECT_EQ(run({"INCR", "{tx}a"}).text, "QUEUED");
  EXPECT_EQ(run({"DISCARD"}).text, "OK");
  EXPECT_EQ(run({"GET", "{tx}a"}).text, "42");
  EXPECT_EQ(run({"EXEC"}).text, "ERR EXEC without MULTI");
  EXPECT_EQ(run({"MULTI"}).text, "OK");
  EXPECT_EQ(run({"EXEC"}).elements.size(), 0u);
}

TEST_F(ProxyFanOutTest, ConfigSetAppliesToEveryShardOrFailsAsAWhole) {
  auto get = Proxy({"CONFIG", "GET", "maxmemory-policy"});
  ASSERT_EQ(get.elements.size(), 2u);
  EXPECT_EQ(get.elements[1].text, "noeviction");
  EXPECT_EQ(Proxy({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"}).text, "OK");
  for (int shard = 0; shard < kShards; ++shard) {
    auto value = QueryRedis(base_port() + shard, {"CONFIG", "GET", "maxmemory-policy"});
    ASSERT_TRUE(value && value->elements.size() == 2) << "shard " << shard;
    EXPECT_EQ(value->elements[1].text, "allkeys-lru") << "shard " << shard;
  }
  // Refused by the shards: the client sees Redis' own error, once.
  auto bad = Proxy({"CONFIG", "SET", "maxmemory-policy", "no-such-policy"});
  EXPECT_EQ(bad.kind, RedisReply::Kind::kError);
  EXPECT_EQ(bad.text.rfind("ERR CONFIG SET failed", 0), 0u) << bad.text;
  EXPECT_EQ(Proxy({"CONFIG", "RESETSTAT"}).text, "OK");
  for (int shard = 0; shard < kShards; ++shard) {
    auto stats = QueryRedis(base_port() + shard, {"INFO", "stats"});
    ASSERT_TRUE(stats);
    // RESETSTAT zeroes the counters; the INFO call itself is counted after it.
    EXPECT_NE(stats->text.find("total_commands_processed:"), std::string::npos);
    EXPECT_NE(stats->text.find("keyspace_hits:0\r\n"), std::string::npos) << stats->text;
  }
}

TEST_F(ProxyFanOutTest, SlowlogCoversEveryShardNewestFirst) {
  EXPECT_EQ(Proxy({"SLOWLOG", "RESET"}).text, "OK");
  EXPECT_EQ(Proxy({"CONFIG", "SET", "slowlog-log-slower-than", "0"}).text, "OK");
  for (int i = 0; i < 30; ++i) Proxy({"GET", "key:" + std::to_string(i)});
  EXPECT_EQ(Proxy({"CONFIG", "SET", "slowlog-log-slower-than", "10000"}).text, "OK");
  const long long length = Proxy({"SLOWLOG", "LEN"}).integer;
  long long on_shards = 0;
  for (int shard = 0; shard < kShards; ++shard) {
    auto len = QueryRedis(base_port() + shard, {"SLOWLOG", "LEN"});
    ASSERT_TRUE(len);
    EXPECT_GT(len->integer, 0) << "shard " << shard << " logged nothing";
    on_shards += len->integer;
  }
  EXPECT_EQ(length, on_shards);
  EXPECT_EQ(Proxy({"SLOWLOG", "GET"}).elements.size(), 10u);  // Redis' default count
  auto all = Proxy({"SLOWLOG", "GET", "-1"});
  ASSERT_EQ(static_cast<long long>(all.elements.size()), on_shards);
  for (size_t i = 1; i < all.elements.size(); ++i) {
    ASSERT_GE(all.elements[i].elements.size(), 4u);
    EXPECT_GE(all.elements[i - 1].elements[1].integer, all.elements[i].elements[1].integer)
        << "entries are not newest first";
  }
  EXPECT_EQ(Proxy({"SLOWLOG", "RESET"}).text, "OK");
  EXPECT_EQ(Proxy({"SLOWLOG", "LEN"}).integer, 0);
}

TEST_F(ProxyFanOutTest, FunctionDumpAndRestoreCoverEveryShard) {
  const std::string library =
      "#!lua name=fanlib\n"
      "redis.register_function('fanget', function(keys) return redis.call('GET', keys[1]) end)";
  EXPECT_EQ(Proxy({"FUNCTION", "LOAD", library}).text, "fanlib");
  auto dump = Proxy({"FUNCTION", "DUMP"});
  ASSERT_EQ(dump.kind, RedisReply::Kind::kString);
  EXPECT_EQ(Proxy({"FUNCTION", "FLUSH"}).text, "OK");
  EXPECT_EQ(Proxy({"FCALL", "fanget", "1", "key:1"}).kind, RedisReply::Kind::kError);
  EXPECT_EQ(Proxy({"FUNCTION", "RESTORE", dump.text}).text, "OK");
  // Every shard has the library again: a key on each answers.
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ(Proxy({"FCALL", "fanget", "1", "key:" + std::to_string(i)}).text, std::to_string(i));
  }
  // Restoring what is there is refused by every shard: one error for the client.
  auto again = Proxy({"FUNCTION", "RESTORE", dump.text});
  EXPECT_EQ(again.kind, RedisReply::Kind::kError);
  EXPECT_NE(again.text.find("already exists"), std::string::npos) << again.text;
  auto stats = Proxy({"FUNCTION", "STATS"});
  EXPECT_EQ(stats.kind, RedisReply::Kind::kArray);
  EXPECT_EQ(Proxy({"FUNCTION", "KILL"}).text.rfind("NOTBUSY", 0), 0u);
  EXPECT_EQ(Proxy({"SCRIPT", "KILL"}).text.rfind("NOTBUSY", 0), 0u);
  EXPECT_EQ(Proxy({"TIME"}).elements.size(), 2u);
}

TEST_F(ProxyFanOutTest, FlushallEmptiesEveryShard) {
  EXPECT_EQ(Proxy({"FLUSHALL"}).text, "OK");
  for (int shard = 0; shard < kShards; ++shard) EXPECT_EQ(ShardKeys(shard), 0);
  EXPECT_EQ(Proxy({"DBSIZE"}).integer, 0);
}

// A keyless script that runs until killed (Redis' "Timedout scripts" tests): it runs over its
// client's own connection, so SCRIPT KILL from another client reaches the busy shard at once.
TEST_F(ProxyFanOutTest, ALongKeylessScriptIsKilledFromAnotherClient) {
  EXPECT_EQ(Proxy({"CONFIG", "SET", "lua-time-limit", "10"}).text, "OK");
  auto busy = RedisConnection::Open(ProxyPort());
  ASSERT_TRUE(busy);
  busy->Append({"EVAL", "while true do end", "0"});
  // GetReply() writes the EVAL and waits (at most the connection's 5 s timeout) for its reply.
  std::optional<RedisReply> killed;
  std::thread reader([&] { killed = busy->GetReply(); });
  std::string kill;
  for (int attempt = 0; attempt < 40 && kill != "OK"; ++attempt) {
    std::this_thread::sleep_for(100ms);
    kill = Proxy({"SCRIPT", "KILL"}).text;
  }
  reader.join();
  EXPECT_EQ(kill, "OK");
  ASSERT_TRUE(killed);
  EXPECT_EQ(killed->text.rfind("ERR Script killed by user", 0), 0u) << killed->text;
  EXPECT_EQ(Proxy({"SCRIPT", "KILL"}).text.rfind("NOTBUSY", 0), 0u);
  EXPECT_EQ(Proxy({"CONFIG", "SET", "lua-time-limit", "5000"}).text, "OK");
}

TEST_F(ProxyFanOutTest, InfoCountsBlockedClients) {
  auto blocked = RedisConnection::Open(ProxyPort());
  ASSERT_TRUE(blocked);
  auto count = [&] {
    const std::string info = Proxy({"INFO", "clients"}).text;
    const size_t at = info.find("blocked_clients:");
    return at == std::string::npos ? -1 : std::stoi(info.substr(at + 16));
  };
  EXPECT_EQ(count(), 0);
  blocked->Append({"BLPOP", "blocked:list", "0"});
  std::optional<RedisReply> popped;
  std::thread reader([&] { popped = blocked->GetReply(); });
  int seen = 0;
  for (int wait = 0; wait < 50 && seen != 1; ++wait) {
    std::this_thread::sleep_for(50ms);
    seen = count();
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(Proxy({"RPUSH", "blocked:list", "x"}).integer, 1);
  reader.join();
  ASSERT_TRUE(popped);
  ASSERT_EQ(popped->elements.size(), 2u);
  EXPECT_EQ(popped->elements[1].text, "x");
  for (int wait = 0; wait < 50 && seen != 0; ++wait) {
    std::this_thread::sleep_for(50ms);
    seen = count();
  }
  EXPECT_EQ(seen, 0);
  EXPECT_NE(Proxy({"INFO", "server"}).text.find("redis_git_sha1:"), std::string::npos);
}

}  // namespace
}  // namespace shardctl::integration
