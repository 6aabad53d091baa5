// The Grafana dashboard (packaging/grafana/shardctl.json) as a file: it parses, every panel has a
// query on the dashboard's datasource variable and fits the 24-column grid, every variable a query
// uses is defined, and every metric it reads is one the supervisor or shardproxy writes (found as
// a string literal in their sources).
// Whether the queries return data is tests/integration/dashboard_test.cc.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/dashboard_queries.h"

namespace shardctl::testing_dashboard {
namespace {

using nlohmann::json;

json LoadDashboard() {
  std::ifstream in(DashboardPath(SHARDCTL_SOURCE_DIR));
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// The text of every .cc file of the programs that write /metrics.
std::string ExporterSources() {
  std::string text;
  for (const char* folder : {"launcher", "proxy"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(SHARDCTL_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".cc") continue;
      std::ifstream in(entry.path());
      text += std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  return text;
}

TEST(DashboardTest, ParsesAndEveryPanelHasAQueryOnTheDatasourceVariable) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object()) << DashboardPath(SHARDCTL_SOURCE_DIR);
  EXPECT_EQ(dashboard.value("uid", ""), "shardctl-deployment");
  std::set<int> ids;
  int queried = 0;
  for (const auto& panel : dashboard["panels"]) {
    const std::string title = panel.value("title", "");
    EXPECT_TRUE(ids.insert(panel.value("id", -1)).second) << "duplicate id: " << title;
    const json& grid = panel["gridPos"];
    EXPECT_LE(grid.value("x", 99) + grid.value("w", 99), 24) << title;
    if (panel.value("type", "") == "row") continue;
    EXPECT_EQ(panel["datasource"].value("uid", ""), "${datasource}") << title;
    ASSERT_FALSE(panel.value("targets", json::array()).empty()) << title;
    for (const auto& target : panel["targets"]) {
      EXPECT_FALSE(target.value("expr", "").empty()) << title;
      EXPECT_EQ(target["datasource"].value("uid", ""), "${datasource}") << title;
    }
    ++queried;
  }
  EXPECT_GE(queried, 40) << "panels with queries";
}

TEST(DashboardTest, EveryVariableUsedIsDefined) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object());
  std::set<std::string> defined = kGrafanaVariables;
  for (const auto& variable : dashboard["templating"]["list"]) defined.insert(variable["name"]);
  for (const auto& query : DashboardQueries(dashboard)) {
    for (const std::string& name : VariablesIn(query.expr)) {
      EXPECT_TRUE(defined.contains(name)) << query.where << " uses $" << name << ": " << query.expr;
    }
  }
}

TEST(DashboardTest, EveryMetricReadIsWrittenByTheCode) {
  const json dashboard = LoadDashboard();
  ASSERT_TRUE(dashboard.is_object());
  const std::string sources = ExporterSources();
  std::set<std::string> read;
  for (const auto& query : DashboardQueries(dashboard)) {
    const std::set<std::string> names = MetricNamesIn(query.expr);
    EXPECT_FALSE(names.empty()) << query.where << " reads no metric: " << query.expr;
    read.insert(names.begin(), names.end());
  }
  for (const std::string& name : read) {
    const bool written = sources.find('"' + name + '"') != std::string::npos ||
                         sources.find('"' + FamilyOf(name) + '"') != std::string::npos;
    EXPECT_TRUE(written) << name << ": no \"" << name
                         << "\" in launcher/ or proxy/ (a typo, or a metric to add)";
  }
  // The panels the issue names are there: per shard, NUMA node, host, forks, moves, latency.
  for (const char* name :
       {"redis_commands_processed_total", "redis_memory_max_bytes", "shardctl_shard_info",
        "shardctl_forks_in_progress", "shardctl_slot_moves_in_progress",
        "shardproxy_command_duration_seconds_bucket"}) {
    EXPECT_TRUE(read.contains(name)) << name;
  }
}

TEST(DashboardTest, SubstitutesEveryVariableForm) {
  const std::map<std::string, std::string> values = {{"instance", "h:1"},
                                                     {"__rate_interval", "5s"}};
  EXPECT_EQ(SubstituteVariables(R"(rate(x{i=~"$instance"}[$__rate_interval]))", values),
            R"(rate(x{i=~"h:1"}[5s]))");
  EXPECT_EQ(SubstituteVariables("${instance} [[instance]] ${instance:regex} $other", values),
            "h:1 h:1 h:1 $other");
  EXPECT_EQ(VariablesIn("${a:csv} $b [[c]] d"), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(FamilyOf("shardproxy_command_duration_seconds_bucket"),
            "shardproxy_command_duration_seconds");
}

}  // namespace
}  // namespace shardctl::testing_dashboard
