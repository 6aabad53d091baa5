// common/prometheus.h and common/http.h: the text format both /metrics endpoints write, and the
// request handling they share.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/http.h"
#include "common/prometheus.h"

namespace shardctl::common {
namespace {

struct EscapeCase {
  std::string raw;
  std::string label;
  std::string help;
};

TEST(PrometheusEscapeTest, LabelValuesAndHelp) {
  const std::vector<EscapeCase> cases = {
      {"plain", "plain", "plain"},
      {"a\"b", "a\\\"b", "a\"b"},
      {"back\\slash", "back\\\\slash", "back\\\\slash"},
      {"two\nlines", "two\\nlines", "two\\nlines"},
      {"", "", ""},
      {"127.0.0.1:7000", "127.0.0.1:7000", "127.0.0.1:7000"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(EscapeLabelValue(c.raw), c.label) << c.raw;
    EXPECT_EQ(EscapeHelp(c.raw), c.help) << c.raw;
  }
}

TEST(PrometheusValueTest, WholeNumbersFractionsAndSpecials) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "0"},
      {42, "42"},
      {-3, "-3"},
      {1e15, "1000000000000000"},
      {0.25, "0.25"},
      {0.001, "0.001"},
      {0.0001, "0.0001"},
      {0.0005, "0.0005"},
      {0.00025, "0.00025"},
      {1e-9, "1e-09"},
      {1.5, "1.5"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(FormatMetricValue(value), text) << text;
}

TEST(MetricsWriterTest, HelpAndTypeThenSamples) {
  MetricsWriter out;
  out.Family("redis_up", MetricType::kGauge, "1 when the shard answered.");
  out.Sample({{"shard", "0"}, {"port", "7000"}}, 1);
  out.Sample({{"shard", "1"}, {"port", "7001"}}, 0);
  out.Family("shardctl_slot_moves_in_progress", MetricType::kGauge, "Slots\nmoving.");
  out.Sample({}, 0);
  out.Family("redis_commands_processed_total", MetricType::kCounter, "Commands.");
  out.Sample({{"role", "a\"b"}}, 12);
  EXPECT_EQ(out.text(),
            "# HELP redis_up 1 when the shard answered.\n"
            "# TYPE redis_up gauge\n"
            "redis_up{shard=\"0\",port=\"7000\"} 1\n"
            "redis_up{shard=\"1\",port=\"7001\"} 0\n"
            "# HELP shardctl_slot_moves_in_progress Slots\\nmoving.\n"
            "# TYPE shardctl_slot_moves_in_progress gauge\n"
            "shardctl_slot_moves_in_progress 0\n"
            "# HELP redis_commands_processed_total Commands.\n"
            "# TYPE redis_commands_processed_total counter\n"
            "redis_commands_processed_total{role=\"a\\\"b\"} 12\n");
}

TEST(MetricsWriterTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsWriter out;
  out.Family("shardproxy_command_duration_seconds", MetricType::kHistogram, "Latency.");
  const double bounds[] = {0.001, 0.01};
  const uint64_t counts[] = {3, 2, 1};  // <= 1ms, <= 10ms, above
  out.Histogram({{"cmd", "get"}}, bounds, counts, 0.125);
  EXPECT_EQ(out.text(),
            "# HELP shardproxy_command_duration_seconds Latency.\n"
            "# TYPE shardproxy_command_duration_seconds histogram\n"
            "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"0.001\"} 3\n"
            "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"0.01\"} 5\n"
            "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"+Inf\"} 6\n"
            "shardproxy_command_duration_seconds_sum{cmd=\"get\"} 0.125\n"
            "shardproxy_command_duration_seconds_count{cmd=\"get\"} 6\n");
}

TEST(MetricsWriterTest, HistogramWithoutLabels) {
  MetricsWriter out;
  out.Family("h", MetricType::kHistogram, "H.");
  const double bounds[] = {1};
  const uint64_t counts[] = {0, 0};
  out.Histogram({}, bounds, counts, 0);
  EXPECT_NE(out.text().find("h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"),
            std::string::npos)
      << out.text();
}

struct HttpCase {
  std::string request;
  std::string status_line;
};

TEST(MetricsRequestTest, AnswersGetMetricsOnlyAndClosesAlways) {
  const std::vector<HttpCase> cases = {
      {"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK"},
      {"GET /metrics?name[]=up HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK"},
      {"GET /metrics HTTP/1.0\n\n", "HTTP/1.1 200 OK"},
      {"GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"},
      {"GET /metricsx HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"},
      {"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"},
      {"HEAD /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed"},
      {"GET /metrics\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"*3\r\n$3\r\nSET\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"get /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"},
      {"GET /metrics SPDY/3\r\n\r\n", "HTTP/1.1 400 Bad Request"},
  };
  for (const auto& c : cases) {
    MetricsRequest request;
    ASSERT_NE(request.Feed(c.request), MetricsRequest::State::kIncomplete) << c.request;
    bool asked = false;
    std::string response = MetricsResponse(request, [&] {
      asked = true;
      return std::string("up 1\n");
    });
    EXPECT_TRUE(response.starts_with(c.status_line + "\r\n")) << c.request << "\n" << response;
    EXPECT_NE(response.find("\r\nConnection: close\r\n"), std::string::npos) << response;
    EXPECT_EQ(asked, c.status_line.ends_with("200 OK")) << c.request;
  }
}

TEST(MetricsRequestTest, BodyWithLengthAndContentType) {
  MetricsRequest request;
  request.Feed("GET /metrics HTTP/1.1\r\n\r\n");
  std::string response = MetricsResponse(request, [] { return std::string("up 1\n"); });
  EXPECT_EQ(response,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 5\r\n"
            "Connection: close\r\n\r\n"
            "up 1\n");
}

TEST(MetricsRequestTest, FedOneByteAtATime) {
  const std::string text = "GET /metrics HTTP/1.1\r\nUser-Agent: Prometheus/2.42\r\n\r\n";
  MetricsRequest request;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    ASSERT_EQ(request.Feed(text.substr(i, 1)), MetricsRequest::State::kIncomplete) << i;
  }
  EXPECT_EQ(request.Feed(text.substr(text.size() - 1)), MetricsRequest::State::kComplete);
  EXPECT_EQ(request.method(), "GET");
  EXPECT_EQ(request.target(), "/metrics");
  // Bytes after the head (a pipelined second request) change nothing.
  EXPECT_EQ(request.Feed("GET / HTTP/1.1\r\n\r\n"), MetricsRequest::State::kComplete);
  EXPECT_EQ(request.target(), "/metrics");
}

TEST(MetricsRequestTest, HeadLargerThanTheLimitIsRefused) {
  MetricsRequest request;
  const std::string header = "X-Filler: " + std::string(1000, 'x') + "\r\n";
  EXPECT_EQ(request.Feed("GET /metrics HTTP/1.1\r\n"), MetricsRequest::State::kIncomplete);
  MetricsRequest::State state = MetricsRequest::State::kIncomplete;
  for (int i = 0; i < 20 && state == MetricsRequest::State::kIncomplete; ++i) {
    state = request.Feed(header);
  }
  EXPECT_EQ(state, MetricsRequest::State::kTooLarge);
  std::string response = MetricsResponse(request, [] { return std::string(); });
  EXPECT_TRUE(response.starts_with("HTTP/1.1 431 ")) << response;
}

}  // namespace
}  // namespace shardctl::common
