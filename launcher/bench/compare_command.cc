// `shardctl bench compare`: runs the plan from bench_compare.h against real servers, one
// configuration after the other on the same cores, and writes the report.
//
//   parse ─▶ plan ─▶ ports free? ─▶ for each run: start server(s) ─▶ populate ─▶ measure ─▶ stop
//                                                   │ single: SpawnPinned(server --io-threads N)
//                                                   └ cluster/proxy: `shardctl up` in a temp
//                                                     state dir, `down --purge` after
//   ─▶ index.md, summary.csv, timeline.csv, *.gp ─▶ gnuplot (when installed) ─▶ *.png
#include <sched.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "common/cpu_list.h"
#include "launcher/bench/commands.h"
#include "launcher/bench/compare.h"
#include "launcher/bench/compare_report.h"
#include "launcher/bench/help.h"
#include "launcher/bench/report.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/engine/engine.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/os/process.h"
#include "launcher/term/exit_codes.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::atomic<bool> g_compare_stop{false};

void OnCompareSignal(int) { g_compare_stop.store(true); }

int Fail(const std::string& message, int code) {
  PrintError("bench compare: " + message);
  return code;
}

std::vector<int> AllowedCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string SelfPath() {
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? "shardctl" : self.string();
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  for (int i = 0; i < 10000 && std::getline(cpuinfo, line); ++i) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string HostText(const std::vector<std::string>& engines) {
  utsname name{};
  uname(&name);
  std::string text = "- CPU: " + CpuModel() + ", " +
                     std::to_string(std::thread::hardware_concurrency()) + " online CPU(s)\n" +
                     "- kernel: " + name.sysname + " " + name.release + " " + name.machine + "\n";
  for (const auto& spec : engines) {
    auto engine = ResolveEngine(spec);
    text += "- " + spec + ": " +
            (engine.ok() ? engine->path.string() + " " + engine->version
                         : "not found (" + engine.error().message() + ")") +
            "\n";
  }
  return text;
}

// Waits for PING on 127.0.0.1:port, up to `timeout`.
common::Status WaitForPing(int port, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no answer";
  for (int attempt = 0; attempt < 1000 && std::chrono::steady_clock::now() < deadline; ++attempt) {
    auto connection = RedisConnection::Connect(Access{}, "127.0.0.1", port, 500ms);
    if (connection.ok()) {
      if (auto pong = connection->Run({"PING"}); pong.ok()) return common::Ok();
      last = "PING refused";
    } else {
      last = connection.error().message();
    }
    if (g_compare_stop) return common::Error("interrupted");
    std::this_thread::sleep_for(100ms);
  }
  return common::Error("127.0.0.1:" + std::to_string(port) + " did not answer PING: " + last);
}

// Everything a run started; the destructor stops what is still up, on every path.
class Servers {
 public:
  Servers(std::string self, fs::path scratch)
      : self_(std::move(self)), scratch_(std::move(scratch)) {}
  ~Servers() {
    StopSingle();
    Down();
  }
  Servers(const Servers&) = delete;
  Servers& operator=(const Servers&) = delete;

  common::Status StartSingle(const std::vector<std::string>& argv, const std::vector<int>& cpus,
                             int port) {
    auto process = SpawnPinned({.argv = argv, .cpus = cpus, .output = scratch_ / "single.log"});
    if (!process.ok()) return process.error();
    single_ = *process;
    if (auto ready = WaitForPing(port, 10s); !ready.ok()) return ready;
    return common::Ok();
  }

  // SIGTERM, then SIGKILL after 5 s; only the process we spawned.
  void StopSingle() {
    if (!single_) return;
    if (IsRunning(*single_)) kill(single_->pid, SIGTERM);
    for (int i = 0; i < 100 && !ReapIfExited(single_->pid); ++i) {
      if (i == 50) kill(single_->pid, SIGKILL);
      std::this_thread::sleep_for(100ms);
    }
    single_.reset();
  }

  common::Status Up(const std::vector<std::string>& up_args) {
    std::vector<std::string> argv = {self_};
    argv.insert(argv.end(), up_args.begin(), up_args.end());
    deployed_ = true;  // a failed `up` may have left part of a deployment: always `down`
    auto result = RunAndCapture(argv, 180s);
    if (!result.ok()) return result.error().Context("shardctl up");
    return common::Ok();
  }

  void Down() {
    if (!deployed_) return;
    deployed_ = false;
    auto result = RunAndCapture({self_, "down", "--name", kCompareDeployment, "--state-dir",
                                 (scratch_ / "state").string(), "--purge"},
                                120s);
    if (!result.ok()) PrintError("bench compare: shardctl down: " + result.error().message());
  }

  fs::path state_dir() const { return scratch_ / "state"; }
  const std::optional<ProcessId>& single() const { return single_; }
  fs::path data_dir() const { return scratch_ / "single"; }

 private:
  std::string self_;
  fs::path scratch_;
  std::optional<ProcessId> single_;
  bool deployed_ = false;
};

double Micros(const LatencyHistogram& latency, double percentile) {
  return static_cast<double>(latency.ValueAtPercentile(percentile)) / 1000.0;
}

// The processes serving `run`: the instance, or the shards (from their pid files) and, for a
// proxy run, the proxy last. Empty when one cannot be found.
std::vector<ProcessId> ServerProcesses(const CompareRun& run, const Servers& servers) {
  if (run.step == CompareStep::kSingle) {
    if (!servers.single()) return {};
    return {*servers.single()};
  }
  const DeploymentDir dir(servers.state_dir(), kCompareDeployment);
  std::vector<ProcessId> processes;
  for (int shard = 0; shard < run.shards; ++shard) {
    auto process = ReadProcessId(dir.ShardPidFile(shard));
    if (!process) return {};
    processes.push_back(*process);
  }
  if (run.step == CompareStep::kProxy) {
    auto proxy = ReadProcessId(dir.ProxyPidFile());
    if (!proxy) return {};
    processes.push_back(*proxy);
  }
  return processes;
}

// CPU seconds each of `processes` has used; nullopt when one is gone.
std::optional<std::vector<double>> CpuSeconds(const std::vector<ProcessId>& processes) {
  std::vector<double> seconds;
  for (const ProcessId& process : processes) {
    auto used = ReadCpuSeconds(process);
    if (!used) return std::nullopt;
    seconds.push_back(*used);
  }
  return seconds;
}

// Fills the result's CPU per request from the counters before and after `requests` requests
// (the proxy, when there is one, is the last process).
void SetServerCpu(const CompareRun& run, const std::optional<std::vector<double>>& before,
                  const std::optional<std::vector<double>>& after, uint64_t requests,
                  CompareResult& result) {
  if (!before || !after || before->empty() || requests == 0) return;
  const auto per_request = [requests](double seconds) {
    return seconds * 1e6 / static_cast<double>(requests);
  };
  double total = 0;
  for (size_t i = 0; i < before->size(); ++i) total += (*after)[i] - (*before)[i];
  result.server_cpu_us_per_request = per_request(total);
  if (run.step == CompareStep::kProxy) {
    result.proxy_cpu_us_per_request = per_request(after->back() - before->back());
  }
}

// Each primary's total_commands_processed (cluster and proxy runs); nullopt for a single
// instance or when one does not answer.
std::optional<std::vector<uint64_t>> CommandCounts(const CompareRun& run) {
  if (run.step == CompareStep::kSingle) return std::nullopt;
  std::vector<uint64_t> counts;
  for (int shard = 0; shard < run.shards; ++shard) {
    auto connection =
        RedisConnection::Connect(Access{}, "127.0.0.1", run.first_shard_port + shard, 1000ms);
    auto info = connection.ok() ? connection->Run({"INFO", "stats"})
                                : common::Result<std::string>(connection.error());
    if (!info.ok()) return std::nullopt;
    counts.push_back(InfoNumber<uint64_t>(*info, "total_commands_processed"));
  }
  return counts;
}

// Populates when the workload asks, measures, and fills `result`'s numbers.
common::Status Measure(const CompareRun& run, const Servers& servers, CompareResult& result) {
  std::vector<std::string> words(run.bench_args.begin() + 1, run.bench_args.end());
  auto options = ParseBenchArgs(words);
  if (!options.ok()) return options.error();
  std::optional<SlotTable> slots;
  if (options->cluster) {
    auto table = FetchSlotTable(Access{}, "127.0.0.1", run.port, 3000ms);
    if (!table.ok()) return table.error();
    slots = std::move(table).value();
  }
  const SlotTable* table = slots ? &*slots : nullptr;
  if (options->workload.populate) {
    if (auto status = PopulateKeys(*options, table, &g_compare_stop, false); !status.ok()) {
      return status;
    }
  }
  auto on_second = [&result](const LiveSecond& live) {
    result.timeline.push_back({.second = live.elapsed_seconds,
                               .ops = live.ops,
                               .p99_us = static_cast<double>(live.p99_ns) / 1000.0});
  };
  const std::vector<ProcessId> processes = ServerProcesses(run, servers);
  const auto cpu_before = CpuSeconds(processes);
  const auto commands_before = CommandCounts(run);
  auto load = MeasureLoad(*options, table, &g_compare_stop, on_second);
  if (!load.ok()) return load.error();
  const auto commands_after = CommandCounts(run);
  if (commands_before && commands_after) {
    result.busiest_primary_load = BusiestToMean(*commands_before, *commands_after);
  }
  PhaseResult all = MergePhases(*load);
  SetServerCpu(run, cpu_before, CpuSeconds(processes), all.ops + all.errors, result);
  result.ops_per_sec = all.seconds > 0 ? static_cast<double>(all.ops) / all.seconds : 0;
  result.p50_us = Micros(all.latency, 50);
  result.p99_us = Micros(all.latency, 99);
  result.p99_9_us = Micros(all.latency, 99.9);
  result.errors = all.errors;
  if (all.ops == 0)
    return common::Error("no replies" +
                         (load->first_error.empty() ? "" : ": " + load->first_error));
  return common::Ok();
}

std::string ServerPath(const std::string& engine) {
  auto resolved = ResolveEngine(engine);
  return resolved.ok() ? resolved->path.string() : engine + "-server";
}

// The results to fill, commands already written in.
std::vector<CompareResult> Prepare(const ComparePlan& plan, const Servers& servers) {
  std::vector<CompareResult> results;
  for (const auto& run : plan.runs) {
    CompareResult result{.run = run, .bench_command = "shardctl " + ShellJoin(run.bench_args)};
    if (run.step == CompareStep::kSingle) {
      result.server_command =
          ShellJoin(SingleServerArgv(run, ServerPath(run.engine), servers.data_dir().string())) +
          "   # pinned to CPUs " + common::FormatCpuList(plan.server_cpus);
    } else {
      result.server_command = "shardctl " + ShellJoin(UpArgs(plan, run, servers.state_dir()));
    }
    results.push_back(std::move(result));
  }
  return results;
}

// Runs one configuration; failures are recorded in the result, not fatal.
void RunOne(const ComparePlan& plan, Servers& servers, CompareResult& result) {
  const CompareRun& run = result.run;
  std::fprintf(stderr, "bench compare: %s\n", run.label.c_str());
  common::Status status = common::Ok();
  if (run.step == CompareStep::kSingle) {
    fs::create_directories(servers.data_dir());
    status = servers.StartSingle(
        SingleServerArgv(run, ServerPath(run.engine), servers.data_dir().string()),
        plan.server_cpus, run.port);
  } else if (run.starts_cluster) {
    status = servers.Up(UpArgs(plan, run, servers.state_dir()));
  }
  if (status.ok() && run.step == CompareStep::kProxy) status = WaitForPing(run.port, 10s);
  if (status.ok()) status = Measure(run, servers, result);
  if (!status.ok()) {
    result.failure = status.error().message();
    std::fprintf(stderr, "bench compare: %s: %s\n", run.label.c_str(), result.failure.c_str());
  }
  if (run.step == CompareStep::kSingle) servers.StopSingle();
  if (run.stops_cluster || (!status.ok() && run.step != CompareStep::kSingle)) servers.Down();
}

common::Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
  file.close();
  if (!file) return common::Error("cannot write " + path.string());
  return common::Ok();
}

// Writes the gnuplot scripts and runs them; returns a note for the report when it could not.
std::optional<std::string> Plot(const fs::path& out, const std::vector<CompareResult>& results) {
  std::vector<std::string> labels;
  for (const auto& result : results) labels.push_back(result.run.label);
  for (const auto& png : PlotNames()) {
    std::string script = png.substr(0, png.size() - 4) + ".gp";
    if (auto status = WriteFile(out / script, GnuplotScript(png, labels)); !status.ok()) {
      return status.error().message();
    }
  }
  auto gnuplot = FindExecutable("gnuplot");
  if (!gnuplot.ok()) {
    return "gnuplot not found: no PNG plots (install gnuplot-nox, then run the *.gp scripts in " +
           out.string() + ")";
  }
  for (const auto& png : PlotNames()) {
    std::string script = (out / (png.substr(0, png.size() - 4) + ".gp")).string();
    std::string cd = "cd '" + out.string() + "'";
    if (auto ran = RunAndCapture({gnuplot->string(), "-e", cd, script}, 60s); !ran.ok()) {
      return "gnuplot failed on " + script + ": " + ran.error().message();
    }
  }
  return std::nullopt;
}

std::string PortsText(const std::vector<int>& ports) {
  std::string text;
  for (int port : ports) text += (text.empty() ? "" : ",") + std::to_string(port);
  return text;
}

int Execute(const CompareOptions& options, const ComparePlan& plan, const std::string& command) {
  std::error_code error;
  fs::create_directories(options.out, error);
  if (error) return Fail("--out " + options.out + ": " + error.message(), kExitRuntime);
  char scratch_template[] = "/tmp/shardctl-compare-XXXXXX";
  if (mkdtemp(scratch_template) == nullptr) return Fail("cannot create a temp dir", kExitRuntime);
  fs::path scratch = scratch_template;
  std::vector<CompareResult> results;
  CompareContext context{.command = command, .host = HostText(options.engines)};
  {
    Servers servers(SelfPath(), scratch);
    results = Prepare(plan, servers);
    std::signal(SIGINT, OnCompareSignal);
    std::signal(SIGTERM, OnCompareSignal);
    for (auto& result : results) {
      if (g_compare_stop) {
        result.failure = "not run: interrupted";
        continue;
      }
      RunOne(plan, servers, result);
    }
  }
  fs::remove_all(scratch, error);
  if (g_compare_stop) context.notes.push_back("interrupted: the remaining runs were skipped");
  // Written first so the plots read them.
  auto out = fs::path(options.out);
  for (const auto& [name, text] : {std::pair{"summary.csv", SummaryCsv(results)},
                                   std::pair{"timeline.csv", TimelineCsv(results)}}) {
    if (auto status = WriteFile(out / name, text); !status.ok()) {
      return Fail(status.error().message(), kExitRuntime);
    }
  }
  if (auto note = Plot(out, results)) {
    PrintError("bench compare: warning: " + *note);
    context.notes.push_back(*note);
  }
  if (auto status = WriteFile(out / "index.md", IndexMarkdown(plan, context, results));
      !status.ok()) {
    return Fail(status.error().message(), kExitRuntime);
  }
  if (options.json) {
    std::cout << ResultsJson(plan, results).dump(2) << "\n";
  } else {
    for (const auto& result : results) std::printf("%s\n", ResultLine(result).c_str());
    std::printf("report: %s\n", (out / "index.md").c_str());
  }
  bool any_failed = std::ranges::any_of(results, [](auto& r) { return !r.failure.empty(); });
  if (g_compare_stop) {
    return Fail("interrupted; the runs done are in " + (out / "index.md").string(), 130);
  }
  return any_failed
             ? Fail("some runs failed (see " + (out / "index.md").string() + ")", kExitRuntime)
             : kExitOk;
}

}  // namespace

int RunBenchCompare(const std::vector<std::string>& args) {
  auto options = ParseCompareArgs(args);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  if (options->help) {
    std::cout << BenchHelpText("bench compare");
    return kExitOk;
  }
  auto plan = PlanCompare(*options, AllowedCpus());
  if (!plan.ok()) return Fail(plan.error().message(), kExitUsage);
  std::string command = "shardctl bench " + ShellJoin(args);
  if (options->dry_run) {
    Servers none(SelfPath(), "/tmp/shardctl-compare-XXXXXX");
    std::cout << PlanText(*plan, Prepare(*plan, none));
    return kExitOk;
  }
  if (auto taken = TakenPorts("127.0.0.1", plan->Ports()); !taken.empty()) {
    return Fail("port(s) " + PortsText(taken) +
                    " already in use (choose another --base-port; the plan uses " +
                    PortsText(plan->Ports()) + ")",
                kExitRuntime);
  }
  return Execute(*options, *plan, command);
}

}  // namespace shardctl::launcher
