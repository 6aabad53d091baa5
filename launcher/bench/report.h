// What `shardctl bench run` prints: one JSON document (--json) or a short human summary. Pure:
// options and results in, text out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "launcher/bench/args.h"
#include "launcher/bench/client.h"

namespace shardctl::launcher {

// Every measured phase merged into one.
PhaseResult MergePhases(const LoadResult& result);

// The --json document: ops, ops_per_sec, errors, hits, misses, latency_us {p50, p90, p99,
// p99_9, max, mean}, per_second, seconds, moved, asked, first_error, phases [...] and the
// settings used.
nlohmann::json BenchJson(const BenchOptions& options, const LoadResult& result);

// The human summary: settings line, totals, latency percentiles, one row per phase.
std::string BenchText(const BenchOptions& options, const LoadResult& result);

// The progress line: "   3.0s      52314 ops/s  p99 1.230 ms  0 errors  7s left".
std::string ProgressLine(const LiveSecond& live, const BenchOptions& options);

}  // namespace shardctl::launcher
