#include <gtest/gtest.h>

#include <string>

#include "launcher/bench/report.h"

namespace shardctl::launcher {
namespace {

LoadResult TwoPhases() {
  LoadResult result;
  result.phases.resize(2);
  result.phases[0].name = "set";
  result.phases[0].ops = 1000;
  result.phases[0].seconds = 0.5;
  for (int i = 1; i <= 1000; ++i) result.phases[0].latency.Record(i * 1000);  // 1..1000 us
  result.phases[1].name = "get";
  result.phases[1].ops = 3000;
  result.phases[1].errors = 2;
  result.phases[1].hits = 2500;
  result.phases[1].misses = 500;
  result.phases[1].seconds = 1.5;
  for (int i = 0; i < 3000; ++i) result.phases[1].latency.Record(2000000);  // 2 ms
  result.per_second = {1800, 2200};
  result.moved = 3;
  result.first_error = "ERR something";
  result.seconds = 2;
  return result;
}

TEST(BenchReportTest, JsonHasTheDocumentedFields) {
  auto options = ParseBenchArgs({"run", "--port", "7000", "--rate", "2k"});
  ASSERT_TRUE(options.ok());
  nlohmann::json json = BenchJson(*options, TwoPhases());
  EXPECT_EQ(json["ops"], 4000);
  EXPECT_EQ(json["ops_per_sec"], 2000);
  EXPECT_EQ(json["errors"], 2);
  EXPECT_EQ(json["hits"], 2500);
  EXPECT_EQ(json["misses"], 500);
  EXPECT_EQ(json["per_second"], nlohmann::json({1800, 2200}));
  EXPECT_EQ(json["moved"], 3);
  EXPECT_EQ(json["asked"], 0);
  EXPECT_EQ(json["first_error"], "ERR something");
  EXPECT_EQ(json["interrupted"], false);
  const auto& latency = json["latency_us"];
  for (const char* field : {"p50", "p90", "p99", "p99_9", "max", "mean"}) {
    EXPECT_TRUE(latency.contains(field)) << field;
  }
  EXPECT_NEAR(latency["p50"].get<double>(), 2000, 20);  // 3000 of 4000 at 2 ms
  EXPECT_NEAR(latency["max"].get<double>(), 2000, 20);
  ASSERT_EQ(json["phases"].size(), 2u);
  EXPECT_EQ(json["phases"][0]["name"], "set");
  EXPECT_EQ(json["phases"][0]["ops_per_sec"], 2000);
  EXPECT_NEAR(json["phases"][0]["latency_us"]["p50"].get<double>(), 500, 5);
  EXPECT_EQ(json["phases"][1]["ops_per_sec"], 2000);
  const auto& settings = json["settings"];
  EXPECT_EQ(settings["target"], "127.0.0.1:7000");
  EXPECT_EQ(settings["connections"], 50);
  EXPECT_EQ(settings["pipeline"], 1);
  EXPECT_EQ(settings["workload"], "custom");
  EXPECT_EQ(settings["rate"], 2000);
  EXPECT_TRUE(settings["rate_profile"].is_null());
  EXPECT_EQ(settings["duration_ms"], 10000);
}

TEST(BenchReportTest, TextSummarises) {
  auto options = ParseBenchArgs({"run", "--workload", "set-then-get"});
  ASSERT_TRUE(options.ok());
  std::string text = BenchText(*options, TwoPhases());
  for (const char* part : {"set-then-get", "4000 ops in 2.00 s: 2000 ops/s", "2 errors", "p99 ",
                           "  set ", "  get ", "3 MOVED", "first error: ERR something"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " missing from:\n" << text;
  }
}

TEST(BenchReportTest, ProgressLineShowsTimeLeft) {
  auto options = ParseBenchArgs({"run", "--duration", "10s"});
  ASSERT_TRUE(options.ok());
  std::string line =
      ProgressLine({.elapsed_seconds = 3, .ops = 52314, .p99_ns = 1230000}, *options);
  EXPECT_NE(line.find("52314 ops/s"), std::string::npos) << line;
  EXPECT_NE(line.find("p99 1.230 ms"), std::string::npos) << line;
  EXPECT_NE(line.find("7s left"), std::string::npos) << line;
}

}  // namespace
}  // namespace shardctl::launcher
