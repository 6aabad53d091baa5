// shardproxy with real clients on a real 3-shard cluster: redis-cli without -c, redis-py in RESP2
// and RESP3, redis-benchmark without --cluster, malformed and refused input, and the proxy's own
// startup errors. Slot migration, shard failures and limits are in proxy_cluster_test.cc.
#include <unistd.h>

#include <set>

#include "common/slots.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

std::string RespCommand(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& arg : args) out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  return out;
}

// redis-cli -p <port> args..., without -c: the proxy must make the cluster look like one Redis.
CommandResult Cli(int port, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"redis-cli", "-p", std::to_string(port)};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, 10s);
}

TEST_F(ProxyTest, RedisCliWithoutClusterModeSeesOneRedis) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  // One key per primary, so multi-key commands are split three ways.
  std::vector<std::string> keys;
  std::set<int> owners;
  for (int shard = 0; shard < 3; ++shard) {
    keys.push_back(KeyOn(shard_port(shard), "cli:"));
    owners.insert(OwnerPort(common::KeySlot(keys.back())));
  }
  ASSERT_EQ(owners.size(), 3u) << "the keys must live on three different primaries";

  auto set = Cli(proxy_port(), {"SET", keys[0], "zero"});
  EXPECT_EQ(set.out, "OK\n") << set.Describe();
  auto get = Cli(proxy_port(), {"GET", keys[0]});
  EXPECT_EQ(get.out, "zero\n") << get.Describe();
  auto direct = QueryRedis(shard_port(0), {"GET", keys[0]});
  ASSERT_TRUE(direct.has_value());
  EXPECT_EQ(direct->text, "zero") << "the key is not on the primary that owns its slot";

  auto mset = Cli(proxy_port(), {"MSET", keys[2], "two", keys[0], "ZERO", keys[1], "one"});
  EXPECT_EQ(mset.out, "OK\n") << mset.Describe();
  auto mget = Cli(proxy_port(), {"MGET", keys[1], "cli:missing", keys[2], keys[0]});
  EXPECT_EQ(mget.out, "one\n\ntwo\nZERO\n")
      << "MGET: one reply per key, in the request's order" << mget.Describe();
  // redis-cli prints an empty line for nil; the order check above covers the nil's position.
  mget = Cli(proxy_port(), {"MGET", keys[2], keys[1], keys[0]});
  EXPECT_EQ(mget.out, "two\none\nZERO\n") << mget.Describe();
  for (int shard = 0; shard < 3; ++shard) {
    auto on_shard = QueryRedis(shard_port(shard), {"EXISTS", keys[static_cast<size_t>(shard)]});
    ASSERT_TRUE(on_shard.has_value());
    EXPECT_EQ(on_shard->integer, 1) << "MSET did not reach shard " << shard;
  }

  auto exists = Cli(proxy_port(), {"EXISTS", keys[0], keys[0], keys[1], "cli:missing", keys[2]});
  EXPECT_EQ(exists.out, "4\n") << "EXISTS counts duplicates: " << exists.Describe();
  auto del = Cli(proxy_port(), {"DEL", keys[0], keys[1], keys[2], "cli:missing"});
  EXPECT_EQ(del.out, "3\n") << "DEL sums the shards' counts: " << del.Describe();
  del = Cli(proxy_port(), {"DEL", keys[0], keys[1], keys[2]});
  EXPECT_EQ(del.out, "0\n") << del.Describe();
}

TEST_F(ProxyTest, RedisPyPipelinesInResp2AndResp3) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  for (int protocol : {3, 2}) {
    auto pipeline = RunPythonScenario("pipeline", protocol);
    EXPECT_EQ(pipeline.exit_code, 0) << pipeline.Describe();
    EXPECT_NE(pipeline.out.find("replies checked"), std::string::npos) << pipeline.Describe();
  }
  EXPECT_GT(ProxyCounter("split_commands"), 0) << "the MGETs were not split";
}

TEST_F(ProxyTest, RedisPyHandshakeClientCommandsAndInfo) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  for (int protocol : {3, 2}) {
    auto connection = RunPythonScenario("connection", protocol);
    EXPECT_EQ(connection.exit_code, 0) << connection.Describe();
    EXPECT_NE(connection.out.find("connection: ok"), std::string::npos) << connection.Describe();
  }

  // The RESP3 types reach the client as the shards sent them, on the wire.
  RawConnection raw(proxy_port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(
      raw.Send(RespCommand({"HELLO", "3"}) + RespCommand({"HSET", "r3:h", "a", "1"}) +
               RespCommand({"HGETALL", "r3:h"}) + RespCommand({"ZADD", "r3:z", "1.5", "m"}) +
               RespCommand({"ZSCORE", "r3:z", "m"}) + RespCommand({"SADD", "r3:s", "x"}) +
               RespCommand({"SMEMBERS", "r3:s"}) +
               RespCommand({"MGET", "r3:missing", "r3:also-missing"}) + RespCommand({"QUIT"})));
  bool closed = false;
  const std::string wire = raw.ReadUntilClosed(5s, &closed);
  EXPECT_TRUE(closed) << "QUIT did not close the connection";
  for (const char* expected : {"%1\r\n$1\r\na\r\n$1\r\n1\r\n", ",1.5\r\n", "~1\r\n$1\r\nx\r\n",
                               "*2\r\n_\r\n_\r\n", "+OK\r\n"}) {
    EXPECT_NE(wire.find(expected), std::string::npos) << "no " << expected << " in " << wire;
  }
}

TEST_F(ProxyTest, RedisBenchmarkWithoutClusterMode) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  // -r spreads the keys over the keyspace, so MSET is split and every shard gets keys.
  // Sized for correctness, not speed: 5000 MSETs are 50000 split keys, ~8 s in the sanitizer
  // build on a busy machine; the guard only catches a hang.
  auto bench =
      RunCommand({"redis-benchmark", "-p", std::to_string(proxy_port()), "-t", "set,get,mset", "-n",
                  "5000", "-c", "20", "-P", "16", "-r", "100000", "-q"},
                 120s);
  ASSERT_EQ(bench.exit_code, 0) << bench.Describe();
  for (const char* test : {"SET:", "GET:", "MSET (10 keys):"}) {
    EXPECT_NE(bench.out.find(test), std::string::npos) << test << " missing: " << bench.Describe();
  }
  for (const std::string& output : {bench.out, bench.err}) {
    EXPECT_EQ(output.find("ERR"), std::string::npos) << bench.Describe();
    EXPECT_EQ(output.find("rror"), std::string::npos) << bench.Describe();
  }
  for (int shard = 0; shard < 3; ++shard) {
    auto size = QueryRedis(shard_port(shard), {"DBSIZE"});
    ASSERT_TRUE(size.has_value());
    EXPECT_GT(size->integer, 0) << "no keys on shard " << shard;
  }
  EXPECT_GT(ProxyCounter("split_commands"), 0);
}

TEST_F(ProxyTest, BadInputGetsRedisErrorsAndOtherClientsCarryOn) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  std::string error;
  auto other = RedisConnection::Open(proxy_port(), &error);
  ASSERT_NE(other, nullptr) << error;
  auto before = other->Command({"SET", "bad:other", "1"});
  ASSERT_TRUE(before.has_value()) << other->error();

  RawConnection raw(proxy_port());
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.Send("*1\r\n$abc\r\n"));
  bool closed = false;
  const std::string reply = raw.ReadUntilClosed(3s, &closed);
  EXPECT_TRUE(reply.starts_with("-ERR Protocol error")) << reply;
  EXPECT_TRUE(closed) << "the connection stayed open after a protocol error";
  auto after = other->Command({"INCR", "bad:other"});
  ASSERT_TRUE(after.has_value()) << "another client's connection broke: " << other->error();
  EXPECT_EQ(after->integer, 2);
  EXPECT_EQ(ProxyCounter("protocol_errors"), 1);

  auto monitor = other->Command({"MONITOR"});
  ASSERT_TRUE(monitor.has_value());
  EXPECT_EQ(monitor->kind, RedisReply::Kind::kError);
  EXPECT_NE(monitor->text.find("'monitor'"), std::string::npos) << monitor->text;
  auto unknown = other->Command({"FROBNICATE", "x"});
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->kind, RedisReply::Kind::kError);
  EXPECT_TRUE(unknown->text.starts_with("ERR unknown command")) << unknown->text;

  std::string a = "bad:a", b = "bad:b0";
  for (int n = 1; common::KeySlot(a) == common::KeySlot(b) && n < 100; ++n) {
    b = "bad:b" + std::to_string(n);
  }
  auto crossslot = other->Command({"MSETNX", a, "1", b, "2"});
  ASSERT_TRUE(crossslot.has_value());
  EXPECT_EQ(crossslot->kind, RedisReply::Kind::kError);
  EXPECT_TRUE(crossslot->text.starts_with("CROSSSLOT")) << crossslot->text;
  auto same_slot = other->Command({"MSETNX", "{bad}a", "1", "{bad}b", "2"});
  ASSERT_TRUE(same_slot.has_value());
  EXPECT_EQ(same_slot->integer, 1) << same_slot->text;

  auto select1 = other->Command({"SELECT", "1"});
  ASSERT_TRUE(select1.has_value());
  EXPECT_EQ(select1->kind, RedisReply::Kind::kError);
  auto select0 = other->Command({"SELECT", "0"});
  ASSERT_TRUE(select0.has_value());
  EXPECT_EQ(select0->text, "OK");
  auto ping = other->Command({"PING"});
  ASSERT_TRUE(ping.has_value()) << other->error();
  EXPECT_EQ(ping->text, "PONG");
}

TEST_F(ProxyTest, ClientsVanishingMidPipelineLeaveTheProxyHealthy) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  std::vector<std::string> keys;
  for (int shard = 0; shard < 3; ++shard) keys.push_back(KeyOn(shard_port(shard), "gone:"));
  std::string burst;
  for (int i = 0; i < 300; ++i) {
    burst += RespCommand({"MGET", keys[0], keys[1], keys[2]}) +
             RespCommand({"INCR", keys[static_cast<size_t>(i % 3)]});
  }
  // Each client closes with its split and single-slot requests still at the shards: the
  // replies come back for sessions that are gone (ASan in TearDown checks the bookkeeping).
  for (int client = 0; client < 40; ++client) {
    RawConnection raw(proxy_port());
    ASSERT_TRUE(raw.connected());
    raw.Send(burst);
  }
  // The proxy answers (and drops) all 36000 of their shard requests before their sessions go,
  // seconds of work in the sanitizer build on a busy machine, meanwhile serving the survivor
  // late. So: wait while the count of clients keeps falling; it must reach 1, and a session that
  // never goes stops it falling.
  auto survivor = RedisConnection::Open(proxy_port(), nullptr, 30s);
  ASSERT_NE(survivor, nullptr);
  std::string clients;  // INFO clients' connected_clients
  auto changed_at = std::chrono::steady_clock::now();
  WaitUntil(
      [&] {
        const std::string info = TextOf(survivor->Command({"INFO", "clients"}));
        const std::string field = "connected_clients:";
        const size_t from = info.find(field) + field.size();
        const std::string now = info.find(field) == std::string::npos
                                    ? info
                                    : info.substr(from, info.find('\r', from) - from);
        if (now != clients) changed_at = std::chrono::steady_clock::now();
        clients = now;
        return clients == "1" || std::chrono::steady_clock::now() - changed_at > 10s;
      },
      240s, 50ms);
  EXPECT_EQ(clients, "1") << "connected_clients stopped falling for 10 s";
  auto mget = survivor->Command({"MGET", keys[0], keys[1], keys[2]});
  ASSERT_TRUE(mget.has_value()) << survivor->error();
  EXPECT_EQ(mget->elements.size(), 3u);
}

TEST_F(ProxyTest, StartupErrorsExitWithOneLineAndTheRightCode) {
  auto help = RunCommand({ShardproxyBinary(), "--help"}, 10s);
  EXPECT_EQ(help.exit_code, 0) << help.Describe();
  EXPECT_NE(help.out.find("--cluster"), std::string::npos) << help.Describe();

  auto bad_flag =
      RunCommand({ShardproxyBinary(), "--cluster", "127.0.0.1:7000", "--frob", "1"}, 10s);
  EXPECT_EQ(bad_flag.exit_code, 2) << bad_flag.Describe();
  EXPECT_NE(bad_flag.err.find("--frob"), std::string::npos) << bad_flag.Describe();
  EXPECT_EQ(SplitLines(bad_flag.err).size(), 1u) << bad_flag.Describe();

  // Nothing listens on base+45 (the block is ours, and no cluster is up yet).
  const std::string nowhere = "127.0.0.1:" + std::to_string(base_port() + 45);
  auto unreachable = RunCommand({ShardproxyBinary(), "--cluster", nowhere, "--listen",
                                 "127.0.0.1:" + std::to_string(proxy_port())},
                                20s);
  EXPECT_EQ(unreachable.exit_code, 1) << unreachable.Describe();
  EXPECT_EQ(SplitLines(unreachable.err).size(), 1u) << unreachable.Describe();
  EXPECT_NE(unreachable.err.find("shardproxy: "), std::string::npos) << unreachable.Describe();
  EXPECT_LT(unreachable.elapsed, 15s) << unreachable.Describe();

  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const int taken = base_port() + 41;
  const int fd = ListenOn(taken);
  ASSERT_GE(fd, 0);
  auto in_use =
      RunCommand({ShardproxyBinary(), "--cluster", "127.0.0.1:" + std::to_string(shard_port(0)),
                  "--listen", "127.0.0.1:" + std::to_string(taken), "--threads", "2"},
                 20s);
  close(fd);
  EXPECT_EQ(in_use.exit_code, 1) << in_use.Describe();
  EXPECT_NE(in_use.err.find(std::to_string(taken)), std::string::npos) << in_use.Describe();
  EXPECT_EQ(SplitLines(in_use.err).size(), 1u) << in_use.Describe();
}

}  // namespace
}  // namespace shardctl::integration
