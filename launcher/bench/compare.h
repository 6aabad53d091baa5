// `shardctl bench compare`: flags and the plan of runs. Pure: argv and the host's CPUs in,
// options, a plan, or a usage error (naming the flag and the fix) out. Running the plan is
// cli_bench_compare.cc's job.
//
//   for each engine:  single instance x io-threads sweep ─┐
//                     `shardctl up` N shards ── cluster-aware client ─┤ each run: populate,
//                                         └──── shardproxy + plain client ─┘ measure, record
#pragma once

#include <string>
#include <vector>

#include "common/completion.h"
#include "common/flags.h"
#include "common/result.h"

namespace shardctl::launcher {

enum class CompareStep { kSingle, kCluster, kProxy };

// The name of the deployment the cluster and proxy runs start (`up --name`).
inline constexpr const char* kCompareDeployment = "bench-compare";

// "single", "cluster" or "proxy".
std::string StepName(CompareStep step);

// Everything `bench compare` was told, defaults filled in.
struct CompareOptions {
  bool help = false;
  std::vector<int> cpus;          // --cpus: the server cores (required)
  std::vector<int> loadgen_cpus;  // --loadgen-cpus; empty: the other cores, else the same
  std::vector<std::string> engines = {"redis"};
  std::vector<int> io_threads = {1, 2};
  int shards = 0;  // 0: one per --cpus entry
  std::vector<CompareStep> steps = {CompareStep::kSingle, CompareStep::kCluster,
                                    CompareStep::kProxy};
  int base_port = 12700;
  std::string out;  // --out DIR (required)
  bool json = false;
  bool dry_run = false;
  // --key-distribution: every configuration runs once uniform, then once per skewed one listed
  // (canonical spellings, in the order given, uniform not repeated).
  std::vector<std::string> key_distributions;
  // Flags handed to every `bench run` as given (--workload, --scale, --duration, --rate, ...).
  std::vector<std::string> bench_flags;
};

// The rows ParseCompareArgs reads flags with (bound to options nobody reads): its own, then the
// `bench run` rows it hands on (group "bench run"). For --help and completion.
const std::vector<common::Flag>& BenchCompareRows();

// Every flag `bench compare` accepts, its own and those it hands to `bench run` (for shell
// completion).
std::vector<common::CompletionFlag> BenchCompareFlags();

// Parses the words after "bench" ("compare" first). Pass-through flags are checked by the
// `bench run` parser, so a bad --scale fails here, before anything starts.
common::Result<CompareOptions> ParseCompareArgs(const std::vector<std::string>& args);

// One measured configuration.
struct CompareRun {
  CompareStep step = CompareStep::kSingle;
  std::string engine;        // "redis" or "valkey"
  int io_threads = 1;        // single instance only
  int shards = 1;            // 1 for the single instance
  std::string label;         // "redis single io-threads=2", "valkey cluster 2 shards"
  int port = 0;              // where the client connects (the proxy's port for kProxy)
  int first_shard_port = 0;  // cluster and proxy runs: shard i listens on this + i
  std::string key_distribution = "uniform";  // how its requests pick keys
  bool starts_cluster = false;               // first run of its engine's deployment: `up` before it
  bool stops_cluster = false;  // last run of its engine's deployment: `down --purge` after it
  // The words after `shardctl` of the equivalent `bench run` (for the report and for the parser).
  std::vector<std::string> bench_args;
};

// The runs in order, where everything is pinned and the ports used.
struct ComparePlan {
  std::vector<int> server_cpus;
  std::vector<int> loadgen_cpus;
  bool sharing = false;  // the generator runs on server cores
  int shards = 0;
  int base_port = 0;
  int proxy_port = 0;  // 0 when there is no proxy step
  std::vector<CompareRun> runs;
  std::vector<int> Ports() const;  // every port the plan listens on (servers, buses, proxy)
};

// Plans the runs. `available_cpus` are the CPUs this process may use (the host's). Errors are
// usage errors: server cores not available, ports above 32767.
common::Result<ComparePlan> PlanCompare(const CompareOptions& options,
                                        const std::vector<int>& available_cpus);

// The words after `shardctl` of the `up` that starts `run`'s deployment (state dir given).
std::vector<std::string> UpArgs(const ComparePlan& plan, const CompareRun& run,
                                const std::string& state_dir);

// The server command line of a single-instance run (argv[0] = `server`).
std::vector<std::string> SingleServerArgv(const CompareRun& run, const std::string& server,
                                          const std::string& dir);

// argv joined with spaces, words with spaces or empty quoted: for the report.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace shardctl::launcher
