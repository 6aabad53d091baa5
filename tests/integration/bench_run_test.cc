// `shardctl bench run` against real servers: a redis-server this test starts (plain mode) and a
// `shardctl up` cluster (slot routing, ASK and MOVED during a real slot migration). Every check
// reads the servers back over RESP, not only what the generator reports.
#include <signal.h>

#include "common/slots.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

class BenchRunTest : public ShardctlTest {
 protected:
  void TearDown() override {
    server_.reset();  // the fixture then checks nothing this test started is left
    ShardctlTest::TearDown();
  }

  // A redis-server of our own on this test's first port.
  void StartServer() {
    int port = base_port();
    server_ = std::make_unique<BackgroundCommand>(
        std::vector<std::string>{"redis-server", "--port", std::to_string(port), "--bind",
                                 "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
                                 scratch_dir().string()},
        scratch_dir() / "redis.out", scratch_dir() / "redis.err");
    ASSERT_TRUE(WaitUntil([&] { return QueryRedis(port, {"PING"}).has_value(); }, 10s))
        << ReadFileText(scratch_dir() / "redis.out");
  }

  // `shardctl bench run <args> --json`; fails the test unless it exits 0 with a JSON object.
  json Bench(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"bench", "run", "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = Shardctl(argv, 60s);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json parsed = json::parse(result.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(parsed.is_object()) << result.Describe();
    return parsed.is_object() ? parsed : json::object();
  }

  // A field of `INFO section` on `port` as a number; -1 when it is missing.
  long long InfoNumber(int port, const std::string& section, const std::string& field) {
    auto reply = QueryRedis(port, {"INFO", section});
    if (!reply) return -1;
    const std::string& text = reply->text;
    auto at = text.find("\n" + field);
    if (at == std::string::npos) return -1;
    at += 1 + field.size();
    return std::atoll(text.c_str() + at);
  }

  // The GETs and SETs `port` has run (INFO commandstats): the generator's requests, not ours.
  long long GetsAndSets(int port) {
    return std::max(0LL, InfoNumber(port, "commandstats", "cmdstat_get:calls=")) +
           std::max(0LL, InfoNumber(port, "commandstats", "cmdstat_set:calls="));
  }

  // How many -ASK or -MOVED redirects `port` has answered (INFO errorstats).
  long long Redirects(int port, const std::string& kind) {
    return std::max(0LL, InfoNumber(port, "errorstats", "errorstat_" + kind + ":count="));
  }

  long long Integer(int port, const std::vector<std::string>& command) {
    auto reply = QueryRedis(port, command);
    EXPECT_TRUE(reply && reply->kind == RedisReply::Kind::kInteger)
        << command[0] << " on " << port << ": " << (reply ? reply->text : "no reply");
    return reply ? reply->integer : -1;
  }

  std::string Text(int port, const std::vector<std::string>& command) {
    auto reply = QueryRedis(port, command);
    EXPECT_TRUE(reply && reply->kind != RedisReply::Kind::kError)
        << command[0] << " on " << port << ": " << (reply ? reply->text : "no reply");
    return reply ? reply->text : "";
  }

  std::unique_ptr<BackgroundCommand> server_;
};

void ExpectReportShape(const json& report) {
  for (const char* field : {"ops", "ops_per_sec", "errors", "hits", "misses", "per_second",
                            "latency_us", "phases", "settings", "moved", "asked"}) {
    EXPECT_TRUE(report.contains(field)) << field << " missing: " << report.dump();
  }
  for (const char* field : {"p50", "p90", "p99", "p99_9", "max"}) {
    EXPECT_TRUE(report["latency_us"].contains(field)) << field;
  }
  if (report.contains("latency_us") && report["latency_us"].contains("p50")) {
    EXPECT_GT(report["latency_us"]["p50"].get<double>(), 0);
    EXPECT_LE(report["latency_us"]["p50"].get<double>(), report["latency_us"]["max"].get<double>());
  }
}

// set-then-get writes each key exactly once, then every GET hits: no thread starts its GETs
// before every thread's SETs are answered.
TEST_F(BenchRunTest, PlainSetThenGetWritesEveryKey) {
  StartServer();
  json report = Bench({"--port", std::to_string(base_port()), "--workload", "set-then-get",
                       "--keyspace", "2000", "--value-size", "64", "--threads", "2",
                       "--connections", "8", "--pipeline", "4", "--duration", "1500ms"});
  ExpectReportShape(report);
  EXPECT_EQ(report.value("errors", -1), 0);
  EXPECT_GT(report.value("ops", 0), 2000);
  ASSERT_EQ(report["phases"].size(), 2u) << report.dump();
  EXPECT_EQ(report["phases"][0]["name"], "set");
  EXPECT_EQ(report["phases"][0]["ops"], 2000);
  EXPECT_GT(report["phases"][1]["hits"].get<long long>(), 0);
  EXPECT_EQ(report["phases"][1]["misses"], 0);
  EXPECT_GE(report["per_second"].size(), 1u);
  EXPECT_EQ(Integer(base_port(), {"DBSIZE"}), 2000);
  EXPECT_EQ(Integer(base_port(), {"STRLEN", "key:000000001999"}), 64);
}

// --requests bounds the run exactly; a 1:1 mix sends both commands.
TEST_F(BenchRunTest, PlainRequestsBoundAndMix) {
  StartServer();
  json report = Bench({"--port", std::to_string(base_port()), "--ratio", "1:1", "--keyspace", "100",
                       "--requests", "3000", "--threads", "2", "--connections", "4"});
  EXPECT_EQ(report.value("ops", 0), 3000);
  EXPECT_EQ(report.value("errors", -1), 0);
  long long gets = report.value("hits", 0LL) + report.value("misses", 0LL);
  EXPECT_GT(gets, 1000);
  EXPECT_LT(gets, 2000);
  EXPECT_GT(Integer(base_port(), {"DBSIZE"}), 50);
  auto stats = Text(base_port(), {"INFO", "commandstats"});
  EXPECT_NE(stats.find("cmdstat_set:calls="), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_get:calls="), std::string::npos) << stats;
}

// Open loop: the achieved rate follows the target (loose bounds: never flaky, still a check).
TEST_F(BenchRunTest, PlainOpenLoopKeepsTheRate) {
  StartServer();
  json report = Bench({"--port", std::to_string(base_port()), "--rate", "2000", "--duration", "2s",
                       "--connections", "8", "--ratio", "1:1", "--keyspace", "100"});
  EXPECT_EQ(report.value("errors", -1), 0);
  double rate = report.value("ops_per_sec", 0.0);
  EXPECT_GT(rate, 2000 * 0.7) << report.dump();
  EXPECT_LT(rate, 2000 * 1.3) << report.dump();
  EXPECT_GT(report.value("ops", 0), 2800);
  EXPECT_LE(report.value("ops", 0), 4000);
  EXPECT_EQ(report["settings"]["rate"], 2000);
}

// mixed-80-20 populates its SET keys first, so ~80% of GETs hit; a rate profile steps the load.
TEST_F(BenchRunTest, PlainMixedPresetPopulatesAndFollowsAProfile) {
  StartServer();
  json report = Bench({"--port", std::to_string(base_port()), "--workload", "mixed-80-20",
                       "--scale", "0.001", "--rate-profile", "2k:1s,4k:1s", "--connections", "8"});
  EXPECT_EQ(report.value("errors", -1), 0);
  EXPECT_EQ(report["settings"]["rate_profile"], "2k:1s,4k:1s");
  EXPECT_EQ(report["settings"]["set_keyspace"], 3000);
  EXPECT_GE(Integer(base_port(), {"DBSIZE"}), 3000) << "populate wrote every SET key";
  double hits = report.value("hits", 0.0);
  double gets = hits + report.value("misses", 0.0);
  ASSERT_GT(gets, 2000) << report.dump();
  EXPECT_NEAR(hits / gets, 0.8, 0.05);
  EXPECT_NEAR(gets / report.value("ops", 1.0), 0.8, 0.05);
  ASSERT_GE(report["per_second"].size(), 2u) << report.dump();
  EXPECT_NEAR(report["per_second"][0].get<double>(), 2000, 600) << report.dump();
  EXPECT_NEAR(report["per_second"][1].get<double>(), 4000, 1200) << report.dump();
  // Value sizes follow the preset: between 4 and 2048 bytes.
  long long size = Integer(base_port(), {"STRLEN", "key:000000000042"});
  EXPECT_GE(size, 4);
  EXPECT_LE(size, 2048);
}

// Ctrl-C (SIGINT) ends a long run early; the replies in flight are awaited and the report printed.
TEST_F(BenchRunTest, InterruptStopsEarlyAndStillReports) {
  StartServer();
  BackgroundCommand bench(
      {ShardctlBinary(), "bench", "run", "--json", "--port", std::to_string(base_port()),
       "--duration", "60s", "--rate", "2000", "--connections", "4"},
      scratch_dir() / "bench.out", scratch_dir() / "bench.err");
  // Interrupted once the server has answered a few hundred of its requests, however slow the
  // machine, so the report has something to count.
  ASSERT_TRUE(WaitUntil([&] { return GetsAndSets(base_port()) > 300; }, 20s));
  kill(bench.pid(), SIGINT);
  auto exit_code = bench.WaitForExit(10s);
  ASSERT_EQ(exit_code, 0) << ReadFileText(scratch_dir() / "bench.err");
  json report = json::parse(ReadFileText(scratch_dir() / "bench.out"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << ReadFileText(scratch_dir() / "bench.out");
  EXPECT_TRUE(report.value("interrupted", false));
  EXPECT_GT(report.value("ops", 0), 100);
  EXPECT_LT(report.value("seconds", 100.0), 30);
  EXPECT_EQ(report.value("errors", -1), 0);
}

// Cluster mode: every key lands on its slot's primary, no redirects needed with a fresh map.
TEST_F(BenchRunTest, ClusterRoutesBySlot) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  json report = Bench({"--cluster", "127.0.0.1:" + std::to_string(base_port()), "--workload",
                       "set-then-get", "--keyspace", "3000", "--value-size", "32", "--threads", "2",
                       "--connections", "4", "--pipeline", "8", "--duration", "1s"});
  ExpectReportShape(report);
  EXPECT_EQ(report.value("errors", -1), 0) << report.value("first_error", "");
  EXPECT_EQ(report.value("moved", -1), 0);
  EXPECT_EQ(report.value("asked", -1), 0);
  ASSERT_EQ(report["phases"].size(), 2u);
  EXPECT_EQ(report["phases"][0]["ops"], 3000);
  EXPECT_EQ(report["phases"][1]["misses"], 0);
  EXPECT_TRUE(report["settings"]["cluster"].get<bool>());
  long long total = 0;
  std::vector<common::SlotRange> ranges = common::SplitSlotsEvenly(3);
  for (int shard = 0; shard < 3; ++shard) {
    long long keys = Integer(base_port() + shard, {"DBSIZE"});
    EXPECT_GT(keys, 500) << "shard " << shard;
    total += keys;
    // A key of this shard's slots is stored right here, not on another node.
    for (int n = 0; n < 3000; ++n) {
      std::string key =
          "key:" + std::string(12 - std::to_string(n).size(), '0') + std::to_string(n);
      int slot = common::KeySlot(key);
      if (slot < ranges[shard].first || slot > ranges[shard].last) continue;
      EXPECT_EQ(Integer(base_port() + shard, {"EXISTS", key}), 1) << key;
      break;
    }
  }
  EXPECT_EQ(total, 3000);
}

// A slot migrates while the generator runs: ASK while keys move, MOVED once the slot has moved;
// both are followed, so no request fails.
TEST_F(BenchRunTest, ClusterFollowsAskAndMovedDuringMigration) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const std::string hot_key = "key:000000000000";
  int slot = common::KeySlot(hot_key);
  auto ranges = common::SplitSlotsEvenly(3);
  int owner = 0;
  while (slot > ranges[owner].last) ++owner;
  int source = base_port() + owner;
  int target = base_port() + (owner + 1) % 3;
  std::string source_id = Text(source, {"CLUSTER", "MYID"});
  std::string target_id = Text(target, {"CLUSTER", "MYID"});
  BackgroundCommand bench(
      {ShardctlBinary(), "bench", "run", "--json", "--cluster",
       "127.0.0.1:" + std::to_string(base_port()), "--ratio", "1:1", "--keyspace", "50", "--rate",
       "3000", "--duration", "60s", "--connections", "4"},
      scratch_dir() / "bench.out", scratch_dir() / "bench.err");
  ASSERT_TRUE(WaitUntil([&] { return Integer(source, {"EXISTS", hot_key}) == 1; }, 5s));
  std::string slot_text = std::to_string(slot);
  Text(target, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", source_id});
  Text(source, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", target_id});
  for (int round = 0; round < 20; ++round) {
    auto keys = QueryRedis(source, {"CLUSTER", "GETKEYSINSLOT", slot_text, "100"});
    ASSERT_TRUE(keys && keys->kind == RedisReply::Kind::kArray);
    if (keys->elements.empty()) break;
    std::vector<std::string> migrate = {
        "MIGRATE", "127.0.0.1", std::to_string(target), "", "0", "5000", "REPLACE", "KEYS"};
    for (const auto& key : keys->elements) migrate.push_back(key.text);
    Text(source, migrate);
  }
  // Each phase lasts until the generator has met it: requests for moved keys get ASK, then
  // (the slot handed over) MOVED; then Ctrl-C ends the run.
  EXPECT_TRUE(WaitUntil([&] { return Redirects(source, "ASK") > 0; }, 20s)) << "no ASK answered";
  for (int port : {target, source, base_port() + (owner + 2) % 3}) {
    Text(port, {"CLUSTER", "SETSLOT", slot_text, "NODE", target_id});
  }
  EXPECT_TRUE(WaitUntil([&] { return Redirects(source, "MOVED") > 0; }, 20s))
      << "no MOVED answered";
  kill(bench.pid(), SIGINT);
  auto exit_code = bench.WaitForExit(20s);
  ASSERT_EQ(exit_code, 0) << ReadFileText(scratch_dir() / "bench.err");
  json report = json::parse(ReadFileText(scratch_dir() / "bench.out"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << ReadFileText(scratch_dir() / "bench.out");
  EXPECT_EQ(report.value("errors", -1), 0) << report.value("first_error", "");
  EXPECT_GT(report.value("asked", 0), 0) << report.dump();
  EXPECT_GT(report.value("moved", 0), 0) << report.dump();
  EXPECT_EQ(Integer(target, {"EXISTS", hot_key}), 1);
}

// A MOVED to a primary the generator had no connection to (it served no slots when the run
// began): the new connection's first requests, queued while it connects, go out once it is up.
TEST_F(BenchRunTest, ClusterFollowsMovedToAPrimaryItHadNoConnectionTo) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto emptied = OnDeployment("move-slots", {"10923-16383", "--to", "0"});
  ASSERT_EQ(emptied.exit_code, 0) << emptied.Describe();
  const std::string hot_key = "key:000000000000";
  const int slot = common::KeySlot(hot_key);
  BackgroundCommand bench(
      {ShardctlBinary(), "bench", "run", "--json", "--cluster",
       "127.0.0.1:" + std::to_string(base_port()), "--ratio", "1:1", "--keyspace", "50", "--rate",
       "2000", "--duration", "60s", "--connections", "4"},
      scratch_dir() / "bench.out", scratch_dir() / "bench.err");
  const int shard2 = base_port() + 2;
  ASSERT_TRUE(WaitUntil(
      [&] { return GetsAndSets(base_port()) + GetsAndSets(base_port() + 1) > 500; }, 10s));
  auto moved = OnDeployment("move-slots", {std::to_string(slot), "--to", "2"});
  ASSERT_EQ(moved.exit_code, 0) << moved.Describe();
  // Every connection must reach shard 2 and keep its pipeline going there.
  EXPECT_TRUE(WaitUntil([&] { return GetsAndSets(shard2) > 200; }, 20s))
      << "shard 2 served " << GetsAndSets(shard2);
  kill(bench.pid(), SIGINT);
  ASSERT_EQ(bench.WaitForExit(20s), 0) << ReadFileText(scratch_dir() / "bench.err");
  json report = json::parse(ReadFileText(scratch_dir() / "bench.out"), nullptr, false);
  ASSERT_TRUE(report.is_object()) << ReadFileText(scratch_dir() / "bench.out");
  EXPECT_EQ(report.value("errors", -1), 0) << report.value("first_error", "");
  EXPECT_GT(report.value("moved", 0), 0) << report.dump();
}

// Bad flags exit 2, an unreachable server exits 1; each with one "shardctl: bench run:" line.
TEST_F(BenchRunTest, ErrorsAndExitCodes) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string mention;
  };
  std::string closed_port = std::to_string(base_port() + 45);  // ours, nothing listens there
  for (const auto& [args, exit_code, mention] :
       std::vector<Case>{{{"bench", "run", "--threads", "0"}, kExitUsage, "--threads"},
                         {{"bench", "run", "--rate", "fast"}, kExitUsage, "bad rate"},
                         {{"bench", "run", "--workload", "nope"}, kExitUsage, "unknown workload"},
                         {{"bench", "run", "--bogus"}, kExitUsage, "unknown flag --bogus"},
                         {{"bench", "walk"}, kExitUsage, "unknown bench command"},
                         {{"bench", "run", "--port", closed_port, "--duration", "1s"},
                          kExitRuntime,
                          "cannot connect"},
                         {{"bench", "run", "--cluster", "127.0.0.1:" + closed_port},
                          kExitRuntime,
                          "cannot connect"}}) {
    auto result = Shardctl(args, 30s);
    EXPECT_EQ(result.exit_code, exit_code) << result.Describe();
    EXPECT_EQ(result.out, "") << result.Describe();
    EXPECT_EQ(result.err.rfind("shardctl: bench run: ", 0), 0u) << result.Describe();
    EXPECT_NE(result.err.find(mention), std::string::npos) << result.Describe();
    EXPECT_EQ(SplitLines(result.err).size(), 1u) << result.Describe();
  }
  auto help = Shardctl({"bench", "run", "--help"}, 30s);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Examples:"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--rate-profile"), std::string::npos) << help.out;
  EXPECT_NE(Shardctl({"--help"}, 30s).out.find("bench run"), std::string::npos);
}

}  // namespace
}  // namespace shardctl::integration
