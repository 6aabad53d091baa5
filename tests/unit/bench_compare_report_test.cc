// `bench compare` report rendering from fake results: CSV, index.md, gnuplot scripts.
#include <gtest/gtest.h>

#include "launcher/bench/compare_report.h"

namespace shardctl::launcher {
namespace {

ComparePlan FakePlan(bool sharing) {
  return {.server_cpus = {0, 1},
          .loadgen_cpus = sharing ? std::vector<int>{0, 1} : std::vector<int>{2, 3},
          .sharing = sharing,
          .shards = 2};
}

std::vector<CompareResult> FakeResults() {
  CompareResult single{.run = {.step = CompareStep::kSingle,
                               .engine = "redis",
                               .io_threads = 2,
                               .label = "redis single io-threads=2"},
                       .ops_per_sec = 120000.4,
                       .p50_us = 250,
                       .p99_us = 1500.7,
                       .p99_9_us = 3000,
                       .server_cpu_us_per_request = 11.126,
                       .timeline = {{.second = 1, .ops = 119000, .p99_us = 1400},
                                    {.second = 2, .ops = 121000, .p99_us = 1600}},
                       .server_command = "redis-server --port 12700",
                       .bench_command = "shardctl bench run --port 12700"};
  CompareResult proxy{.run = {.step = CompareStep::kProxy,
                              .engine = "redis",
                              .shards = 2,
                              .label = "redis proxy 2 shards"},
                      .server_command = "shardctl up --proxy-port 12703",
                      .bench_command = "shardctl bench run --port 12703",
                      .failure = "cannot connect, really"};
  CompareResult proxied{.run = {.step = CompareStep::kProxy,
                                .engine = "valkey",
                                .shards = 2,
                                .label = "valkey proxy 2 shards hotkeys:8:40",
                                .key_distribution = "hotkeys:8:40"},
                        .ops_per_sec = 90000,
                        .server_cpu_us_per_request = 18.1,
                        .proxy_cpu_us_per_request = 11.9,
                        .busiest_primary_load = 1.456};
  return {single, proxy, proxied};
}

TEST(BenchCompareReportTest, SummaryCsv) {
  EXPECT_EQ(SummaryCsv(FakeResults()),
            "step,engine,io_threads,shards,label,ops_per_sec,p50_us,p99_us,p99_9_us,errors,"
            "server_cpu_us_per_request,proxy_cpu_us_per_request,failure,key_distribution,"
            "busiest_primary_load\n"
            "single,redis,2,1,redis single io-threads=2,120000,250.00,1500.70,3000.00,0,11.13,,,"
            "uniform,\n"
            "proxy,redis,1,2,redis proxy 2 shards,0,0.00,0.00,0.00,0,,,\"cannot connect, "
            "really\",uniform,\n"
            "proxy,valkey,1,2,valkey proxy 2 shards hotkeys:8:40,90000,0.00,0.00,0.00,0,18.10,"
            "11.90,,hotkeys:8:40,1.46\n");
}

TEST(BenchCompareReportTest, TimelineCsv) {
  EXPECT_EQ(TimelineCsv(FakeResults()),
            "label,second,ops,p99_us\n"
            "redis single io-threads=2,1.0,119000,1400.00\n"
            "redis single io-threads=2,2.0,121000,1600.00\n");
}

TEST(BenchCompareReportTest, IndexHasTableHostCommandsAndNotes) {
  CompareContext context{.command = "shardctl bench compare --cpus 0-1 --out r",
                         .host = "- CPU: test",
                         .notes = {"gnuplot not found: no PNG plots"}};
  std::string index = IndexMarkdown(FakePlan(true), context, FakeResults());
  for (const char* expected :
       {"shardctl bench compare --cpus 0-1 --out r", "- CPU: test", "**sharing**",
        "| single | redis | 2 | 1 | uniform | 120000 | 0.250 | 1.501 | 3.000 | 0 | 11.13 | - | - |",
        "| proxy | valkey | 1 | 2 | hotkeys:8:40 | 90000 | 0.000 | 0.000 | 0.000 | 0 | 18.10 | "
        "11.90 | 1.46 |",
        "server CPU µs/request | of it proxy | busiest primary / mean |",
        "| proxy | redis | 1 | 2 | uniform | failed: cannot connect, really |",
        "- gnuplot not found: no PNG plots", "![throughput.png](throughput.png)",
        "redis-server --port 12700", "shardctl bench run --port 12703", "summary.csv"}) {
    EXPECT_NE(index.find(expected), std::string::npos) << expected << "\n" << index;
  }
  EXPECT_NE(IndexMarkdown(FakePlan(false), context, {}).find("separate cores"), std::string::npos);
}

TEST(BenchCompareReportTest, ResultLineHasServerCpu) {
  const std::vector<CompareResult> results = FakeResults();
  const std::string single = ResultLine(results[0]);
  EXPECT_NE(single.find("server CPU 11.13 us/req"), std::string::npos) << single;
  EXPECT_EQ(single.find("proxy"), std::string::npos) << single;
  const std::string failed = ResultLine(results[1]);
  EXPECT_NE(failed.find("server CPU - us/req  FAILED: cannot connect, really"), std::string::npos)
      << failed;
  const std::string proxied = ResultLine(results[2]);
  EXPECT_NE(proxied.find("server CPU 18.10 us/req (proxy 11.90)  busiest primary 1.46x the mean"),
            std::string::npos)
      << proxied;
}

TEST(BenchCompareReportTest, BusiestPrimaryAgainstTheMean) {
  struct Case {
    std::vector<uint64_t> before;
    std::vector<uint64_t> after;
    std::optional<double> expected;
  };
  const std::vector<Case> cases = {
      {{0, 0, 0, 0}, {100, 100, 100, 100}, 1.0},
      {{10, 20, 30, 40}, {410, 120, 130, 140}, 400.0 / 175.0},  // 400 against a mean of 175
      {{0, 0}, {300, 100}, 1.5},
      {{5}, {9}, 1.0},
      {{}, {}, std::nullopt},
      {{0, 0}, {0, 0}, std::nullopt},      // nothing processed
      {{0, 0}, {10}, std::nullopt},        // counts do not pair up
      {{50, 0}, {10, 100}, std::nullopt},  // a counter went back: that primary restarted
  };
  for (const auto& c : cases) {
    const auto load = BusiestToMean(c.before, c.after);
    ASSERT_EQ(load.has_value(), c.expected.has_value());
    if (load) EXPECT_NEAR(*load, *c.expected, 1e-12);
  }
}

TEST(BenchCompareReportTest, JsonHasServerCpuPerRequest) {
  const nlohmann::json json = ResultsJson(FakePlan(true), FakeResults());
  ASSERT_EQ(json["runs"].size(), 3u);
  EXPECT_DOUBLE_EQ(json["runs"][0]["server_cpu_us_per_request"].get<double>(), 11.126);
  EXPECT_TRUE(json["runs"][0]["proxy_cpu_us_per_request"].is_null());
  EXPECT_TRUE(json["runs"][1]["server_cpu_us_per_request"].is_null());
  EXPECT_DOUBLE_EQ(json["runs"][2]["server_cpu_us_per_request"].get<double>(), 18.1);
  EXPECT_DOUBLE_EQ(json["runs"][2]["proxy_cpu_us_per_request"].get<double>(), 11.9);
  EXPECT_EQ(json["runs"][2]["step"], "proxy");
  EXPECT_EQ(json["runs"][2]["key_distribution"], "hotkeys:8:40");
  EXPECT_DOUBLE_EQ(json["runs"][2]["busiest_primary_load"].get<double>(), 1.456);
  EXPECT_TRUE(json["runs"][0]["busiest_primary_load"].is_null());
  EXPECT_EQ(json["runs"][0]["key_distribution"], "uniform");
  EXPECT_EQ(json["sharing"], true);
}

TEST(BenchCompareReportTest, PlanTextListsEveryRun) {
  std::string text = PlanText(FakePlan(false), FakeResults());
  EXPECT_NE(text.find("1. redis single io-threads=2\n   server: redis-server --port 12700\n"
                      "   client: shardctl bench run --port 12700\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2. redis proxy 2 shards"), std::string::npos);
}

TEST(BenchCompareReportTest, GnuplotScripts) {
  std::vector<std::string> labels = {"a b", "c"};
  std::string throughput = GnuplotScript("throughput.png", labels);
  EXPECT_NE(throughput.find("set output \"throughput.png\""), std::string::npos);
  EXPECT_NE(throughput.find("\"summary.csv\" using 6:xtic(5)"), std::string::npos);
  std::string latency = GnuplotScript("latency.png", labels);
  EXPECT_NE(latency.find("($7/1000)"), std::string::npos);
  EXPECT_NE(latency.find("title \"p99.9\""), std::string::npos);
  std::string timeline = GnuplotScript("timeline.png", labels);
  EXPECT_NE(timeline.find("strcol(1) eq \"a b\" ? $4/1000 : NaN) with linespoints title \"a b\""),
            std::string::npos)
      << timeline;
  EXPECT_NE(timeline.find("title \"c\"\n"), std::string::npos);
  EXPECT_EQ(PlotNames().size(), 3u);
}

}  // namespace
}  // namespace shardctl::launcher
