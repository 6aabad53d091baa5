// Prometheus' text exposition format (version 0.0.4), as the supervisor's and shardproxy's
// /metrics endpoints serve it. Pure: values in, text out.
//
//   # HELP redis_up Whether the shard answered the last poll.
//   # TYPE redis_up gauge
//   redis_up{shard="0",port="7000"} 1
//
// A family is written once, its HELP and TYPE lines first and then every sample, so the text
// passes `promtool check metrics`. Histograms get one `_bucket` line per bound (cumulative counts,
// `le="+Inf"` last), then `_sum` and `_count`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardctl::common {

// Label name and value pairs, in the order they are written. Names are ours (constants matching
// [a-zA-Z_][a-zA-Z0-9_]*); values may be anything and are escaped.
using MetricLabels = std::vector<std::pair<std::string_view, std::string>>;

enum class MetricType { kCounter, kGauge, kHistogram };

// The content type of the format, for the HTTP response.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

class MetricsWriter {
 public:
  // Starts a family: writes its # HELP and # TYPE lines. Samples written next belong to it.
  void Family(std::string_view name, MetricType type, std::string_view help);
  // One sample of the current (counter or gauge) family.
  void Sample(const MetricLabels& labels, double value);
  // One series of the current histogram family. `counts[i]` is the number of observations in
  // bucket i (not cumulative): at most bounds[i] and above bounds[i-1]; counts has one more entry
  // than bounds, the observations above the last bound. `sum` is the sum of all observations.
  void Histogram(const MetricLabels& labels, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);

  const std::string& text() const { return text_; }

 private:
  void Line(std::string_view suffix, const MetricLabels& labels, std::string_view extra_name,
            std::string_view extra_value, std::string_view value);

  std::string text_;
  std::string family_;
};

// A label value with backslash, double quote and newline escaped (\\, \", \n).
std::string EscapeLabelValue(std::string_view value);

// A HELP text with backslash and newline escaped.
std::string EscapeHelp(std::string_view help);

// A sample value: whole numbers without exponent or decimals ("42"), others in the shortest form
// that reads back exactly ("0.25"), and "NaN", "+Inf", "-Inf".
std::string FormatMetricValue(double value);

}  // namespace shardctl::common
