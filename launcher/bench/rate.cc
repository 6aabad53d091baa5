#include "launcher/bench/rate.h"

#include <cmath>
#include <cstdio>

#include "common/duration.h"
#include "common/numbers.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

Result<double> ParseRate(std::string_view text, bool allow_zero) {
  auto bad = [&](const std::string& why) {
    return Error("bad rate \"" + std::string(text) + "\": " + why +
                 " (write ops per second, e.g. 50000, 50k or 1.5m)");
  };
  if (text.empty()) return bad("empty");
  double multiplier = 1;
  std::string_view number = text;
  char last = text.back();
  if (last == 'k' || last == 'K') multiplier = 1e3;
  if (last == 'm' || last == 'M') multiplier = 1e6;
  if (multiplier != 1) number.remove_suffix(1);
  std::optional<double> parsed = common::ParseDecimal(number);
  if (!parsed) return bad("not a number");
  const double value = *parsed * multiplier;
  if (!std::isfinite(value) || value < 0 || value > 1e9) return bad("out of range 0..1000m");
  if (value == 0 && !allow_zero) return bad("must be above 0");
  return value;
}

Result<std::vector<RateStep>> ParseRateProfile(std::string_view text) {
  std::vector<RateStep> steps;
  bool any_sends = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view step =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    size_t colon = step.find(':');
    if (colon == std::string_view::npos) {
      return Error("bad rate profile step \"" + std::string(step) +
                   "\": write RATE:DURATION steps separated by commas, e.g. 50k:10s,150k:5s");
    }
    auto rate = ParseRate(step.substr(0, colon), /*allow_zero=*/true);
    if (!rate.ok()) return rate.error().Context("rate profile");
    auto duration = common::ParseDuration(step.substr(colon + 1));
    if (!duration.ok()) return duration.error().Context("rate profile");
    if (duration->count() <= 0) {
      return Error("rate profile: step \"" + std::string(step) + "\" lasts no time (e.g. 50k:10s)");
    }
    any_sends = any_sends || *rate > 0;
    steps.push_back({*rate, *duration});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (!any_sends) return Error("rate profile \"" + std::string(text) + "\" never sends");
  return steps;
}

std::string FormatRateProfile(const std::vector<RateStep>& steps) {
  std::string text;
  for (const auto& step : steps) {
    char rate[32];
    double ops = step.ops_per_sec;
    if (ops >= 1e6 && std::fmod(ops, 1e5) == 0) {
      std::snprintf(rate, sizeof rate, "%gm", ops / 1e6);
    } else if (ops >= 1e3 && std::fmod(ops, 100) == 0) {
      std::snprintf(rate, sizeof rate, "%gk", ops / 1e3);
    } else {
      std::snprintf(rate, sizeof rate, "%g", ops);
    }
    if (!text.empty()) text += ',';
    text.append(rate).append(":").append(common::FormatDuration(step.duration));
  }
  return text;
}

std::chrono::milliseconds ProfileDuration(const std::vector<RateStep>& steps) {
  std::chrono::milliseconds total{0};
  for (const auto& step : steps) total += step.duration;
  return total;
}

RateSchedule::RateSchedule(std::vector<RateStep> steps, double share) {
  double start = 0;
  double count = 0;
  for (const auto& step : steps) {
    double seconds = std::chrono::duration<double>(step.duration).count();
    segments_.push_back({start, start + seconds, step.ops_per_sec * share, count});
    start += seconds;
    count += seconds * step.ops_per_sec * share;
  }
  if (segments_.empty()) segments_.push_back({0, 0, 0, 0});
  segments_.back().end_seconds = INFINITY;  // the last rate holds
}

const RateSchedule::Segment& RateSchedule::SegmentAt(double seconds) const {
  for (const auto& segment : segments_) {
    if (seconds < segment.end_seconds) return segment;
  }
  return segments_.back();
}

double RateSchedule::RateAt(std::chrono::nanoseconds elapsed) const {
  return SegmentAt(std::chrono::duration<double>(elapsed).count()).rate;
}

uint64_t RateSchedule::DueBy(std::chrono::nanoseconds elapsed) const {
  double seconds = std::chrono::duration<double>(elapsed).count();
  if (seconds <= 0) return 0;
  const Segment& segment = SegmentAt(seconds);
  double count = segment.count_before + (seconds - segment.start_seconds) * segment.rate;
  // A hair of slack so a request due exactly now is not lost to rounding.
  return static_cast<uint64_t>(std::floor(count + 1e-9));
}

std::chrono::nanoseconds RateSchedule::SendTime(uint64_t n) const {
  double target = static_cast<double>(n) + 1;
  for (const auto& segment : segments_) {
    if (segment.rate <= 0) continue;
    double count_after =
        segment.count_before + (segment.end_seconds - segment.start_seconds) * segment.rate;
    if (target <= count_after + 1e-9) {
      double seconds = segment.start_seconds + (target - segment.count_before) / segment.rate;
      return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(seconds * 1e9)));
    }
  }
  return std::chrono::nanoseconds::max();
}

}  // namespace shardctl::launcher
