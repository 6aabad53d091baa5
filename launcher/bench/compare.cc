#include "launcher/bench/compare.h"

#include <algorithm>
#include <set>

#include "common/cpu_list.h"
#include "common/numbers.h"
#include "launcher/bench/args.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;
using common::Status;

namespace {

constexpr int kMaxPort = 32767;
constexpr int kBusOffset = 10000;  // `up`'s default cluster bus port: base-port + 10000

// Flags handed to `bench run` unchanged; each takes a value.
const std::set<std::string>& PassThroughFlags() {
  static const std::set<std::string> flags = {
      "workload", "scale",    "duration", "rate",       "rate-profile", "threads", "connections",
      "pipeline", "requests", "ratio",    "value-size", "keyspace",     "seed"};
  return flags;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    words.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return words;
}

Status ParseWholeNumber(const std::string& flag, const std::string& value, int low, int high,
                        int& out) {
  std::optional<int> parsed = common::ParseIntegerIn(value, low, high);
  if (parsed) out = *parsed;
  if (!parsed) {
    return Error("--" + flag + ": \"" + value + "\" is not a whole number from " +
                 std::to_string(low) + " to " + std::to_string(high));
  }
  return common::Ok();
}

Status ParseEngines(const std::string& value, CompareOptions& options) {
  options.engines.clear();
  for (const auto& engine : SplitCommas(value)) {
    if (engine != "redis" && engine != "valkey") {
      return Error("--engines: \"" + engine +
                   "\" is not redis or valkey (e.g. --engines redis,valkey)");
    }
    if (std::ranges::find(options.engines, engine) == options.engines.end()) {
      options.engines.push_back(engine);
    }
  }
  return common::Ok();
}

Status ParseIoThreads(const std::string& value, CompareOptions& options) {
  options.io_threads.clear();
  for (const auto& word : SplitCommas(value)) {
    int threads = 0;
    if (auto status = ParseWholeNumber("io-threads", word, 1, 128, threads); !status.ok()) {
      return status;
    }
    options.io_threads.push_back(threads);
  }
  return common::Ok();
}

Status ParseSteps(const std::string& value, CompareOptions& options) {
  std::set<CompareStep> chosen;
  for (const auto& word : SplitCommas(value)) {
    if (word == "single") {
      chosen.insert(CompareStep::kSingle);
    } else if (word == "cluster") {
      chosen.insert(CompareStep::kCluster);
    } else if (word == "proxy") {
      chosen.insert(CompareStep::kProxy);
    } else {
      return Error("--steps: \"" + word + "\" is not single, cluster or proxy");
    }
  }
  options.steps.assign(chosen.begin(), chosen.end());  // always in the order
  return common::Ok();
}

Status ParseCpus(const std::string& flag, const std::string& value, std::vector<int>& out) {
  auto cpus = common::ParseCpuList(value);
  if (!cpus.ok()) return cpus.error().Context("--" + flag);
  if (cpus->empty()) return Error("--" + flag + ": the list is empty (e.g. --" + flag + " 0-1)");
  out = std::move(cpus).value();
  return common::Ok();
}

Status ApplyFlag(const std::string& flag, const std::string& value, CompareOptions& options) {
  if (flag == "cpus") return ParseCpus(flag, value, options.cpus);
  if (flag == "loadgen-cpus") return ParseCpus(flag, value, options.loadgen_cpus);
  if (flag == "engines") return ParseEngines(value, options);
  if (flag == "io-threads") return ParseIoThreads(value, options);
  if (flag == "steps") return ParseSteps(value, options);
  if (flag == "shards") return ParseWholeNumber(flag, value, 1, 256, options.shards);
  if (flag == "base-port") return ParseWholeNumber(flag, value, 1024, kMaxPort, options.base_port);
  if (flag == "out") {
    if (value.empty()) return Error("--out: give a directory (e.g. --out report/)");
    options.out = value;
    return common::Ok();
  }
  if (PassThroughFlags().contains(flag)) {
    options.bench_flags.push_back("--" + flag);
    options.bench_flags.push_back(value);
    return common::Ok();
  }
  return Error("unknown flag --" + flag + "; see shardctl bench compare --help");
}

Status ParseFlags(const std::vector<std::string>& args, CompareOptions& options) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return common::Ok();
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return Error("unexpected argument \"" + arg +
                   "\" (options are written --name value; see shardctl bench compare --help)");
    }
    std::string flag = arg.substr(2);
    std::optional<std::string> value;
    if (size_t equals = flag.find('='); equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag.resize(equals);
    }
    if (flag == "json" || flag == "dry-run") {
      if (value) return Error("--" + flag + " takes no value");
      (flag == "json" ? options.json : options.dry_run) = true;
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        return Error("--" + flag + " needs a value (see shardctl bench compare --help)");
      }
      value = args[++i];
    }
    if (auto status = ApplyFlag(flag, *value, options); !status.ok()) return status;
  }
  return common::Ok();
}

bool HasStep(const CompareOptions& options, CompareStep step) {
  return std::ranges::find(options.steps, step) != options.steps.end();
}

// `bench run` words for one run: target, generator pinning, then the user's flags (which win).
std::vector<std::string> BenchArgsFor(const CompareOptions& options, const ComparePlan& plan,
                                      CompareStep step, int port) {
  std::vector<std::string> args = {"bench", "run"};
  if (step == CompareStep::kCluster) {
    args.insert(args.end(), {"--cluster", "127.0.0.1:" + std::to_string(port)});
  } else {
    args.insert(args.end(), {"--host", "127.0.0.1", "--port", std::to_string(port)});
  }
  args.insert(args.end(),
              {"--workload", "mixed-80-20", "--threads", std::to_string(plan.loadgen_cpus.size()),
               "--cpus", common::FormatCpuList(plan.loadgen_cpus)});
  args.insert(args.end(), options.bench_flags.begin(), options.bench_flags.end());
  return args;
}

void AddRuns(const CompareOptions& options, ComparePlan& plan) {
  for (const auto& engine : options.engines) {
    if (HasStep(options, CompareStep::kSingle)) {
      for (int threads : options.io_threads) {
        plan.runs.push_back(
            {.step = CompareStep::kSingle,
             .engine = engine,
             .io_threads = threads,
             .label = engine + " single io-threads=" + std::to_string(threads),
             .port = plan.base_port,
             .bench_args = BenchArgsFor(options, plan, CompareStep::kSingle, plan.base_port)});
      }
    }
    size_t first_cluster_run = plan.runs.size();
    for (CompareStep step : {CompareStep::kCluster, CompareStep::kProxy}) {
      if (!HasStep(options, step)) continue;
      int port = step == CompareStep::kProxy ? plan.proxy_port : plan.base_port + 1;
      std::string shards = std::to_string(plan.shards) + (plan.shards == 1 ? " shard" : " shards");
      plan.runs.push_back(
          {.step = step,
           .engine = engine,
           .shards = plan.shards,
           .label = engine + (step == CompareStep::kProxy ? " proxy " : " cluster ") + shards,
           .port = port,
           .bench_args = BenchArgsFor(options, plan, step, port)});
    }
    if (plan.runs.size() > first_cluster_run) {
      plan.runs[first_cluster_run].starts_cluster = true;
      plan.runs.back().stops_cluster = true;
    }
  }
}

}  // namespace

std::vector<common::CompletionFlag> BenchCompareFlags() {
  using common::FlagValue;
  std::vector<common::CompletionFlag> flags = {
      {"cpus", FlagValue::kAny},      {"loadgen-cpus", FlagValue::kAny},
      {"engines", FlagValue::kAny},   {"io-threads", FlagValue::kAny},
      {"steps", FlagValue::kAny},     {"shards", FlagValue::kAny},
      {"base-port", FlagValue::kAny}, {"out", FlagValue::kDirectory},
      {"json", FlagValue::kNone},     {"dry-run", FlagValue::kNone},
      {"help", FlagValue::kNone}};
  for (const auto& flag : PassThroughFlags()) flags.push_back({flag, FlagValue::kAny});
  return flags;
}

std::string StepName(CompareStep step) {
  switch (step) {
    case CompareStep::kSingle:
      return "single";
    case CompareStep::kCluster:
      return "cluster";
    case CompareStep::kProxy:
      return "proxy";
  }
  return "?";
}

Result<CompareOptions> ParseCompareArgs(const std::vector<std::string>& args) {
  CompareOptions options;
  if (args.empty() || args[0] != "compare") {
    return Error("expected \"compare\" (see shardctl bench compare --help)");
  }
  if (auto status = ParseFlags(args, options); !status.ok()) return status.error();
  if (options.help) return options;
  if (options.cpus.empty()) return Error("--cpus is required (the server cores, e.g. --cpus 0-1)");
  if (options.out.empty())
    return Error("--out is required (the report directory, e.g. --out report/)");
  if (options.steps.empty()) return Error("--steps: choose at least one of single,cluster,proxy");
  if (options.engines.empty()) return Error("--engines: choose redis, valkey or both");
  std::vector<std::string> probe = {"run", "--port", "1"};
  probe.insert(probe.end(), options.bench_flags.begin(), options.bench_flags.end());
  if (auto bench = ParseBenchArgs(probe); !bench.ok()) return bench.error();
  if (options.shards == 0) options.shards = static_cast<int>(options.cpus.size());
  return options;
}

std::vector<int> ComparePlan::Ports() const {
  std::vector<int> ports;
  bool single = std::ranges::any_of(runs, [](auto& r) { return r.step == CompareStep::kSingle; });
  bool cluster = std::ranges::any_of(runs, [](auto& r) { return r.step != CompareStep::kSingle; });
  if (single) ports.push_back(base_port);
  for (int i = 0; cluster && i < shards; ++i) {
    ports.push_back(base_port + 1 + i);
    ports.push_back(base_port + 1 + i + kBusOffset);
  }
  if (proxy_port != 0) ports.push_back(proxy_port);
  return ports;
}

Result<ComparePlan> PlanCompare(const CompareOptions& options,
                                const std::vector<int>& available_cpus) {
  ComparePlan plan{
      .server_cpus = options.cpus, .shards = options.shards, .base_port = options.base_port};
  std::string missing;
  for (int cpu : options.cpus) {
    if (std::ranges::find(available_cpus, cpu) == available_cpus.end()) {
      missing += (missing.empty() ? "" : ",") + std::to_string(cpu);
    }
  }
  if (!missing.empty()) {
    return Error("--cpus: CPU(s) " + missing + " not available (this host has " +
                 common::FormatCpuList(available_cpus) + ")");
  }
  plan.loadgen_cpus = options.loadgen_cpus;
  if (plan.loadgen_cpus.empty()) {
    for (int cpu : available_cpus) {
      if (std::ranges::find(options.cpus, cpu) == options.cpus.end())
        plan.loadgen_cpus.push_back(cpu);
    }
    if (plan.loadgen_cpus.empty()) plan.loadgen_cpus = options.cpus;
  }
  plan.sharing = std::ranges::any_of(plan.loadgen_cpus, [&](int cpu) {
    return std::ranges::find(options.cpus, cpu) != options.cpus.end();
  });
  if (HasStep(options, CompareStep::kProxy)) plan.proxy_port = options.base_port + 1 + plan.shards;
  int highest = options.base_port + 1 + plan.shards + kBusOffset;
  if (highest > kMaxPort) {
    return Error("--base-port: ports up to " + std::to_string(highest) +
                 " needed (shards' cluster bus = port + 10000); use a base port of at most " +
                 std::to_string(kMaxPort - 1 - plan.shards - kBusOffset));
  }
  AddRuns(options, plan);
  return plan;
}

std::vector<std::string> UpArgs(const ComparePlan& plan, const CompareRun& run,
                                const std::string& state_dir) {
  std::vector<std::string> args = {"up",
                                   "--name",
                                   "bench-compare",
                                   "--state-dir",
                                   state_dir,
                                   "--engine",
                                   run.engine,
                                   "--shards",
                                   std::to_string(plan.shards),
                                   "--base-port",
                                   std::to_string(plan.base_port + 1),
                                   "--cpus",
                                   common::FormatCpuList(plan.server_cpus)};
  if (plan.proxy_port != 0) {
    args.insert(args.end(), {"--proxy-port", std::to_string(plan.proxy_port)});
  }
  return args;
}

std::vector<std::string> SingleServerArgv(const CompareRun& run, const std::string& server,
                                          const std::string& dir) {
  return {server,
          "--port",
          std::to_string(run.port),
          "--bind",
          "127.0.0.1",
          "--save",
          "",
          "--appendonly",
          "no",
          "--dir",
          dir,
          "--io-threads",
          std::to_string(run.io_threads),
          "--io-threads-do-reads",
          "yes"};
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& word : argv) {
    if (!text.empty()) text += ' ';
    bool plain = !word.empty() && word.find_first_of(" \t'\"$*?&;|<>()") == std::string::npos;
    text += plain ? word : "'" + word + "'";
  }
  return text;
}

}  // namespace shardctl::launcher
