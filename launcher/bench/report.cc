#include "launcher/bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/cpu_list.h"
#include "common/duration.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

double Micros(uint64_t nanoseconds) {
  return std::round(static_cast<double>(nanoseconds) / 10.0) / 100.0;  // 0.01 us resolution
}

json LatencyJson(const LatencyHistogram& latency) {
  return {{"p50", Micros(latency.ValueAtPercentile(50))},
          {"p90", Micros(latency.ValueAtPercentile(90))},
          {"p99", Micros(latency.ValueAtPercentile(99))},
          {"p99_9", Micros(latency.ValueAtPercentile(99.9))},
          {"max", Micros(latency.max())},
          {"mean", Micros(static_cast<uint64_t>(latency.Mean()))}};
}

double PerSecond(uint64_t ops, double seconds) {
  return seconds > 0 ? std::round(static_cast<double>(ops) / seconds) : 0;
}

bool ConstantRate(const BenchOptions& options) {
  return options.rate.size() == 1 && options.rate[0].duration.count() == 0;
}

// "20000 ops/s" for --rate, the profile's text for --rate-profile.
std::string RateText(const BenchOptions& options) {
  if (!ConstantRate(options)) return FormatRateProfile(options.rate);
  char text[48];
  std::snprintf(text, sizeof text, "%.0f ops/s", options.rate[0].ops_per_sec);
  return text;
}

json SettingsJson(const BenchOptions& options) {
  const Workload& workload = options.workload;
  json settings = {
      {"target", options.host + ":" + std::to_string(options.port)},
      {"cluster", options.cluster},
      {"threads", options.threads},
      {"connections", options.connections},
      {"pipeline", options.pipeline},
      {"workload", workload.name},
      {"scale", options.scale},
      {"get_fraction", workload.get_fraction},
      {"set_then_get", workload.set_then_get},
      {"value_size",
       {{"mean", workload.value_size.mean},
        {"stddev", workload.value_size.stddev},
        {"min", workload.value_size.min},
        {"max", workload.value_size.max}}},
      {"get_keyspace", workload.get_keyspace},
      {"set_keyspace", workload.set_keyspace},
      {"populate", workload.populate},
      {"seed", options.seed},
      {"key_distribution", workload.keys.ToString()},
      {"duration_ms", options.duration ? json(options.duration->count()) : json(nullptr)},
      {"requests", options.requests ? json(*options.requests) : json(nullptr)},
      {"rate", ConstantRate(options) ? json(options.rate[0].ops_per_sec) : json(nullptr)},
      {"rate_profile", options.rate.empty() || ConstantRate(options)
                           ? json(nullptr)
                           : json(FormatRateProfile(options.rate))},
      {"cpus", options.cpus.empty() ? json(nullptr) : json(common::FormatCpuList(options.cpus))},
  };
  return settings;
}

std::string Milliseconds(uint64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(nanoseconds) / 1e6);
  return text;
}

}  // namespace

PhaseResult MergePhases(const LoadResult& result) {
  PhaseResult all{.name = "all"};
  for (const auto& phase : result.phases) {
    all.latency.Merge(phase.latency);
    all.ops += phase.ops;
    all.errors += phase.errors;
    all.hits += phase.hits;
    all.misses += phase.misses;
  }
  all.seconds = result.seconds;
  return all;
}

json BenchJson(const BenchOptions& options, const LoadResult& result) {
  PhaseResult all = MergePhases(result);
  json phases = json::array();
  for (const auto& phase : result.phases) {
    phases.push_back({{"name", phase.name},
                      {"ops", phase.ops},
                      {"ops_per_sec", PerSecond(phase.ops, phase.seconds)},
                      {"errors", phase.errors},
                      {"hits", phase.hits},
                      {"misses", phase.misses},
                      {"seconds", phase.seconds},
                      {"latency_us", LatencyJson(phase.latency)}});
  }
  return {{"ops", all.ops},
          {"ops_per_sec", PerSecond(all.ops, all.seconds)},
          {"errors", all.errors},
          {"hits", all.hits},
          {"misses", all.misses},
          {"seconds", all.seconds},
          {"latency_us", LatencyJson(all.latency)},
          {"per_second", result.per_second},
          {"moved", result.moved},
          {"asked", result.asked},
          {"first_error", result.first_error},
          {"interrupted", result.interrupted},
          {"phases", phases},
          {"settings", SettingsJson(options)}};
}

std::string BenchText(const BenchOptions& options, const LoadResult& result) {
  PhaseResult all = MergePhases(result);
  const Workload& workload = options.workload;
  std::string text =
      "bench run: " + workload.name + " against " + options.host + ":" +
      std::to_string(options.port) + (options.cluster ? " (cluster)" : "") + ", " +
      std::to_string(options.threads) + " thread(s) x " + std::to_string(options.connections) +
      " connection(s), pipeline " + std::to_string(options.pipeline) +
      (options.rate.empty() ? ", closed loop" : ", open loop at " + RateText(options)) + "\n";
  char line[256];
  std::snprintf(
      line, sizeof line, "%llu ops in %.2f s: %.0f ops/s, %llu errors, %llu hits, %llu misses\n",
      static_cast<unsigned long long>(all.ops), all.seconds, PerSecond(all.ops, all.seconds),
      static_cast<unsigned long long>(all.errors), static_cast<unsigned long long>(all.hits),
      static_cast<unsigned long long>(all.misses));
  text += line;
  text += "latency: p50 " + Milliseconds(all.latency.ValueAtPercentile(50)) + ", p90 " +
          Milliseconds(all.latency.ValueAtPercentile(90)) + ", p99 " +
          Milliseconds(all.latency.ValueAtPercentile(99)) + ", p99.9 " +
          Milliseconds(all.latency.ValueAtPercentile(99.9)) + ", max " +
          Milliseconds(all.latency.max()) + "\n";
  if (result.phases.size() > 1) {
    for (const auto& phase : result.phases) {
      std::snprintf(line, sizeof line, "  %-6s %10llu ops  %9.0f ops/s  p50 %s  p99 %s\n",
                    phase.name.c_str(), static_cast<unsigned long long>(phase.ops),
                    PerSecond(phase.ops, phase.seconds),
                    Milliseconds(phase.latency.ValueAtPercentile(50)).c_str(),
                    Milliseconds(phase.latency.ValueAtPercentile(99)).c_str());
      text += line;
    }
  }
  if (result.moved + result.asked > 0) {
    text += "redirects followed: " + std::to_string(result.moved) + " MOVED, " +
            std::to_string(result.asked) + " ASK\n";
  }
  if (!result.first_error.empty()) text += "first error: " + result.first_error + "\n";
  if (result.interrupted) text += "interrupted: stopped early by Ctrl-C\n";
  return text;
}

std::string ProgressLine(const LiveSecond& live, const BenchOptions& options) {
  char line[160];
  int length = std::snprintf(line, sizeof line, "%6.1fs  %9llu ops/s  p99 %s  %llu errors",
                             live.elapsed_seconds, static_cast<unsigned long long>(live.ops),
                             Milliseconds(live.p99_ns).c_str(),
                             static_cast<unsigned long long>(live.errors));
  if (options.duration && length > 0 && static_cast<size_t>(length) < sizeof line) {
    double left = std::max(
        0.0, std::chrono::duration<double>(*options.duration).count() - live.elapsed_seconds);
    std::snprintf(line + length, sizeof line - static_cast<size_t>(length), "  %.0fs left", left);
  }
  return line;
}

}  // namespace shardctl::launcher
