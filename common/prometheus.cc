#include "common/prometheus.h"

#include <charconv>
#include <cmath>

namespace shardctl::common {
namespace {

std::string_view TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      break;
  }
  return "histogram";
}

std::string Escape(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) { return Escape(value, /*quotes=*/true); }

std::string EscapeHelp(std::string_view help) { return Escape(help, /*quotes=*/false); }

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Whole numbers up to 2^53 are exact in a double: print them as integers.
  if (value == std::floor(value) && std::fabs(value) < 9007199254740992.0) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[64];
  // Plain decimals ("0.0001", not "1e-04"): le="..." labels are matched as text in queries.
  const bool plain = std::fabs(value) >= 1e-6 && std::fabs(value) < 1e15;
  auto [end, error] =
      plain ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
            : std::to_chars(buffer, buffer + sizeof buffer, value);
  if (error != std::errc()) return "NaN";
  return std::string(buffer, end);
}

void MetricsWriter::Family(std::string_view name, MetricType type, std::string_view help) {
  family_.assign(name);
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += EscapeHelp(help);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += TypeName(type);
  text_ += '\n';
}

void MetricsWriter::Line(std::string_view suffix, const MetricLabels& labels,
                         std::string_view extra_name, std::string_view extra_value,
                         std::string_view value) {
  text_ += family_;
  text_ += suffix;
  if (!labels.empty() || !extra_name.empty()) {
    text_ += '{';
    bool first = true;
    auto label = [&](std::string_view name, std::string_view escaped) {
      if (!first) text_ += ',';
      first = false;
      text_ += name;
      text_ += "=\"";
      text_ += escaped;
      text_ += '"';
    };
    for (const auto& [name, label_value] : labels) label(name, EscapeLabelValue(label_value));
    if (!extra_name.empty()) label(extra_name, extra_value);
    text_ += '}';
  }
  text_ += ' ';
  text_ += value;
  text_ += '\n';
}

void MetricsWriter::Sample(const MetricLabels& labels, double value) {
  Line("", labels, "", "", FormatMetricValue(value));
}

void MetricsWriter::Histogram(const MetricLabels& labels, std::span<const double> bounds,
                              std::span<const uint64_t> counts, double sum) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    Line("_bucket", labels, "le", FormatMetricValue(bounds[i]),
         FormatMetricValue(static_cast<double>(cumulative)));
  }
  if (counts.size() > bounds.size()) cumulative += counts[bounds.size()];
  Line("_bucket", labels, "le", "+Inf", FormatMetricValue(static_cast<double>(cumulative)));
  Line("_sum", labels, "", "", FormatMetricValue(sum));
  Line("_count", labels, "", "", FormatMetricValue(static_cast<double>(cumulative)));
}

}  // namespace shardctl::common
