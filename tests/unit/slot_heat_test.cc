// Hot slots without processes (issue 31): PROXY SLOTS parsing, the hottest slots and their CPU
// share from two readings, each primary's load share from counter deltas, and the JSON and
// Prometheus text `top --slots`, `status --json` and /metrics make of them.
#include "launcher/cluster/slot_heat.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/slots.h"
#include "launcher/cli/args.h"
#include "launcher/cli/top_view.h"
#include "launcher/supervisor/metrics.h"

namespace shardctl::launcher {
namespace {

TEST(ParseProxySlotsTest, PairsOfSlotAndCumulativeRequests) {
  // As RedisConnection::Run gives the flat array: one element per line.
  auto counts = ParseProxySlots("0\n5\n866\n120\n16383\n7");
  ASSERT_TRUE(counts.ok()) << counts.error().message();
  EXPECT_EQ(*counts, (std::map<int, uint64_t>{{0, 5}, {866, 120}, {16383, 7}}));
  auto empty = ParseProxySlots("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(ParseProxySlots("1\n2\n3").error().message(), "PROXY SLOTS: an odd number of elements");
  EXPECT_EQ(ParseProxySlots("16384\n2").error().message(), "PROXY SLOTS: \"16384\" is not a slot");
  EXPECT_EQ(ParseProxySlots("12\nmany").error().message(), "PROXY SLOTS: \"many\" is not a count");
}

SlotReading Reading(std::map<int, SlotStat> stats) {
  SlotReading reading{.owner = std::vector<int>(common::kSlotCount, -1), .cpu_counted = true};
  for (const auto& [slot, stat] : stats) reading.owner[static_cast<size_t>(slot)] = slot / 8192;
  reading.stats = std::move(stats);
  return reading;
}

TEST(HottestSlotsTest, CpuGrowthRanksAndShares) {
  const SlotReading before = Reading({{10, {.keys = 1, .cpu_usec = 1000, .bytes_in = 100}},
                                      {9000, {.keys = 3, .cpu_usec = 50000}},
                                      {12000, {.keys = 2, .cpu_usec = 10}}});
  const SlotReading after =
      Reading({{10, {.keys = 4, .cpu_usec = 7000, .bytes_in = 300, .bytes_out = 50}},
               {9000, {.keys = 3, .cpu_usec = 52000}},
               {12000, {.keys = 2, .cpu_usec = 10}}});
  const auto hot = HottestSlots(before, after, 2.0, 5);
  // Slot 12000 did nothing: left out. The cumulative leader (9000) grew less than slot 10.
  ASSERT_EQ(hot.size(), 2u);
  EXPECT_EQ(hot[0], (SlotHeat{.slot = 10,
                              .shard = 0,
                              .cpu_share = 0.75,
                              .keys = 4,
                              .bytes_in_per_second = 100,
                              .bytes_out_per_second = 25}));
  EXPECT_EQ(hot[1].slot, 9000);
  EXPECT_EQ(hot[1].shard, 1);
  EXPECT_DOUBLE_EQ(*hot[1].cpu_share, 0.25);
  EXPECT_FALSE(hot[0].ops_per_second);  // no proxy: no number
  EXPECT_EQ(HottestSlots(before, after, 2.0, 1).size(), 1u);
}

TEST(HottestSlotsTest, ExecutedTotalIsTheDenominatorWhenOnlySomeSlotsWereRead) {
  SlotReading before = Reading({{10, {.cpu_usec = 0}}});
  SlotReading after = Reading({{10, {.cpu_usec = 100}}});
  before.executed_usec = 1000;
  after.executed_usec = 1400;
  EXPECT_DOUBLE_EQ(*HottestSlots(before, after, 1.0, 10)[0].cpu_share, 0.25);
}

TEST(HottestSlotsTest, ProxyRequestsAloneWithoutSlotStats) {
  SlotReading before = Reading({});
  SlotReading after = Reading({});
  after.owner[866] = 2;
  before.proxy = std::map<int, uint64_t>{{866, 100}, {5, 7}};
  after.proxy = std::map<int, uint64_t>{{866, 600}, {5, 7}, {42, 10}};
  const auto hot = HottestSlots(before, after, 0.5, 10);
  ASSERT_EQ(hot.size(), 2u);
  EXPECT_EQ(hot[0], (SlotHeat{.slot = 866, .shard = 2, .ops_per_second = 1000}));
  EXPECT_EQ(hot[1], (SlotHeat{.slot = 42, .shard = -1, .ops_per_second = 20}));
}

TEST(HottestSlotsTest, ACounterThatWentDownCountsFromZeroAndAMissingOneIsNotCompared) {
  // Slot 10 moved (its new owner counts from 0); slot 20's owner did not answer before.
  const SlotReading before = Reading({{10, {.cpu_usec = 9000}}});
  const SlotReading after = Reading({{10, {.cpu_usec = 300}}, {20, {.cpu_usec = 5000000}}});
  const auto hot = HottestSlots(before, after, 1.0, 10);
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_EQ(hot[0].slot, 10);
  EXPECT_DOUBLE_EQ(*hot[0].cpu_share, 1.0);
}

TEST(HottestSlotsTest, NoCpuShareWhileCountingIsOff) {
  SlotReading before = Reading({{10, {.keys = 1, .bytes_in = 0}}});
  SlotReading after = Reading({{10, {.keys = 1, .bytes_in = 10}}});
  after.cpu_counted = false;
  const auto hot = HottestSlots(before, after, 1.0, 10);
  ASSERT_EQ(hot.size(), 1u);
  EXPECT_FALSE(hot[0].cpu_share);
  EXPECT_FALSE(hot[0].bytes_in_per_second);
  EXPECT_EQ(hot[0].keys, 1u);
}

TEST(LoadSharesTest, FractionsOfThePrimariesCommandsOverTheInterval) {
  using Counts = std::vector<std::optional<uint64_t>>;
  const auto shares = LoadShares(Counts{100, 1000, std::nullopt, 50}, Counts{400, 1100, 7, 50});
  ASSERT_EQ(shares.size(), 4u);
  EXPECT_DOUBLE_EQ(*shares[0], 0.75);
  EXPECT_DOUBLE_EQ(*shares[1], 0.25);
  EXPECT_FALSE(shares[2]);  // not a primary (or no answer) the first time
  EXPECT_DOUBLE_EQ(*shares[3], 0.0);
  // A restarted primary's counter counts from zero; nothing done at all: no shares.
  EXPECT_DOUBLE_EQ(*LoadShares(Counts{500, 10}, Counts{30, 40})[0], 0.5);
  EXPECT_FALSE(LoadShares(Counts{5, 5}, Counts{5, 5})[0]);
  EXPECT_FALSE(LoadShares(Counts{}, Counts{5})[0]);
}

TEST(CommandUsecTest, SumsEveryCommandsUsec) {
  EXPECT_EQ(CommandUsec("# Commandstats\r\n"
                        "cmdstat_set:calls=10,usec=250,usec_per_call=25.00,rejected_calls=0\r\n"
                        "cmdstat_get:calls=3,usec=30,usec_per_call=10.00\r\n"
                        "cmdstat_info:calls=1,usec=5\r\n"),
            285u);
  EXPECT_EQ(CommandUsec(""), 0u);
}

TEST(SlotTopViewTest, TableJsonAndDashesWhereThereIsNoSource) {
  const SlotTopFrame frame{.seconds = 1.0,
                           .slots = {{.slot = 866,
                                      .shard = 0,
                                      .cpu_share = 0.612,
                                      .keys = 1,
                                      .bytes_in_per_second = 2048,
                                      .bytes_out_per_second = 1024}},
                           .slot_stats = true,
                           .proxy = false};
  const auto lines = SlotTopTable(frame);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("SLOT", 0), 0u);
  EXPECT_NE(lines[1].find("866"), std::string::npos);
  EXPECT_NE(lines[1].find("61.2"), std::string::npos);
  EXPECT_NE(lines[1].find(" - "), std::string::npos);  // ops/s: no proxy
  EXPECT_NE(SlotTopHeadline("main", frame).find("no proxy answered PROXY SLOTS"),
            std::string::npos);
  const nlohmann::json json = SlotTopJson("main", frame);
  EXPECT_EQ(json["name"], "main");
  EXPECT_EQ(json["slot_stats"], true);
  EXPECT_EQ(json["proxy"], false);
  ASSERT_EQ(json["slots"].size(), 1u);
  const auto& slot = json["slots"][0];
  EXPECT_EQ(slot["slot"], 866);
  EXPECT_EQ(slot["shard"], 0);
  EXPECT_TRUE(slot["ops_per_second"].is_null());
  EXPECT_DOUBLE_EQ(slot["cpu_share"].get<double>(), 0.612);
  EXPECT_EQ(slot["keys"], 1);
  EXPECT_EQ(slot["network_bytes_in_per_second"], 2048.0);
  EXPECT_EQ(slot["network_bytes_out_per_second"], 1024.0);
}

TEST(SlotTopArgsTest, SlotsLimitAndJson) {
  auto parsed = ParseArgs({"top", "--slots", "--limit", "5", "--json", "--interval", "500ms"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(parsed->slots);
  EXPECT_EQ(parsed->limit, 5);
  EXPECT_TRUE(parsed->json);
  EXPECT_FALSE(ParseArgs({"top"})->limit);
  EXPECT_EQ(ParseArgs({"top", "--slots", "--limit", "0"}).error().message(),
            "--limit: \"0\" is not a number of slots (1 to 16384)");
}

TEST(SlotMetricsTest, StatusJsonAndPrometheusFamilies) {
  const std::vector<SlotMetrics> hot = {
      {.slot = 866,
       .shard = 1,
       .stat = {.keys = 3, .cpu_usec = 2500000, .bytes_in = 10, .bytes_out = 20},
       .cpu_share = 0.5}};
  const nlohmann::json json = SlotsStatusJson(true, hot);
  EXPECT_EQ(json["source"], "slot-stats");
  ASSERT_EQ(json["hot"].size(), 1u);
  EXPECT_EQ(json["hot"][0], (nlohmann::json{{"slot", 866},
                                            {"shard", 1},
                                            {"cpu_share", 0.5},
                                            {"keys", 3},
                                            {"network_bytes_in", 10},
                                            {"network_bytes_out", 20}}));
  EXPECT_EQ(SlotsStatusJson(false, {})["source"], "unavailable");

  DeploymentMetrics metrics{.name = "main", .engine = "valkey", .engine_version = "9.1.2"};
  metrics.shards.push_back({.index = 0, .port = 7000, .load_share = 0.25});
  metrics.shards.push_back({.index = 1, .port = 7001, .load_share = 0.75});
  metrics.shards.push_back({.index = 2, .port = 7002});  // a replica: no share
  std::string text = RenderSupervisorMetrics(metrics);
  EXPECT_NE(text.find("shardctl_primary_load_share{shard=\"0\"} 0.25\n"), std::string::npos);
  EXPECT_NE(text.find("shardctl_primary_load_share{shard=\"1\"} 0.75\n"), std::string::npos);
  EXPECT_EQ(text.find("shardctl_primary_load_share{shard=\"2\"}"), std::string::npos);
  // No per-slot counting: none of the slot families (shardctl_slot_moves_in_progress is another).
  EXPECT_EQ(text.find("shardctl_slot_cpu"), std::string::npos);
  EXPECT_EQ(text.find("shardctl_slot_keys"), std::string::npos);
  EXPECT_EQ(text.find("shardctl_slot_network"), std::string::npos);
  metrics.hot_slots = hot;
  text = RenderSupervisorMetrics(metrics);
  EXPECT_NE(text.find("shardctl_slot_cpu_seconds_total{slot=\"866\",shard=\"1\"} 2.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("shardctl_slot_keys{slot=\"866\",shard=\"1\"} 3\n"), std::string::npos);
  EXPECT_NE(
      text.find("shardctl_slot_network_bytes_total{slot=\"866\",shard=\"1\",direction=\"in\"} "
                "10\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("shardctl_slot_network_bytes_total{slot=\"866\",shard=\"1\",direction=\"out\"} "
                "20\n"),
      std::string::npos);
}

}  // namespace
}  // namespace shardctl::launcher
