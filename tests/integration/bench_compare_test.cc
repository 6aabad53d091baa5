// `shardctl bench compare` end to end: the real binary runs a single redis-server, a 2-shard
// `shardctl up` cluster and the same cluster through shardproxy, with tiny settings, and writes
// the report. Checks the files, the numbers and that nothing it started is left.
#include <cstring>
#include <fstream>
#include <sstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class BenchCompareTest : public ShardctlTest {};

std::vector<std::vector<std::string>> ReadCsv(const std::filesystem::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream file(path);
  std::string line;
  for (int i = 0; i < 100000 && std::getline(file, line); ++i) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, ',')) fields.push_back(field);
    if (!line.empty() && line.back() == ',') fields.push_back("");
    rows.push_back(fields);
  }
  return rows;
}

TEST_F(BenchCompareTest, SingleClusterAndProxyReport) {
  std::filesystem::path out = scratch_dir() / "report";
  int base = base_port();
  auto result = Shardctl({"bench",
                          "compare",
                          "--cpus",
                          "0-1",
                          "--engines",
                          "redis",
                          "--io-threads",
                          "1",
                          "--shards",
                          "2",
                          "--steps",
                          "single,cluster,proxy",
                          "--workload",
                          "mixed-80-20",
                          "--scale",
                          "0.0005",
                          "--duration",
                          "1s",
                          "--connections",
                          "4",
                          "--key-distribution",
                          "hotkeys:1:60",
                          "--base-port",
                          std::to_string(base),
                          "--out",
                          out.string()},
                         180s);
  ASSERT_EQ(result.exit_code, 0) << result.Describe();

  std::string index = ReadFileText(out / "index.md");
  for (const char* label :
       {"| single | redis | 1 | 1 | uniform |", "| cluster | redis | 1 | 2 | uniform |",
        "| proxy | redis | 1 | 2 | uniform |", "| single | redis | 1 | 1 | hotkeys:1:60 |",
        "| cluster | redis | 1 | 2 | hotkeys:1:60 |", "| proxy | redis | 1 | 2 | hotkeys:1:60 |"}) {
    size_t row = index.find(label);
    ASSERT_NE(row, std::string::npos) << label << "\n" << index;
    std::string rest = index.substr(row + std::string(label).size());
    EXPECT_GT(std::stod(rest.substr(1, rest.find('|') - 1)), 0) << label;
  }
  EXPECT_NE(index.find("Pinning:"), std::string::npos);
  EXPECT_NE(index.find("shardctl up --name bench-compare"), std::string::npos);

  auto summary = ReadCsv(out / "summary.csv");
  ASSERT_EQ(summary.size(), 7u);
  EXPECT_EQ(summary[0][5], "ops_per_sec");
  EXPECT_EQ(summary[0][14], "busiest_primary_load");
  for (size_t i = 1; i < summary.size(); ++i) {
    ASSERT_EQ(summary[i].size(), 15u) << i;
    // Uniform first, then the same configuration with one key taking 60% of requests.
    EXPECT_EQ(summary[i][13], i % 2 == 1 ? "uniform" : "hotkeys:1:60") << summary[i][4];
    if (summary[i][0] == "single") {
      EXPECT_EQ(summary[i][14], "") << summary[i][4];
    } else {
      // From the primaries' own counters: the hot key's primary serves at least 60% + 20%.
      ASSERT_FALSE(summary[i][14].empty()) << summary[i][4];
      EXPECT_GE(std::stod(summary[i][14]), i % 2 == 1 ? 0.99 : 1.4) << summary[i][4];
      if (i % 2 == 1) {
        EXPECT_LT(std::stod(summary[i][14]), 1.25) << summary[i][4];
      }
    }
    EXPECT_GT(std::stod(summary[i][5]), 0) << summary[i][4];
    EXPECT_GT(std::stod(summary[i][7]), 0) << summary[i][4];
    // Server CPU per request, read from the server processes; the proxy's part on its run only.
    ASSERT_FALSE(summary[i][10].empty()) << summary[i][4];
    EXPECT_GT(std::stod(summary[i][10]), 0) << summary[i][4];
    if (summary[i][0] == "proxy") {
      ASSERT_FALSE(summary[i][11].empty()) << summary[i][4];
      EXPECT_LE(std::stod(summary[i][11]), std::stod(summary[i][10])) << summary[i][4];
    } else {
      EXPECT_EQ(summary[i][11], "") << summary[i][4];
    }
    EXPECT_EQ(summary[i][12], "") << summary[i][4];
  }
  auto timeline = ReadCsv(out / "timeline.csv");
  ASSERT_GE(timeline.size(), 2u);
  EXPECT_EQ(timeline[0].size(), 4u);

  bool gnuplot = RunCommand({"sh", "-c", "command -v gnuplot"}, 10s).exit_code == 0;
  for (const char* png : {"throughput.png", "latency.png", "timeline.png"}) {
    if (gnuplot) {
      EXPECT_TRUE(std::filesystem::exists(out / png)) << png;
    }
    EXPECT_TRUE(std::filesystem::exists(out / (std::string(png, std::strlen(png) - 4) + ".gp")));
  }

  // Nothing left: every port it used is free again.
  for (int port :
       {base, base + 1, base + 2, base + 3, base + 1 + kBusPortOffset, base + 2 + kBusPortOffset}) {
    EXPECT_TRUE(WaitUntil([&] { return PortBindable(port); }, 10s)) << "port " << port;
  }
  ExpectNothingRunning("after bench compare");
}

TEST_F(BenchCompareTest, DryRunStartsNothingAndUsageErrorsExit2) {
  auto dry = Shardctl({"bench", "compare", "--cpus", "0", "--out", (scratch_dir() / "r").string(),
                       "--dry-run", "--base-port", std::to_string(base_port())},
                      30s);
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_NE(dry.out.find("1. redis single io-threads=1"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("redis proxy 1 shard"), std::string::npos) << dry.out;
  EXPECT_FALSE(std::filesystem::exists(scratch_dir() / "r"));
  auto bad = Shardctl({"bench", "compare", "--out", "r"}, 30s);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "shardctl: bench compare: --cpus is required (the server cores, e.g. --cpus 0-1)\n");
}

}  // namespace
}  // namespace shardctl::integration
