#include "launcher/bench/compare.h"

#include <algorithm>
#include <set>

#include "common/cpu_list.h"
#include "common/flags.h"
#include "launcher/bench/args.h"
#include "launcher/bench/key_distribution.h"

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
    auto threads = common::ParseNumberFlag("io-threads", word, 1, 128);
    if (!threads) return threads.error();
    options.io_threads.push_back(*threads);
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

// Skewed distributions in canonical spelling, each once; "uniform" is always run first anyway.
Status ParseKeyDistributions(const std::string& value, CompareOptions& options) {
  options.key_distributions.clear();
  for (const auto& word : SplitCommas(value)) {
    auto keys = ParseKeyDistribution(word);
    if (!keys.ok()) return keys.error().Context("--key-distribution");
    const std::string name = keys->ToString();
    if (name != "uniform" &&
        std::ranges::find(options.key_distributions, name) == options.key_distributions.end()) {
      options.key_distributions.push_back(name);
    }
  }
  return common::Ok();
}

Status ParseCpus(const std::string& flag, const std::string& value, std::vector<int>& out) {
  auto cpus = common::ParseCpuList(value);
  if (!cpus.ok()) return cpus.error().Context("--" + flag);
  if (cpus->empty()) return Error("--" + flag + ": the list is empty (e.g. --" + flag + " 0-1)");
  out = std::move(cpus).value();
  return common::Ok();
}

using common::Flag;
using common::FlagType;

// A value row of `bench compare`; `apply` parses and stores it.
Flag Row(std::string name, FlagType type, std::string value_name, std::string help,
         std::function<Status(const std::string&)> apply) {
  return {.name = std::move(name),
          .type = type,
          .value_name = std::move(value_name),
          .help = std::move(help),
          .apply = std::move(apply)};
}

// `bench compare`'s own flags.
std::vector<Flag> OwnRows(CompareOptions& o) {
  using V = const std::string&;
  return {
      Row("cpus", FlagType::kText, "LIST", "server cores, e.g. 0-1 (required)",
          [&o](V v) { return ParseCpus("cpus", v, o.cpus); }),
      Row("out", FlagType::kDirectory, "DIR", "report directory (required)",
          [&o](V v) -> Status {
            if (v.empty()) return Error("--out: give a directory (e.g. --out report/)");
            o.out = v;
            return common::Ok();
          }),
      Row("loadgen-cpus", FlagType::kText, "LIST",
          "generator cores (default: the cores not in --cpus; if none, the same cores: the "
          "report says \"sharing\")",
          [&o](V v) { return ParseCpus("loadgen-cpus", v, o.loadgen_cpus); }),
      Row("engines", FlagType::kText, "LIST", "redis, valkey or redis,valkey (default: redis)",
          [&o](V v) { return ParseEngines(v, o); }),
      Row("io-threads", FlagType::kText, "LIST", "single-instance io-threads sweep (default: 1,2)",
          [&o](V v) { return ParseIoThreads(v, o); }),
      Row("shards", FlagType::kNumber, "N", "cluster primaries (default: number of --cpus)",
          common::StoreNumber(o.shards, "shards", 1, 256)),
      Row("steps", FlagType::kText, "LIST", "any of single,cluster,proxy (default: all three)",
          [&o](V v) { return ParseSteps(v, o); }),
      Row("base-port", FlagType::kNumber, "P",
          "single instance on P, shards on P+1.., proxy after them, buses +10000; all must be "
          "below 32768 and free (default: 12700)",
          common::StoreNumber(o.base_port, "base-port", 1024, kMaxPort)),
      Row("key-distribution", FlagType::kText, "LIST",
          "zipf:S and/or hotkeys:N:P, comma-separated: every configuration also runs with keys "
          "picked so (after a uniform run), side by side, with its busiest primary's load "
          "against the mean (default: uniform only)",
          [&o](V v) { return ParseKeyDistributions(v, o); }),
      common::SwitchFlag("json", o.json, "results as one JSON document on stdout"),
      common::SwitchFlag("dry-run", o.dry_run,
                         "print the plan (runs, pinning, command lines); start nothing"),
      {.name = "help",
       .help = "this help",
       .apply = [&o](V) { return (o.help = true, common::Ok()); },
       .short_name = 'h',
       .stops = true},
  };
}

// The `bench run` rows handed on unchanged (listed in `bench compare --help` by name only).
std::vector<Flag> PassThroughRows(CompareOptions& o) {
  std::vector<Flag> rows;
  for (const Flag& run : BenchRunRows()) {
    if (!PassThroughFlags().contains(run.name)) continue;
    Flag row = run;
    row.group = "bench run";
    row.help = run.name == "workload"  ? "default here: mixed-80-20"
               : run.name == "threads" ? "default here: one per generator core"
                                       : "";
    row.apply = [&o, name = run.name](const std::string& value) {
      o.bench_flags.insert(o.bench_flags.end(), {"--" + name, value});
      return common::Ok();
    };
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Flag> CompareRows(CompareOptions& options) {
  std::vector<Flag> rows = OwnRows(options);
  std::vector<Flag> passed = PassThroughRows(options);
  rows.insert(rows.end(), passed.begin(), passed.end());
  return rows;
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

// The key distributions each configuration runs with: uniform, then the skewed ones given.
std::vector<std::string> DistributionsOf(const CompareOptions& options) {
  std::vector<std::string> distributions = {"uniform"};
  distributions.insert(distributions.end(), options.key_distributions.begin(),
                       options.key_distributions.end());
  return distributions;
}

// `run` once per distribution, each labelled with its own when there are several.
void AddPerDistribution(const CompareOptions& options, CompareRun run, ComparePlan& plan) {
  const auto distributions = DistributionsOf(options);
  for (const auto& keys : distributions) {
    CompareRun each = run;
    each.key_distribution = keys;
    if (distributions.size() > 1) {
      each.label += " " + keys;
      each.bench_args.insert(each.bench_args.end(), {"--key-distribution", keys});
    }
    plan.runs.push_back(std::move(each));
  }
}

void AddRuns(const CompareOptions& options, ComparePlan& plan) {
  for (const auto& engine : options.engines) {
    if (HasStep(options, CompareStep::kSingle)) {
      for (int threads : options.io_threads) {
        AddPerDistribution(
            options,
            {.step = CompareStep::kSingle,
             .engine = engine,
             .io_threads = threads,
             .label = engine + " single io-threads=" + std::to_string(threads),
             .port = plan.base_port,
             .bench_args = BenchArgsFor(options, plan, CompareStep::kSingle, plan.base_port)},
            plan);
      }
    }
    size_t first_cluster_run = plan.runs.size();
    for (CompareStep step : {CompareStep::kCluster, CompareStep::kProxy}) {
      if (!HasStep(options, step)) continue;
      int port = step == CompareStep::kProxy ? plan.proxy_port : plan.base_port + 1;
      std::string shards = std::to_string(plan.shards) + (plan.shards == 1 ? " shard" : " shards");
      AddPerDistribution(
          options,
          {.step = step,
           .engine = engine,
           .shards = plan.shards,
           .label = engine + (step == CompareStep::kProxy ? " proxy " : " cluster ") + shards,
           .port = port,
           .first_shard_port = plan.base_port + 1,
           .bench_args = BenchArgsFor(options, plan, step, port)},
          plan);
    }
    if (plan.runs.size() > first_cluster_run) {
      plan.runs[first_cluster_run].starts_cluster = true;
      plan.runs.back().stops_cluster = true;
    }
  }
}

}  // namespace

const std::vector<common::Flag>& BenchCompareRows() {
  static CompareOptions unused;
  static const std::vector<Flag> rows = CompareRows(unused);
  return rows;
}

std::vector<common::CompletionFlag> BenchCompareFlags() {
  return common::CompletionFlags(BenchCompareRows());
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
  const common::FlagTable table{.command = "bench compare",
                                .help_hint = "see shardctl bench compare --help",
                                .flags = CompareRows(options)};
  const std::span<const std::string> flags(args.begin() + 1, args.end());
  if (auto status = common::ParseFlags(table, flags); !status.ok()) return status.error();
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
                                   kCompareDeployment,
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
