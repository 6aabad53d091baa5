// Compatibility with the clients people point at a plain Redis: redis-py's `Redis`, redis-cli
// and redis-benchmark (no cluster mode), over every command family shardproxy serves beyond
// single keys — transactions, WATCH, blocking commands, keyspace-wide commands and SCAN,
// scripts and functions, WAIT, publishing. Real 3-shard cluster, real proxy. (Subscribers:
// proxy_pubsub_test.cc, with hiredis, redis-cli and redis-py.)
#include <fstream>
#include <set>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

class ProxyCompatTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy();
  }

  // redis-cli reading `commands` (one per line) from stdin on one connection, as scripts use it.
  CommandResult CliBatch(const std::string& commands) {
    const auto file = scratch_dir() / "commands.txt";
    std::ofstream(file) << commands;
    return RunCommand(
        {"bash", "-c", "exec redis-cli -p " + std::to_string(proxy_port()) + " < " + file.string()},
        30s);
  }

  CommandResult Benchmark(const std::vector<std::string>& args) {
    // redis-benchmark exits non-zero at the first error reply.
    std::vector<std::string> argv = {"redis-benchmark", "-p", std::to_string(proxy_port()), "-q"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, 60s);
  }
};

void ExpectNoErrors(const CommandResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  for (const std::string& output : {result.out, result.err}) {
    EXPECT_EQ(output.find("ERR"), std::string::npos) << result.Describe();
    EXPECT_EQ(output.find("rror"), std::string::npos) << result.Describe();
  }
}

TEST_F(ProxyCompatTest, RedisPyEveryFamily) {
  for (int protocol : {3, 2}) {
    auto run = RunPythonScenario("families", protocol);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
  }
}

TEST_F(ProxyCompatTest, RedisCliEveryFamily) {
  auto batch = CliBatch(
      "FLUSHALL\n"
      "MSET cli:a 1 cli:b 2 cli:c 3 cli:d 4\n"
      "DBSIZE\n"
      "MULTI\n"
      "INCR {t}n\n"
      "INCR {t}n\n"
      "EXEC\n"
      "WATCH {t}n\n"
      "MULTI\n"
      "INCR {t}n\n"
      "EXEC\n"
      "RPUSH {q}l x\n"
      "BLPOP {q}l 1\n"
      "BLPOP {q}l 0.1\n"
      "XADD {s}st 1-1 f v\n"
      "XREAD BLOCK 100 STREAMS {s}st 0\n"
      "SCRIPT LOAD \"return 'hi'\"\n"
      "EVALSHA 2f31ba2bb6d6a0f42cc159d2e2dad55440778de3 0\n"
      "EVAL \"return redis.call('GET', KEYS[1])\" 1 cli:c\n"
      "WAIT 0 0\n"
      "FLUSHDB\n"
      "DBSIZE\n");
  EXPECT_EQ(batch.exit_code, 0) << batch.Describe();
  // redis-cli without a terminal prints raw replies, one element per line, nil as an empty line.
  EXPECT_EQ(batch.out,
            "OK\n"                  // FLUSHALL
            "OK\n"                  // MSET over several shards
            "4\n"                   // DBSIZE summed
            "OK\nQUEUED\nQUEUED\n"  // MULTI INCR INCR
            "1\n2\n"                // EXEC
            "OK\nOK\nQUEUED\n3\n"   // WATCH MULTI INCR EXEC
            "1\n"                   // RPUSH
            "{q}l\nx\n"             // BLPOP
            "\n"                    // BLPOP timed out: nil
            "1-1\n"                 // XADD
            "{s}st\n1-1\nf\nv\n"    // XREAD BLOCK
            "2f31ba2bb6d6a0f42cc159d2e2dad55440778de3\n"
            "hi\n"  // EVALSHA on any shard: loaded everywhere
            "3\n"   // EVAL routed by its key
            "0\n"   // WAIT: no replicas
            "OK\n"  // FLUSHDB
            "0\n")
      << batch.Describe();
}

TEST_F(ProxyCompatTest, RedisCliScanAndEvalModes) {
  for (int i = 0; i < 120; ++i) {
    ASSERT_EQ(TextOf(QueryRedis(proxy_port(), {"SET", "scan:" + std::to_string(i), "v"})), "OK");
  }
  auto scan = RunCommand(
      {"redis-cli", "-p", std::to_string(proxy_port()), "--scan", "--pattern", "scan:*"}, 30s);
  ASSERT_EQ(scan.exit_code, 0) << scan.Describe();
  const auto lines = SplitLines(scan.out);
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()).size(), 120u) << scan.Describe();
  EXPECT_EQ(lines.size(), 120u) << "--scan returned a key twice: " << scan.Describe();

  const auto script = scratch_dir() / "incr.lua";
  std::ofstream(script) << "return redis.call('INCRBY', KEYS[1], ARGV[1])\n";
  auto eval = RunCommand({"redis-cli", "-p", std::to_string(proxy_port()), "--eval",
                          script.string(), "scan:counter", ",", "7"},
                         30s);
  EXPECT_EQ(eval.out, "7\n") << eval.Describe();
}

TEST_F(ProxyCompatTest, RedisBenchmarkEveryFamily) {
  ExpectNoErrors(Benchmark({"-n", "3000", "-c", "10", "-r", "10000", "-t",
                            "set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,"
                            "lrange_100,mset"}));
  // Scripts, routed by their key: the counter proves every call ran.
  ExpectNoErrors(Benchmark({"-n", "2000", "-c", "10", "EVAL", "return redis.call('INCR', KEYS[1])",
                            "1", "bench:{k}counter"}));
  EXPECT_EQ(TextOf(QueryRedis(proxy_port(), {"GET", "bench:{k}counter"})), "2000");
  // A stream written by a script, a keyspace-wide command, a blocking pop with a short timeout,
  // stream reads.
  ExpectNoErrors(
      Benchmark({"-n", "1000", "-c", "10", "EVAL",
                 "redis.call('XADD', KEYS[1], '*', 'f', 'v') return 1", "1", "bench:{s}stream"}));
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"XLEN", "bench:{s}stream"})), 1000);
  ExpectNoErrors(Benchmark({"-n", "1000", "-c", "10", "DBSIZE"}));
  ExpectNoErrors(Benchmark({"-n", "200", "-c", "5", "BLPOP", "bench:{q}empty", "0.01"}));
  ExpectNoErrors(Benchmark(
      {"-n", "1000", "-c", "10", "XREAD", "COUNT", "1", "STREAMS", "bench:{s}stream", "0"}));
  ExpectNoErrors(Benchmark({"-n", "1000", "-c", "10", "PUBLISH", "bench:channel", "message"}));
  ExpectNoErrors(Benchmark({"-n", "1000", "-c", "10", "SPUBLISH", "bench:shard", "message"}));
  EXPECT_LE(ProxyCounter("pinned_connections_opened"), 5 + 1)
      << "blocking commands opened a connection per request instead of reusing the pool";
}

// Commands Redis' own test suite uses that the proxy routes by their key (found after a
// subcommand, after numkeys, or besides a destination): answered by the key's shard, as on one
// Redis. Keys on every shard (KeyOn), so no command works by luck of landing on shard 0.
TEST_F(ProxyCompatTest, KeyedCommandsBeyondTheFirstArgument) {
  auto run = [&](const std::vector<std::string>& argv) { return QueryRedis(proxy_port(), argv); };
  for (int shard = 0; shard < 3; ++shard) {
    const std::string key = KeyOn(shard_port(shard), "compat:");
    const std::string tag = "{" + key + "}";
    ASSERT_EQ(IntegerOf(run({"RPUSH", tag + "l", "3", "1", "2"})), 3);
    // The shard's own answer (quicklist on 7.0, listpack from 7.2).
    const std::string encoding =
        TextOf(QueryRedis(shard_port(shard), {"OBJECT", "ENCODING", tag + "l"}));
    EXPECT_EQ(TextOf(run({"OBJECT", "ENCODING", tag + "l"})), encoding) << key;
    EXPECT_NE(encoding.find("list"), std::string::npos) << encoding;
    EXPECT_EQ(IntegerOf(run({"OBJECT", "REFCOUNT", tag + "l"})), 1);
    auto sorted = run({"SORT", tag + "l"});
    ASSERT_TRUE(sorted && sorted->elements.size() == 3);
    EXPECT_EQ(sorted->elements[0].text, "1");
    EXPECT_EQ(IntegerOf(run({"SORT", tag + "l", "STORE", tag + "dst"})), 3);
    auto popped = run({"LMPOP", "2", tag + "none", tag + "l", "LEFT"});
    ASSERT_TRUE(popped && popped->elements.size() == 2);
    EXPECT_EQ(popped->elements[0].text, tag + "l");
    EXPECT_EQ(TextOf(run({"MSET", tag + "a", "ohmytext", tag + "b", "mynewtext"})), "OK");
    EXPECT_EQ(TextOf(run({"LCS", tag + "a", tag + "b"})), "mytext");
    run({"SADD", tag + "s1", "a", "b", "c"});
    run({"SADD", tag + "s2", "b", "c", "d"});
    EXPECT_EQ(IntegerOf(run({"SINTERCARD", "2", tag + "s1", tag + "s2"})), 2);
    run({"ZADD", tag + "z1", "1", "a", "2", "b"});
    EXPECT_EQ(IntegerOf(run({"ZUNIONSTORE", tag + "z2", "1", tag + "z1"})), 2);
    EXPECT_EQ(IntegerOf(run({"ZINTERCARD", "2", tag + "z1", tag + "z2"})), 2);
    EXPECT_EQ(TextOf(run({"XGROUP", "CREATE", tag + "st", "g", "$", "MKSTREAM"})), "OK");
    auto groups = run({"XINFO", "GROUPS", tag + "st"});
    ASSERT_TRUE(groups);
    EXPECT_EQ(groups->elements.size(), 1u);
    run({"GEOADD", tag + "geo", "13.361389", "38.115556", "Palermo"});
    auto near = run({"GEORADIUS", tag + "geo", "15", "37", "200", "km"});
    ASSERT_TRUE(near && near->elements.size() == 1);
    EXPECT_EQ(near->elements[0].text, "Palermo");
    EXPECT_GT(IntegerOf(run({"MEMORY", "USAGE", tag + "a"})), 0);
  }
  EXPECT_EQ(TextOf(run({"ZUNIONSTORE", "{x}d", "1", "{y}s"})),
            "CROSSSLOT Keys in request don't hash to the same slot");
  auto help = run({"OBJECT", "HELP"});
  ASSERT_TRUE(help);
  EXPECT_EQ(help->kind, RedisReply::Kind::kArray);
  auto getkeys = run({"COMMAND", "GETKEYS", "ZUNIONSTORE", "d", "2", "a", "b"});
  ASSERT_TRUE(getkeys && getkeys->elements.size() == 3);
  EXPECT_EQ(getkeys->elements[2].text, "b");
  EXPECT_EQ(TextOf(run({"COMMAND", "GETKEYS", "PING"})), "ERR The command has no key arguments");
  auto time = run({"TIME"});
  ASSERT_TRUE(time && time->elements.size() == 2);
}

// A numkeys Redis refuses leaves the request without a slot: a primary answers it, so the client
// reads that engine's own words (Redis' LMPOP, SINTERCARD, ZUNION and EVAL each word it
// differently; the suite's "with illegal argument" tests match on them).
TEST_F(ProxyCompatTest, RefusedNumkeysIsAnsweredInTheShardsOwnWords) {
  const std::vector<std::vector<std::string>> refused = {{"LMPOP", "a", "l{t}", "LEFT"},
                                                         {"LMPOP", "-1", "l{t}", "RIGHT"},
                                                         {"LMPOP", "1"},
                                                         {"ZMPOP", "x", "z{t}", "MIN"},
                                                         {"SINTERCARD", "a", "s{t}"},
                                                         {"SINTERCARD", "2", "s{t}"},
                                                         {"ZUNION", "-2", "z{t}"},
                                                         {"ZINTERCARD", "3", "z{t}", "y{t}"},
                                                         {"EVAL", "return 1", "-1"},
                                                         {"EVAL", "return 1", "2", "k{t}"},
                                                         {"BLMPOP", "0", "a", "l{t}", "LEFT"}};
  for (const auto& command : refused) {
    const std::string proxied = TextOf(QueryRedis(proxy_port(), command));
    const std::string direct = TextOf(QueryRedis(shard_port(0), command));
    EXPECT_TRUE(direct.starts_with("ERR")) << command[0] << ": " << direct;
    EXPECT_EQ(proxied, direct) << command[0] << " " << command[1];
  }
  // Still refused where the numkeys decides what COMMAND GETKEYS answers.
  EXPECT_EQ(TextOf(QueryRedis(proxy_port(), {"COMMAND", "GETKEYS", "LMPOP", "a", "l", "LEFT"})),
            "ERR Invalid arguments specified for command");
  // A good numkeys still routes by the keys: the command runs where they live.
  const std::string key = KeyOn(shard_port(2), "numkeys:");
  ASSERT_EQ(IntegerOf(QueryRedis(proxy_port(), {"RPUSH", key, "a", "b"})), 2);
  auto popped = QueryRedis(proxy_port(), {"LMPOP", "1", key, "LEFT"});
  ASSERT_TRUE(popped && popped->elements.size() == 2);
  EXPECT_EQ(popped->elements[0].text, key);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"LLEN", key})), 1);
}

// RANDOMKEY asked again and again on one connection sees every shard's keys (Redis' RANDOMKEY
// test sets two keys and expects both within 100 calls).
TEST_F(ProxyCompatTest, RandomKeyReachesEveryShard) {
  const std::string first = KeyOn(shard_port(0), "random:");
  const std::string second = KeyOn(shard_port(2), "random:");
  auto connection = RedisConnection::Open(proxy_port());
  ASSERT_NE(connection, nullptr);
  ASSERT_EQ(IntegerOf(connection->Command({"DBSIZE"})), 0);
  ASSERT_EQ(TextOf(connection->Command({"SET", first, "x"})), "OK");
  ASSERT_EQ(TextOf(connection->Command({"SET", second, "y"})), "OK");
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) seen.insert(TextOf(connection->Command({"RANDOMKEY"})));
  EXPECT_EQ(seen, (std::set<std::string>{first, second}));
  EXPECT_EQ(IntegerOf(connection->Command({"DBSIZE"})), 2);
}

// A script returning a table that contains itself: Redis nests the reply until its Lua stack
// limit (Redis' "Script return recursive object" test); the proxy passes it on whole.
TEST_F(ProxyCompatTest, DeeplyNestedScriptRepliesPassThrough) {
  RawConnection raw(proxy_port());
  ASSERT_TRUE(raw.connected());
  const std::string script = "local a = {}; local b = {a}; a[1] = b; return a";
  ASSERT_TRUE(raw.Send("*3\r\n$4\r\nEVAL\r\n$" + std::to_string(script.size()) + "\r\n" + script +
                       "\r\n$1\r\n0\r\n"));
  std::string reply;
  for (int round = 0; round < 50 && reply.find("\r\n-") == std::string::npos; ++round) {
    reply += raw.ReadUntil(1 << 16, 100ms);
  }
  EXPECT_EQ(reply.rfind("*1\r\n*1\r\n", 0), 0u) << reply.substr(0, 200);
  const size_t error = reply.find("\r\n-");
  ASSERT_NE(error, std::string::npos) << reply.substr(0, 200);
  EXPECT_GT(error / 4, 64u) << "nested less than the old limit";
  EXPECT_EQ(reply.substr(error + 3, 30), "ERR reached lua stack limit\r\n");
  EXPECT_EQ(TextOf(QueryRedis(proxy_port(), {"PING"})), "PONG");
}

}  // namespace
}  // namespace shardctl::integration
