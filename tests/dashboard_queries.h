// The queries of the Grafana dashboard shipped in packaging/grafana/shardctl.json, read the way
// Grafana reads them: every panel target's PromQL and every query variable's selector, with the
// dashboard's variables replaced by concrete values. Used by tests/unit/dashboard_test.cc (the
// metric names exist in the code) and tests/integration/dashboard_test.cc (each query returns data
// from Debian's prometheus scraping a live deployment). Header-only: both test programs include
// it and neither links the other's sources.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace shardctl::testing_dashboard {

// Variables Grafana itself defines; the dashboard may use them without declaring them.
inline const std::set<std::string> kGrafanaVariables = {"__rate_interval", "__interval", "__range"};

inline std::filesystem::path DashboardPath(const std::filesystem::path& source_dir) {
  return source_dir / "packaging" / "grafana" / "shardctl.json";
}

// One query: where it is ("panel \"CPU by shard\" target A", "variable shard") and its PromQL.
struct DashboardQuery {
  std::string where;
  std::string expr;
};

inline void CollectPanelQueries(const nlohmann::json& panels, std::vector<DashboardQuery>& out) {
  for (const auto& panel : panels) {
    if (panel.contains("panels")) CollectPanelQueries(panel["panels"], out);  // collapsed rows
    for (const auto& target : panel.value("targets", nlohmann::json::array())) {
      out.push_back(
          {"panel \"" + panel.value("title", "") + "\" target " + target.value("refId", "?"),
           target.value("expr", "")});
    }
  }
}

// Every panel target, then every query variable: `label_values(SELECTOR, label)` asks Prometheus
// for SELECTOR's series, so SELECTOR is the query (label_values(label) alone has none).
inline std::vector<DashboardQuery> DashboardQueries(const nlohmann::json& dashboard) {
  std::vector<DashboardQuery> out;
  CollectPanelQueries(dashboard.value("panels", nlohmann::json::array()), out);
  static const std::regex kLabelValues(R"(^\s*label_values\((.+),\s*\w+\)\s*$)");
  for (const auto& variable : dashboard["templating"].value("list", nlohmann::json::array())) {
    if (variable.value("type", "") != "query") continue;
    std::smatch match;
    const std::string definition = variable.value("definition", "");
    if (std::regex_match(definition, match, kLabelValues)) {
      out.push_back({"variable " + variable.value("name", ""), match[1].str()});
    }
  }
  return out;
}

// The names of the variables `expr` uses ($name, ${name}, ${name:format}, [[name]]).
inline std::set<std::string> VariablesIn(const std::string& expr) {
  static const std::regex kVariable(R"(\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\])");
  std::set<std::string> names;
  for (std::sregex_iterator it(expr.begin(), expr.end(), kVariable), end; it != end; ++it) {
    for (int group = 1; group <= 3; ++group) {
      if ((*it)[group].matched) names.insert((*it)[group].str());
    }
  }
  return names;
}

// `expr` with each variable replaced by values.at(name); a variable without a value stays as it
// is (callers check VariablesIn first).
inline std::string SubstituteVariables(const std::string& expr,
                                       const std::map<std::string, std::string>& values) {
  static const std::regex kVariable(R"(\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\])");
  std::string out;
  auto last = expr.cbegin();
  for (std::sregex_iterator it(expr.begin(), expr.end(), kVariable), end; it != end; ++it) {
    const std::smatch& match = *it;
    std::string name;
    for (int group = 1; group <= 3 && name.empty(); ++group) name = match[group].str();
    out.append(last, match[0].first);
    auto value = values.find(name);
    out += value == values.end() ? match[0].str() : value->second;
    last = match[0].second;
  }
  out.append(last, expr.cend());
  return out;
}

// The metric names `expr` reads: ours and redis_exporter's all start with one of three prefixes.
inline std::set<std::string> MetricNamesIn(const std::string& expr) {
  static const std::regex kName(R"(\b(?:redis|shardctl|shardproxy)_[A-Za-z0-9_]+)");
  std::set<std::string> names;
  for (std::sregex_iterator it(expr.begin(), expr.end(), kName), end; it != end; ++it) {
    names.insert(it->str());
  }
  return names;
}

// The family a sample name belongs to: a histogram's _bucket, _sum and _count series are
// written under the family's own name.
inline std::string FamilyOf(const std::string& name) {
  for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      return name.substr(0, name.size() - suffix.size());
    }
  }
  return name;
}

}  // namespace shardctl::testing_dashboard
