// `shardctl top` without processes: rates between two samples (TopRows), the sort keys, the table
// and headline text, the full-screen frame; and the progress line's text.
#include "launcher/ops/top.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/cli/args.h"
#include "launcher/cli/top_view.h"
#include "launcher/term/progress.h"
#include "launcher/term/terminal.h"

namespace shardctl::launcher {
namespace {

using namespace std::chrono_literals;

Deployment TwoShards() {
  Deployment deployment;
  deployment.plan.name = "main";
  deployment.plan.bind = "127.0.0.1";
  deployment.plan.shards.push_back({.index = 0, .port = 7000, .bus_port = 17000});
  deployment.plan.shards.push_back(
      {.index = 1, .port = 7001, .bus_port = 17001, .role = Role::kReplica});
  return deployment;
}

ShardInfo Answering(uint64_t commands, uint64_t hits, uint64_t misses) {
  ShardInfo info;
  info.up = true;
  info.role = "primary";
  info.total_commands_processed = commands;
  info.instantaneous_ops_per_sec = 77;
  info.keyspace_hits = hits;
  info.keyspace_misses = misses;
  info.used_memory = 1 << 20;
  info.maxmemory = 4 << 20;
  info.connected_clients = 5;
  info.total_forks = 1;
  info.latest_fork_usec = 1500;
  info.rdb_last_save_time = 1'000;
  return info;
}

TopSample Sample(std::chrono::steady_clock::time_point at, std::vector<ShardInfo> shards,
                 std::vector<std::optional<double>> cpu) {
  return {.at = at, .unix_seconds = 1'180, .shards = std::move(shards), .cpu_seconds = cpu};
}

TEST(TopRowsTest, RatesBetweenTwoSamples) {
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  TopSample first = Sample(t0, {Answering(1'000, 10, 0), ShardInfo{}}, {1.0, std::nullopt});
  TopSample second = Sample(t0 + 2s, {Answering(5'000, 40, 10), ShardInfo{}}, {1.5, std::nullopt});
  auto rows = TopRows(TwoShards(), &first, second);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].up);
  EXPECT_DOUBLE_EQ(rows[0].ops_per_second, 2'000);  // 4000 commands in 2 s
  ASSERT_TRUE(rows[0].hit_ratio);
  EXPECT_DOUBLE_EQ(*rows[0].hit_ratio, 0.75);  // 30 hits, 10 misses in the interval
  ASSERT_TRUE(rows[0].cpu_percent);
  EXPECT_DOUBLE_EQ(*rows[0].cpu_percent, 25);  // 0.5 s of CPU in 2 s
  EXPECT_EQ(rows[0].used_memory, 1u << 20);
  EXPECT_EQ(rows[0].clients, 5u);
  EXPECT_EQ(rows[0].last_save_age_seconds, 180);
  // The shard that does not answer keeps its planned role and shows no numbers.
  EXPECT_FALSE(rows[1].up);
  EXPECT_EQ(rows[1].role, "replica");
  EXPECT_FALSE(rows[1].cpu_percent);
}

TEST(TopRowsTest, FirstSampleUsesRedisRatesAndTotals) {
  TopSample only = Sample({}, {Answering(1'000, 3, 1), Answering(0, 0, 0)}, {2.0, 1.0});
  auto rows = TopRows(TwoShards(), nullptr, only);
  EXPECT_DOUBLE_EQ(rows[0].ops_per_second, 77);
  EXPECT_DOUBLE_EQ(*rows[0].hit_ratio, 0.75);
  EXPECT_FALSE(rows[0].cpu_percent);  // needs two samples
  EXPECT_FALSE(rows[1].hit_ratio);    // no reads at all
}

TEST(TopRowsTest, ARestartedShardIsNotANegativeRate) {
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  TopSample before = Sample(t0, {Answering(9'000, 50, 0), ShardInfo{}}, {9.0, std::nullopt});
  TopSample after = Sample(t0 + 1s, {Answering(10, 1, 0), ShardInfo{}}, {0.1, std::nullopt});
  auto rows = TopRows(TwoShards(), &before, after);
  EXPECT_DOUBLE_EQ(rows[0].ops_per_second, 77);  // counters went back: Redis' own rate
  EXPECT_FALSE(rows[0].cpu_percent);
}

TEST(TopSortTest, NamesKeysAndOrder) {
  for (TopSort sort : {TopSort::kShard, TopSort::kOps, TopSort::kMemory, TopSort::kCpu,
                       TopSort::kClients, TopSort::kHits}) {
    EXPECT_EQ(ParseTopSort(TopSortName(sort)), sort);
  }
  EXPECT_EQ(ParseTopSort("memory"), std::nullopt);
  EXPECT_EQ(TopSortForKey('m'), TopSort::kMemory);
  EXPECT_EQ(TopSortForKey('l'), TopSort::kClients);
  EXPECT_EQ(TopSortForKey('x'), std::nullopt);

  std::vector<TopRow> rows(3);
  for (int i = 0; i < 3; ++i) rows[i].shard = i;
  rows[0].ops_per_second = 5;
  rows[1].ops_per_second = 50;
  rows[2].ops_per_second = 50;
  rows[2].used_memory = 9;
  SortTopRows(rows, TopSort::kOps);
  EXPECT_EQ((std::vector<int>{rows[0].shard, rows[1].shard, rows[2].shard}),
            (std::vector<int>{1, 2, 0}));  // busiest first, ties by shard
  SortTopRows(rows, TopSort::kMemory);
  EXPECT_EQ(rows[0].shard, 2);
  SortTopRows(rows, TopSort::kShard);
  EXPECT_EQ((std::vector<int>{rows[0].shard, rows[1].shard, rows[2].shard}),
            (std::vector<int>{0, 1, 2}));
}

TEST(TopViewTest, TableAndHeadline) {
  const auto t0 = std::chrono::steady_clock::time_point(100s);
  TopSample first = Sample(t0, {Answering(1'000, 10, 0), ShardInfo{}}, {1.0, 0.5});
  TopSample second = Sample(t0 + 1s, {Answering(13'345, 10, 0), ShardInfo{}}, {1.25, 0.5});
  auto rows = TopRows(TwoShards(), &first, second);
  auto table = TopTable(rows);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_TRUE(table[0].starts_with("SHARD  PORT  ROLE     OPS/S  HIT%  MEMORY  CAP  MEM%"))
      << table[0];
  EXPECT_NE(table[1].find("0      7000  primary  12.3k  -     1mb     4mb  25.0  5        25.0  "
                          "1.5ms, saved 3m ago"),
            std::string::npos)
      << table[1];
  EXPECT_TRUE(table[2].starts_with("1      7001  DOWN     -")) << table[2];
  EXPECT_EQ(TopHeadline("main", rows, TopSort::kOps, false),
            "shardctl top: \"main\", 2 shards (1 DOWN), 12.3k ops/s, sorted by ops");
  EXPECT_NE(TopHeadline("main", rows, TopSort::kCpu, true).find("q quits"), std::string::npos);
}

TEST(TopViewTest, RatesAndAges) {
  EXPECT_EQ(FormatRate(0), "0");
  EXPECT_EQ(FormatRate(999.4), "999");
  EXPECT_EQ(FormatRate(12'345), "12.3k");
  EXPECT_EQ(FormatRate(2'500'000), "2.5M");
  EXPECT_EQ(FormatAge(45), "45s");
  EXPECT_EQ(FormatAge(180), "3m");
  EXPECT_EQ(FormatAge(7'200), "2h");
  EXPECT_EQ(FormatAge(172'800), "2d");
}

TEST(FullScreenFrameTest, RedrawsInPlaceWithinTheScreen) {
  const std::string frame =
      FullScreenFrame({"header", "a line longer than ten", "third"}, {.columns = 11, .rows = 2});
  EXPECT_EQ(frame, "\x1b[Hheader\x1b[K\r\na line lon\x1b[K\x1b[J");
}

TEST(ProgressTest, OneLineWithCountsAndElapsedTime) {
  EXPECT_EQ(FormatProgress("forming the cluster", 0, 0, 2'345ms, 80),
            "shardctl: forming the cluster 2.3s");
  EXPECT_EQ(FormatProgress("saved", 12, 40, 1'000ms, 80), "shardctl: saved (12/40) 1.0s");
  EXPECT_EQ(FormatProgress("a long message", 0, 0, 0ms, 12), "shardctl: a");
}

TEST(ProgressTest, SilentWhenDisabledOrTooEarly) {
  char buffer[256] = {};
  std::FILE* out = fmemopen(buffer, sizeof buffer, "w");
  ASSERT_NE(out, nullptr);
  {
    ProgressDisplay disabled(false, out, 0ms);
    disabled.Show("nothing");
    ProgressDisplay early(true, out, std::chrono::hours(1));
    early.Show("not yet");
    early.Tick();
  }
  std::fflush(out);
  EXPECT_EQ(std::string(buffer), "");
  {
    ProgressDisplay shown(true, out, 0ms);
    shown.Show("now", 1, 2);
  }  // cleared when it goes
  std::fclose(out);
  const std::string text(buffer);
  EXPECT_TRUE(text.starts_with("\r\x1b[Kshardctl: now (1/2) 0.0s")) << text;
  EXPECT_TRUE(text.ends_with("\r\x1b[K")) << text;
}

TEST(TopArgsTest, FlagsAndTheirErrors) {
  auto parsed = ParseArgs({"top", "--interval", "250ms", "--sort", "mem", "--count", "3"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->interval, 250ms);
  EXPECT_EQ(parsed->sort, "mem");
  EXPECT_EQ(parsed->count, 3);
  auto defaults = ParseArgs({"top"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->interval, 1s);
  EXPECT_EQ(defaults->sort, "ops");
  EXPECT_EQ(defaults->count, 0);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"top", "--interval", "10ms"},
       "--interval: \"10ms\" is not a duration of at least 100ms (e.g. 1s)"},
      {{"top", "--sort", "memory"},
       "--sort: \"memory\" is not a sort key (use shard, ops, mem, cpu, clients or hits)"},
      {{"top", "--count", "0"}, "--count: \"0\" is not a number of refreshes (e.g. 5)"},
      {{"status", "--interval", "1s"}, "--interval does not apply to status"},
  };
  for (const auto& [args, error] : bad) {
    auto result = ParseArgs(args);
    ASSERT_FALSE(result.ok()) << args[1];
    EXPECT_EQ(result.error().message().rfind(error, 0), 0u) << result.error().message();
  }
}

}  // namespace
}  // namespace shardctl::launcher
