// Keyspace-wide commands through shardproxy, against a real 3-shard cluster: counts summed, key
// lists joined, SCAN walking every shard once, scripts loaded everywhere, flushes everywhere.
#include <hiredis/hiredis.h>

#include <set>

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

TEST_F(ProxyFanOutTest, ConfigGetAnswersAndConfigSetIsRefused) {
  auto get = Proxy({"CONFIG", "GET", "maxmemory-policy"});
  ASSERT_EQ(get.elements.size(), 2u);
  EXPECT_EQ(get.elements[1].text, "noeviction");
  auto set = Proxy({"CONFIG", "SET", "maxmemory-policy", "allkeys-lru"});
  EXPECT_EQ(set.kind, RedisReply::Kind::kError);
  EXPECT_NE(set.text.find("'config|set' is not supported by shardproxy"), std::string::npos)
      << set.text;
}

TEST_F(ProxyFanOutTest, FlushallEmptiesEveryShard) {
  EXPECT_EQ(Proxy({"FLUSHALL"}).text, "OK");
  for (int shard = 0; shard < kShards; ++shard) EXPECT_EQ(ShardKeys(shard), 0);
  EXPECT_EQ(Proxy({"DBSIZE"}).integer, 0);
}

}  // namespace
}  // namespace shardctl::integration
