// `bench compare` flags and the plan of runs: pure, no processes.
#include <gtest/gtest.h>

#include <algorithm>

#include "launcher/bench/compare.h"

namespace shardctl::launcher {
namespace {

CompareOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "compare");
  auto options = ParseCompareArgs(args);
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().message());
  return options.ok() ? *options : CompareOptions{};
}

std::string ParseError(std::vector<std::string> args) {
  args.insert(args.begin(), "compare");
  auto options = ParseCompareArgs(args);
  return options.ok() ? "" : options.error().message();
}

TEST(BenchCompareArgsTest, Defaults) {
  CompareOptions options = Parse({"--cpus", "0-1", "--out", "report/"});
  EXPECT_EQ(options.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(options.engines, (std::vector<std::string>{"redis"}));
  EXPECT_EQ(options.io_threads, (std::vector<int>{1, 2}));
  EXPECT_EQ(options.shards, 2);
  EXPECT_EQ(options.steps.size(), 3u);
  EXPECT_EQ(options.base_port, 12700);
  EXPECT_FALSE(options.dry_run);
}

TEST(BenchCompareArgsTest, EveryFlag) {
  CompareOptions options =
      Parse({"--cpus=0",     "--loadgen-cpus", "1",          "--engines",   "valkey,redis,valkey",
             "--io-threads", "1,2,4",          "--shards",   "3",           "--steps",
             "proxy,single", "--base-port",    "13000",      "--out",       "r",
             "--json",       "--dry-run",      "--workload", "mixed-80-20", "--scale",
             "0.001",        "--duration",     "5s",         "--rate",      "10k"});
  EXPECT_EQ(options.loadgen_cpus, (std::vector<int>{1}));
  EXPECT_EQ(options.engines, (std::vector<std::string>{"valkey", "redis"}));
  EXPECT_EQ(options.io_threads, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(options.shards, 3);
  EXPECT_EQ(options.steps, (std::vector<CompareStep>{CompareStep::kSingle, CompareStep::kProxy}));
  EXPECT_EQ(options.base_port, 13000);
  EXPECT_TRUE(options.json);
  EXPECT_TRUE(options.dry_run);
  EXPECT_EQ(options.bench_flags,
            (std::vector<std::string>{"--workload", "mixed-80-20", "--scale", "0.001", "--duration",
                                      "5s", "--rate", "10k"}));
}

TEST(BenchCompareArgsTest, UsageErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--out", "r"}, "--cpus is required"},
      {{"--cpus", "0"}, "--out is required"},
      {{"--cpus", "0", "--out", "r", "--engines", "dragonfly"}, "--engines"},
      {{"--cpus", "0", "--out", "r", "--io-threads", "0"}, "--io-threads"},
      {{"--cpus", "0", "--out", "r", "--steps", "single,fast"}, "--steps"},
      {{"--cpus", "0", "--out", "r", "--shards", "x"}, "--shards"},
      {{"--cpus", "0", "--out", "r", "--base-port", "40000"}, "--base-port"},
      {{"--cpus", "0", "--out", "r", "--scale", "abc"}, "--scale"},
      {{"--cpus", "0", "--out", "r", "--workload", "nope"}, "nope"},
      {{"--cpus", "0", "--out", "r", "--rate", "1k", "--rate-profile", "1k:1s"}, "--rate"},
      {{"--cpus", "0", "--out", "r", "--bogus", "1"}, "unknown flag --bogus"},
      {{"--cpus", "0", "--out"}, "--out needs a value"},
      {{"--cpus", "0", "--out", "r", "--json=1"}, "--json takes no value"},
      {{"--cpus", "0", "--out", "r", "stray"}, "unexpected argument"},
      {{"--cpus", "0", "--out", "r", "--key-distribution", "zipf:0"}, "--key-distribution"},
      {{"--cpus", "0", "--out", "r", "--key-distribution", "zipf:0.99,hotkeys:8"},
       "--key-distribution"},
  };
  for (const auto& c : cases) {
    EXPECT_NE(ParseError(c.args).find(c.expected), std::string::npos)
        << testing::PrintToString(c.args) << " gave: " << ParseError(c.args);
  }
}

TEST(BenchCompareArgsTest, HelpStopsParsing) {
  auto options = ParseCompareArgs({"compare", "--help", "--bogus"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
}

std::vector<std::string> Labels(const ComparePlan& plan) {
  std::vector<std::string> labels;
  for (const auto& run : plan.runs) labels.push_back(run.label);
  return labels;
}

TEST(BenchComparePlanTest, RunsInIssueOrderPerEngine) {
  CompareOptions options =
      Parse({"--cpus", "0-1", "--out", "r", "--engines", "redis,valkey", "--io-threads", "1,4"});
  auto plan = PlanCompare(options, {0, 1, 2, 3});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Labels(*plan),
            (std::vector<std::string>{"redis single io-threads=1", "redis single io-threads=4",
                                      "redis cluster 2 shards", "redis proxy 2 shards",
                                      "valkey single io-threads=1", "valkey single io-threads=4",
                                      "valkey cluster 2 shards", "valkey proxy 2 shards"}));
  // One deployment per engine: `up` before its cluster run, `down` after its proxy run.
  EXPECT_TRUE(plan->runs[2].starts_cluster);
  EXPECT_FALSE(plan->runs[2].stops_cluster);
  EXPECT_TRUE(plan->runs[3].stops_cluster);
  EXPECT_EQ(plan->runs[0].port, 12700);
  EXPECT_EQ(plan->runs[2].port, 12701);
  EXPECT_EQ(plan->runs[3].port, 12703);
  EXPECT_EQ(plan->Ports(), (std::vector<int>{12700, 12701, 22701, 12702, 22702, 12703}));
}

// A skewed distribution runs every configuration twice, uniform first, side by side; the cluster
// and proxy runs know where their shards listen to read their command counters.
TEST(BenchComparePlanTest, SkewedKeysRunBesideUniformOnes) {
  auto plan = PlanCompare(Parse({"--cpus", "0-1", "--out", "r", "--io-threads", "1",
                                 "--key-distribution", "hotkeys:8:40"}),
                          {0, 1, 2, 3});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Labels(*plan),
            (std::vector<std::string>{
                "redis single io-threads=1 uniform", "redis single io-threads=1 hotkeys:8:40",
                "redis cluster 2 shards uniform", "redis cluster 2 shards hotkeys:8:40",
                "redis proxy 2 shards uniform", "redis proxy 2 shards hotkeys:8:40"}));
  for (size_t i = 0; i < plan->runs.size(); ++i) {
    const CompareRun& run = plan->runs[i];
    const bool skewed = i % 2 == 1;
    EXPECT_EQ(run.key_distribution, skewed ? "hotkeys:8:40" : "uniform");
    const std::string args = ShellJoin(run.bench_args);
    EXPECT_NE(args.find(skewed ? "--key-distribution hotkeys:8:40" : "--key-distribution uniform"),
              std::string::npos)
        << args;
    EXPECT_EQ(run.first_shard_port, run.step == CompareStep::kSingle ? 0 : 12701);
  }
  EXPECT_TRUE(plan->runs[2].starts_cluster);
  EXPECT_TRUE(plan->runs[5].stops_cluster);
  auto uniform = PlanCompare(
      Parse({"--cpus", "0-1", "--out", "r", "--key-distribution", "uniform"}), {0, 1, 2, 3});
  ASSERT_TRUE(uniform.ok());
  EXPECT_EQ(uniform->runs.size(), 4u);  // io-threads 1 and 2, cluster, proxy: once each
}

// A list of skewed distributions: each configuration runs uniform, then each listed one in order,
// spelled canonically; repeats and "uniform" in the list add no run.
TEST(BenchComparePlanTest, SeveralSkewedDistributionsRunInTheOrderGiven) {
  auto plan =
      PlanCompare(Parse({"--cpus", "0-1", "--out", "r", "--io-threads", "1", "--steps", "cluster",
                         "--key-distribution", "zipf:0.99,hotkeys:8:40,uniform,zipf:0.990"}),
                  {0, 1, 2, 3});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(Labels(*plan), (std::vector<std::string>{"redis cluster 2 shards uniform",
                                                     "redis cluster 2 shards zipf:0.99",
                                                     "redis cluster 2 shards hotkeys:8:40"}));
  EXPECT_TRUE(plan->runs[0].starts_cluster);
  EXPECT_TRUE(plan->runs[2].stops_cluster);
}

TEST(BenchComparePlanTest, SeparateCoresWhenTheHostHasSpare) {
  auto plan = PlanCompare(Parse({"--cpus", "0-1", "--out", "r"}), {0, 1, 2, 3});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loadgen_cpus, (std::vector<int>{2, 3}));
  EXPECT_FALSE(plan->sharing);
  const auto& args = plan->runs[0].bench_args;
  EXPECT_EQ(std::vector<std::string>(args.begin(), args.begin() + 6),
            (std::vector<std::string>{"bench", "run", "--host", "127.0.0.1", "--port", "12700"}));
  EXPECT_NE(std::ranges::find(args, "2-3"), args.end());
}

TEST(BenchComparePlanTest, SharingWhenNoCoreIsSpare) {
  auto plan = PlanCompare(Parse({"--cpus", "0-1", "--out", "r"}), {0, 1});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->loadgen_cpus, (std::vector<int>{0, 1}));
  EXPECT_TRUE(plan->sharing);
  auto given =
      PlanCompare(Parse({"--cpus", "0-1", "--loadgen-cpus", "1-2", "--out", "r"}), {0, 1, 2, 3});
  ASSERT_TRUE(given.ok());
  EXPECT_TRUE(given->sharing);
}

TEST(BenchComparePlanTest, ClusterClientAndUserFlagsWin) {
  auto plan = PlanCompare(Parse({"--cpus", "0", "--out", "r", "--steps", "cluster", "--workload",
                                 "set-then-get", "--threads", "3"}),
                          {0});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->runs.size(), 1u);
  const CompareRun& run = plan->runs[0];
  EXPECT_TRUE(run.starts_cluster && run.stops_cluster);
  EXPECT_EQ(run.shards, 1);
  EXPECT_EQ(plan->proxy_port, 0);
  EXPECT_EQ(ShellJoin(run.bench_args),
            "bench run --cluster 127.0.0.1:12701 --workload mixed-80-20 --threads 1 --cpus 0 "
            "--workload set-then-get --threads 3");
  EXPECT_EQ(ShellJoin(UpArgs(*plan, run, "/tmp/s")),
            "up --name bench-compare --state-dir /tmp/s --engine redis --shards 1 --base-port "
            "12701 --cpus 0");
}

TEST(BenchComparePlanTest, Errors) {
  auto missing = PlanCompare(Parse({"--cpus", "0-3", "--out", "r"}), {0, 1});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("CPU(s) 2,3 not available"), std::string::npos);
  auto high = PlanCompare(Parse({"--cpus", "0", "--out", "r", "--base-port", "22766"}), {0});
  ASSERT_FALSE(high.ok());
  EXPECT_NE(high.error().message().find("--base-port"), std::string::npos);
}

TEST(BenchComparePlanTest, SingleServerCommand) {
  CompareRun run{.io_threads = 4, .port = 12700};
  EXPECT_EQ(ShellJoin(SingleServerArgv(run, "/usr/bin/redis-server", "/tmp/d")),
            "/usr/bin/redis-server --port 12700 --bind 127.0.0.1 --save '' --appendonly no "
            "--dir /tmp/d --io-threads 4 --io-threads-do-reads yes");
}

}  // namespace
}  // namespace shardctl::launcher
