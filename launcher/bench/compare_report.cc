#include "launcher/bench/compare_report.h"

#include <algorithm>
#include <cstdio>

#include "common/cpu_list.h"

namespace shardctl::launcher {
namespace {

std::string Number(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// CSV field: quoted when it holds a comma or quote.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

// A CPU figure for a table cell: "-" when unknown.
std::string CpuCell(const std::optional<double>& us) { return us ? Number(*us, 2) : "-"; }

// A CPU figure for a CSV field: empty when unknown.
std::string CpuField(const std::optional<double>& us) { return us ? Number(*us, 2) : ""; }

nlohmann::json CpuJson(const std::optional<double>& us) {
  return us ? nlohmann::json(*us) : nlohmann::json(nullptr);
}

// Busiest-to-mean for a table cell: "-" for a single instance or when unknown.
std::string LoadCell(const std::optional<double>& load) { return load ? Number(*load, 2) : "-"; }

std::string PinningText(const ComparePlan& plan) {
  return "servers on CPUs " + common::FormatCpuList(plan.server_cpus) + ", load generator on " +
         common::FormatCpuList(plan.loadgen_cpus) +
         (plan.sharing ? " — **sharing**: the generator competes with the servers for the same "
                         "cores, so absolute numbers are lower than on a host with spare cores"
                       : " — separate cores");
}

std::string ResultRow(const CompareResult& result) {
  const CompareRun& run = result.run;
  std::string threads = run.step == CompareStep::kSingle ? std::to_string(run.io_threads) : "1";
  if (!result.failure.empty()) {
    return "| " + StepName(run.step) + " | " + run.engine + " | " + threads + " | " +
           std::to_string(run.shards) + " | " + run.key_distribution +
           " | failed: " + result.failure + " | | | | | | | |\n";
  }
  return "| " + StepName(run.step) + " | " + run.engine + " | " + threads + " | " +
         std::to_string(run.shards) + " | " + run.key_distribution + " | " +
         Number(result.ops_per_sec, 0) + " | " + Number(result.p50_us / 1000, 3) + " | " +
         Number(result.p99_us / 1000, 3) + " | " + Number(result.p99_9_us / 1000, 3) + " | " +
         std::to_string(result.errors) + " | " + CpuCell(result.server_cpu_us_per_request) + " | " +
         CpuCell(result.proxy_cpu_us_per_request) + " | " + LoadCell(result.busiest_primary_load) +
         " |\n";
}

std::string CommandsSection(const std::vector<CompareResult>& results) {
  std::string text = "## Command lines\n\n";
  for (const auto& result : results) {
    text += "### " + result.run.label + "\n\n```\n" + result.server_command + "\n" +
            result.bench_command + "\n```\n\n";
  }
  return text;
}

std::string Quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace

std::string SummaryCsv(const std::vector<CompareResult>& results) {
  std::string csv =
      "step,engine,io_threads,shards,label,ops_per_sec,p50_us,p99_us,p99_9_us,errors,"
      "server_cpu_us_per_request,proxy_cpu_us_per_request,failure,key_distribution,"
      "busiest_primary_load\n";
  for (const auto& result : results) {
    const CompareRun& run = result.run;
    csv += StepName(run.step) + "," + run.engine + "," + std::to_string(run.io_threads) + "," +
           std::to_string(run.shards) + "," + CsvField(run.label) + "," +
           Number(result.ops_per_sec, 0) + "," + Number(result.p50_us, 2) + "," +
           Number(result.p99_us, 2) + "," + Number(result.p99_9_us, 2) + "," +
           std::to_string(result.errors) + "," + CpuField(result.server_cpu_us_per_request) + "," +
           CpuField(result.proxy_cpu_us_per_request) + "," + CsvField(result.failure) + "," +
           run.key_distribution + "," + CpuField(result.busiest_primary_load) + "\n";
  }
  return csv;
}

std::string TimelineCsv(const std::vector<CompareResult>& results) {
  std::string csv = "label,second,ops,p99_us\n";
  for (const auto& result : results) {
    for (const auto& point : result.timeline) {
      csv += CsvField(result.run.label) + "," + Number(point.second, 1) + "," +
             std::to_string(point.ops) + "," + Number(point.p99_us, 2) + "\n";
    }
  }
  return csv;
}

std::string IndexMarkdown(const ComparePlan& plan, const CompareContext& context,
                          const std::vector<CompareResult>& results) {
  std::string text = "# shardctl bench compare\n\n```\n" + context.command + "\n```\n\n";
  text += "## Host\n\n" + context.host + "\n\nPinning: " + PinningText(plan) + ".\n\n";
  text += "## Results\n\n";
  text +=
      "| step | engine | io-threads | shards | keys | ops/s | p50 ms | p99 ms | p99.9 ms | errors "
      "| "
      "server CPU µs/request | of it proxy | busiest primary / mean |\n";
  text += "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& result : results) text += ResultRow(result);
  text +=
      "\nServer CPU: utime+stime of the server processes (the instance; the shards and the "
      "proxy) over the measured phase, per request. Busiest primary / mean: the commands the "
      "busiest primary processed over the phase (its own total_commands_processed) against the "
      "primaries' mean; 1.00 is an even spread, and a skewed key distribution (keys column) "
      "shows how far one shard's core saturates before the others.\n";
  text += "\nData: [summary.csv](summary.csv), [timeline.csv](timeline.csv) (per second).\n\n";
  if (!context.notes.empty()) {
    text += "## Notes\n\n";
    for (const auto& note : context.notes) text += "- " + note + "\n";
    text += "\n";
  }
  text += "## Plots\n\n";
  for (const auto& png : PlotNames()) text += "![" + png + "](" + png + ")\n";
  text += "\n" + CommandsSection(results);
  return text;
}

std::string ResultLine(const CompareResult& result) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%-34s %10.0f ops/s  p50 %8.3f ms  p99 %8.3f ms  p99.9 %8.3f ms  server CPU %s "
                "us/req",
                result.run.label.c_str(), result.ops_per_sec, result.p50_us / 1000,
                result.p99_us / 1000, result.p99_9_us / 1000,
                CpuCell(result.server_cpu_us_per_request).c_str());
  std::string line = text;
  if (result.proxy_cpu_us_per_request) {
    line += " (proxy " + CpuCell(result.proxy_cpu_us_per_request) + ")";
  }
  if (result.busiest_primary_load) {
    line += "  busiest primary " + LoadCell(result.busiest_primary_load) + "x the mean";
  }
  if (!result.failure.empty()) line += "  FAILED: " + result.failure;
  return line;
}

std::optional<double> BusiestToMean(const std::vector<uint64_t>& before,
                                    const std::vector<uint64_t>& after) {
  if (before.empty() || before.size() != after.size()) return std::nullopt;
  double busiest = 0;
  double total = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    if (after[i] < before[i]) return std::nullopt;  // a primary restarted: its counter did too
    const auto processed = static_cast<double>(after[i] - before[i]);
    busiest = std::max(busiest, processed);
    total += processed;
  }
  if (total == 0) return std::nullopt;
  return busiest / (total / static_cast<double>(before.size()));
}

nlohmann::json ResultsJson(const ComparePlan& plan, const std::vector<CompareResult>& results) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& result : results) {
    runs.push_back({{"label", result.run.label},
                    {"step", StepName(result.run.step)},
                    {"engine", result.run.engine},
                    {"io_threads", result.run.io_threads},
                    {"shards", result.run.shards},
                    {"ops_per_sec", result.ops_per_sec},
                    {"latency_us",
                     {{"p50", result.p50_us}, {"p99", result.p99_us}, {"p99_9", result.p99_9_us}}},
                    {"errors", result.errors},
                    {"server_cpu_us_per_request", CpuJson(result.server_cpu_us_per_request)},
                    {"proxy_cpu_us_per_request", CpuJson(result.proxy_cpu_us_per_request)},
                    {"key_distribution", result.run.key_distribution},
                    {"busiest_primary_load", CpuJson(result.busiest_primary_load)},
                    {"failure", result.failure},
                    {"server_command", result.server_command},
                    {"bench_command", result.bench_command}});
  }
  return {{"server_cpus", common::FormatCpuList(plan.server_cpus)},
          {"loadgen_cpus", common::FormatCpuList(plan.loadgen_cpus)},
          {"sharing", plan.sharing},
          {"runs", runs}};
}

std::string PlanText(const ComparePlan& plan, const std::vector<CompareResult>& runs) {
  std::string text = "bench compare plan: " + PinningText(plan) + "\n";
  int index = 1;
  for (const auto& run : runs) {
    text += std::to_string(index++) + ". " + run.run.label + "\n   server: " + run.server_command +
            "\n   client: " + run.bench_command + "\n";
  }
  return text;
}

const std::vector<std::string>& PlotNames() {
  static const std::vector<std::string> names = {"throughput.png", "latency.png", "timeline.png"};
  return names;
}

std::string GnuplotScript(const std::string& png, const std::vector<std::string>& labels) {
  std::string text = "set terminal pngcairo size 1000,560 noenhanced\nset output " + Quoted(png) +
                     "\nset datafile separator comma\nset key outside right\nset grid ytics\n";
  if (png == "timeline.png") {
    text +=
        "set title \"p99 latency per second\"\nset xlabel \"second\"\n"
        "set ylabel \"p99 (ms), log scale\"\nset logscale y\nplot ";
    for (size_t i = 0; i < labels.size(); ++i) {
      text += std::string(i ? ", \\\n     " : "") + "\"timeline.csv\" using 2:(strcol(1) eq " +
              Quoted(labels[i]) + " ? $4/1000 : NaN) with linespoints title " + Quoted(labels[i]);
    }
    return text + "\n";
  }
  text +=
      "set style data histograms\nset style fill solid 0.8 border -1\nset boxwidth 0.8\n"
      "set xtics rotate by -30\n";
  if (png == "throughput.png") {
    return text +
           "set title \"throughput\"\nset ylabel \"ops/s\"\nset key off\nset yrange [0:*]\n"
           "plot \"summary.csv\" using 6:xtic(5) skip 1 title \"ops/s\"\n";
  }
  return text +
         "set style histogram clustered gap 1\nset title \"latency\"\n"
         "set ylabel \"ms, log scale\"\nset logscale y\nplot \"summary.csv\" using "
         "($7/1000):xtic(5) skip 1 title "
         "\"p50\", '' using ($8/1000) skip 1 title \"p99\", '' using ($9/1000) skip 1 "
         "title \"p99.9\"\n";
}

}  // namespace shardctl::launcher
