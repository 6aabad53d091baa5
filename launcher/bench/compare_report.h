// What `shardctl bench compare` writes: index.md, summary.csv, timeline.csv and the gnuplot
// scripts behind the PNGs, and what it prints (a line per run, or --json). Pure: the plan,
// results and host text in, file contents out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launcher/bench/compare.h"

namespace shardctl::launcher {

// One second of a run, as the generator's progress callback saw it.
struct TimelinePoint {
  double second = 0;
  uint64_t ops = 0;  // replies in that second
  double p99_us = 0;
};

// What one configuration measured (or why it could not).
struct CompareResult {
  CompareRun run;
  double ops_per_sec = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p99_9_us = 0;
  uint64_t errors = 0;
  // CPU seconds (utime+stime) the server side spent over the measured phase, per request, in µs:
  // the instance, or the shards plus (proxy runs) the proxy. nullopt when a process' counters
  // could not be read (it exited). What a configuration costs the host, beside what it serves.
  std::optional<double> server_cpu_us_per_request;
  std::optional<double> proxy_cpu_us_per_request;  // the proxy's part of it (proxy runs only)
  // Cluster and proxy runs: the commands the busiest primary processed over the measured phase
  // (its own total_commands_processed) against the primaries' mean; 1.0 is perfectly even.
  // nullopt for a single instance, or when a primary's counters could not be read.
  std::optional<double> busiest_primary_load;
  std::vector<TimelinePoint> timeline;
  std::string server_command;  // how the server(s) were started
  std::string bench_command;   // the equivalent `shardctl bench run`
  std::string failure;         // non-empty: the run did not complete, numbers are 0
};

// The report's inputs besides the results.
struct CompareContext {
  std::string command;             // the `shardctl bench compare` command line
  std::string host;                // CPU model, core count, kernel, engine versions
  std::vector<std::string> notes;  // e.g. "gnuplot not found: no PNGs"
};

// summary.csv: step,engine,io_threads,shards,label,ops_per_sec,p50_us,p99_us,p99_9_us,errors,
// server_cpu_us_per_request,proxy_cpu_us_per_request,failure,key_distribution,
// busiest_primary_load (a CPU or load field is empty when unknown).
std::string SummaryCsv(const std::vector<CompareResult>& results);

// timeline.csv: label,second,ops,p99_us — one row per second of each run.
std::string TimelineCsv(const std::vector<CompareResult>& results);

// index.md: host, pinning (separate or sharing), the table, commands, notes, the plots.
std::string IndexMarkdown(const ComparePlan& plan, const CompareContext& context,
                          const std::vector<CompareResult>& results);

// The line `bench compare` prints for one run: label, ops/s, latencies, server CPU per request.
std::string ResultLine(const CompareResult& result);

// The busiest primary's share against the mean, from each primary's command counter before and
// after a run (same order); nullopt when the counts do not pair up or nothing was processed.
std::optional<double> BusiestToMean(const std::vector<uint64_t>& before,
                                    const std::vector<uint64_t>& after);

// The --json document: pinning and every run (the CPU fields are null when unknown).
nlohmann::json ResultsJson(const ComparePlan& plan, const std::vector<CompareResult>& results);

// The `shardctl bench compare --dry-run` text: pinning and every run with its commands.
std::string PlanText(const ComparePlan& plan, const std::vector<CompareResult>& runs);

// A gnuplot script that reads the CSVs in the working directory and writes `png`:
// "throughput.png" (ops/s per configuration), "latency.png" (p50/p99/p99.9 per configuration)
// or "timeline.png" (p99 per second of each run). `labels` are the runs' labels in order.
std::string GnuplotScript(const std::string& png, const std::vector<std::string>& labels);

// The PNGs GnuplotScript can make.
const std::vector<std::string>& PlotNames();

}  // namespace shardctl::launcher
