#include "launcher/bench/args.h"

#include <algorithm>
#include <functional>

#include "common/cpu_list.h"
#include "common/duration.h"
#include "common/endpoint.h"
#include "common/flags.h"
#include "common/numbers.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;
using common::Status;

namespace {

// What the flags say before the workload is resolved.
struct RawBench {
  BenchOptions options;
  std::string workload = "custom";
  WorkloadOverrides overrides;
  KeyDistribution keys;  // --key-distribution
  bool rate_given = false;
  bool profile_given = false;
};

using common::Flag;
using common::FlagType;
using Apply = std::function<Status(const std::string&)>;

Status ParseClusterSeed(const std::string& value, BenchOptions& options) {
  auto seed = common::ParseEndpoint(value, "127.0.0.1");
  if (!seed.ok()) return seed.error().Context("--cluster");
  options.host = seed->host;
  options.port = seed->port;
  options.cluster = true;
  return common::Ok();
}

Status SetCpus(const std::string& value, BenchOptions& options) {
  auto cpus = common::ParseCpuList(value);
  if (!cpus.ok()) return cpus.error().Context("--cpus");
  if (cpus->empty()) return Error("--cpus: the list is empty (e.g. --cpus 0-1)");
  options.cpus = std::move(cpus).value();
  return common::Ok();
}

// Where the load goes.
std::vector<Flag> TargetRows(RawBench& r) {
  const std::string group = "Target";
  return {
      common::TextFlag("host", FlagType::kText, "HOST", r.options.host,
                       "plain server address (default: 127.0.0.1)", group),
      {.name = "port",
       .type = FlagType::kNumber,
       .value_name = "PORT",
       .help = "plain server port (default: 6379)",
       .apply = common::StoreNumber<int>(r.options.port, "port", 1, 65535),
       .group = group},
      {.name = "cluster",
       .type = FlagType::kText,
       .value_name = "HOST:PORT",
       .help = "any node of a cluster; enables cluster routing",
       .apply = [&r](const std::string& v) { return ParseClusterSeed(v, r.options); },
       .group = group},
      {.name = "password-file",
       .type = FlagType::kFile,
       .help = "log in with the password in FILE (mode 0600), e.g. the file given to shardctl "
               "up --password-file",
       .apply = common::StoreFile(r.options.password_file, "password-file"),
       .group = group},
      {.name = "tls-ca",
       .type = FlagType::kFile,
       .help = "speak TLS, trusting servers whose certificate this CA signed (e.g. a deployment "
               "of shardctl up --tls-ca, or shardproxy with --tls-*)",
       .apply = common::StoreFile(r.options.tls_files.ca_file, "tls-ca"),
       .group = group},
      {.name = "tls-cert",
       .type = FlagType::kFile,
       .help = "a client certificate (with --tls-key), for servers with tls-auth-clients",
       .apply = common::StoreFile(r.options.tls_files.cert_file, "tls-cert"),
       .group = group},
      {.name = "tls-key",
       .type = FlagType::kFile,
       .help = "the client certificate's key",
       .apply = common::StoreFile(r.options.tls_files.key_file, "tls-key"),
       .group = group},
  };
}

// How much of it at once.
std::vector<Flag> ConcurrencyRows(RawBench& r) {
  const std::string group = "Concurrency";
  return {
      {.name = "threads",
       .type = FlagType::kNumber,
       .help = "generator threads, one event loop each (default: 1)",
       .apply = common::StoreNumber<int>(r.options.threads, "threads", 1, 256),
       .group = group},
      {.name = "connections",
       .type = FlagType::kNumber,
       .help = "connections per thread (default: 50); in cluster mode one per primary",
       .apply = common::StoreNumber<int>(r.options.connections, "connections", 1, 10000),
       .group = group},
      {.name = "pipeline",
       .type = FlagType::kNumber,
       .help = "requests in flight per connection (default: 1; redis-vs-dragonfly: 30)",
       .apply = common::StoreNumber<int>(r.overrides.pipeline, "pipeline", 1, 10000),
       .group = group},
      {.name = "cpus",
       .type = FlagType::kText,
       .value_name = "LIST",
       .help = "pin thread i to the i-th CPU of LIST, e.g. 2-3 (default: not pinned)",
       .apply = [&r](const std::string& v) { return SetCpus(v, r.options); },
       .group = group},
  };
}

Status SetScale(const std::string& value, RawBench& r) {
  std::optional<double> scale = common::ParseDecimal(value);
  if (!scale) return Error("--scale: \"" + value + "\" is not a number (e.g. --scale 0.01)");
  r.options.scale = *scale;
  return common::Ok();
}

Status SetRatio(const std::string& value, RawBench& r) {
  auto ratio = ParseRatio(value);
  if (!ratio.ok()) return ratio.error();
  r.overrides.get_fraction = *ratio;
  return common::Ok();
}

// What the requests are.
std::vector<Flag> WorkloadRows(RawBench& r) {
  const std::string group = "Workload";
  return {
      {.name = "workload",
       .type = FlagType::kText,
       .value_name = "NAME",
       .help = "set-then-get        1 KB values, 3M keys: one SET per key, then GETs\n"
               "redis-vs-dragonfly  256 B values, 1M keys, pipeline 30: SETs, then GETs\n"
               "mixed-80-20         80% GET / 20% SET, values ~N(1 KB, 340 B) clipped to\n"
               "                    4..2048 B, GETs over 3.75M keys, SETs over 3M keys,\n"
               "                    populated first so ~80% of GETs hit\n"
               "custom (default)    --ratio 1:1, 256 B values, 100k keys",
       .apply =
           [&r](const std::string& v) {
             r.workload = v;
             return common::Ok();
           },
       .group = group},
      {.name = "scale",
       .type = FlagType::kText,
       .value_name = "F",
       .help = "multiply the preset's key spaces by F, e.g. 0.01 for a laptop",
       .apply = [&r](const std::string& v) { return SetScale(v, r); },
       .group = group},
      {.name = "ratio",
       .type = FlagType::kText,
       .value_name = "GET:SET",
       .help = "mix of GETs and SETs, e.g. 1:4 = 20% GETs, 0:1 = only SETs",
       .apply = [&r](const std::string& v) { return SetRatio(v, r); },
       .group = group},
      {.name = "value-size",
       .type = FlagType::kNumber,
       .value_name = "BYTES",
       .help = "fixed value size",
       .apply = common::StoreNumber<uint32_t>(r.overrides.value_size, "value-size", 1, 512u << 20),
       .group = group},
      {.name = "keyspace",
       .type = FlagType::kNumber,
       .help = "keys key:000000000000 .. N-1 (both GETs and SETs)",
       .apply = common::StoreNumber<uint64_t>(r.overrides.keyspace, "keyspace", 1, 999999999999ull),
       .group = group},
      {.name = "populate",
       .help = "write every SET key once, unmeasured, before the run",
       .apply =
           [&r](const std::string&) {
             r.overrides.populate = true;
             return common::Ok();
           },
       .group = group},
      {.name = "key-distribution",
       .type = FlagType::kText,
       .value_name = "D",
       .help = "how requests pick keys: uniform (default), zipf:S (weight 1/rank^S over the "
               "key space, e.g. zipf:0.99) or hotkeys:N:P (N hot keys take P% of requests, "
               "e.g. hotkeys:8:40); the hot keys follow --seed",
       .apply =
           [&r](const std::string& v) {
             auto keys = ParseKeyDistribution(v);
             if (!keys.ok()) return Status(keys.error().Context("--key-distribution"));
             r.keys = *keys;
             return common::Ok();
           },
       .group = group},
      {.name = "seed",
       .type = FlagType::kNumber,
       .help = "random seed; the same seed sends the same keys (default: 1)",
       .apply = common::StoreNumber<uint64_t>(r.options.seed, "seed", 0, UINT64_MAX),
       .group = group},
  };
}

Status SetRate(const std::string& value, RawBench& r) {
  auto rate = ParseRate(value);
  if (!rate.ok()) return rate.error().Context("--rate");
  r.options.rate = {{*rate, std::chrono::milliseconds(0)}};
  r.rate_given = true;
  return common::Ok();
}

Status SetRateProfile(const std::string& value, RawBench& r) {
  auto steps = ParseRateProfile(value);
  if (!steps.ok()) return steps.error().Context("--rate-profile");
  r.options.rate = std::move(steps).value();
  r.profile_given = true;
  return common::Ok();
}

Status SetDuration(const std::string& value, RawBench& r) {
  auto duration = common::ParseDuration(value);
  if (!duration.ok()) return duration.error().Context("--duration");
  if (duration->count() <= 0) return Error("--duration must be above 0 (e.g. 10s)");
  r.options.duration = *duration;
  return common::Ok();
}

// How fast and for how long.
std::vector<Flag> PaceRows(RawBench& r) {
  const std::string group = "Pace";
  return {
      {.name = "rate",
       .type = FlagType::kText,
       .value_name = "R",
       .help = "open loop at R ops/s in total (50000, 50k, 1.5m); latency counts from each "
               "request's intended send time, so stalls are not hidden",
       .apply = [&r](const std::string& v) { return SetRate(v, r); },
       .group = group},
      {.name = "rate-profile",
       .type = FlagType::kText,
       .value_name = "STEPS",
       .help = "open loop in steps, e.g. 50k:10s,150k:5s,50k:10s (a spike)",
       .apply = [&r](const std::string& v) { return SetRateProfile(v, r); },
       .group = group},
      {.name = "duration",
       .type = FlagType::kDuration,
       .value_name = "D",
       .help = "stop sending after D (default: 10s, or the profile's length)",
       .apply = [&r](const std::string& v) { return SetDuration(v, r); },
       .group = group},
      {.name = "requests",
       .type = FlagType::kNumber,
       .help = "stop after N requests (with no --duration, only this bounds the run)",
       .apply = common::StoreNumber<uint64_t>(r.options.requests, "requests", 1, UINT64_MAX / 2),
       .group = group},
  };
}

// What is printed, and --help.
std::vector<Flag> OutputRows(RawBench& r) {
  const std::string group = "Output";
  return {
      common::SwitchFlag("json", r.options.json,
                         "one JSON document on stdout: ops, ops_per_sec, errors, hits, misses, "
                         "latency_us {p50, p90, p99, p99_9, max, mean}, per_second, phases, "
                         "moved, asked, first_error, interrupted and the settings used",
                         group),
      common::SwitchFlag("progress", r.options.progress,
                         "the progress line (ops/s, p99, time) on stderr even when it is no "
                         "terminal (on a terminal it is always shown)",
                         group),
      {.name = "help",
       .help = "this help",
       .apply = [&r](const std::string&) { return (r.options.help = true, common::Ok()); },
       .group = group,
       .short_name = 'h',
       .stops = true},
  };
}

std::vector<Flag> BenchRows(RawBench& raw) {
  std::vector<Flag> rows;
  for (auto part :
       {TargetRows(raw), ConcurrencyRows(raw), WorkloadRows(raw), PaceRows(raw), OutputRows(raw)}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

}  // namespace

const std::vector<common::Flag>& BenchRunRows() {
  static RawBench unused;
  static const std::vector<Flag> rows = BenchRows(unused);
  return rows;
}

std::vector<common::CompletionFlag> BenchRunFlags() {
  return common::CompletionFlags(BenchRunRows());
}

Result<BenchOptions> ParseBenchArgs(const std::vector<std::string>& args) {
  RawBench raw;
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    raw.options.help = true;
    return raw.options;
  }
  if (args[0] != "run") {
    return Error("unknown bench command \"" + args[0] + "\" (try shardctl bench run --help)");
  }
  const common::FlagTable table{.command = "bench run",
                                .help_hint = "see shardctl bench run --help",
                                .flags = BenchRows(raw)};
  const std::span<const std::string> flags(args.begin() + 1, args.end());
  if (auto status = common::ParseFlags(table, flags); !status.ok()) return status.error();
  BenchOptions& options = raw.options;
  if (options.help) return options;
  if (raw.rate_given && raw.profile_given) {
    return Error("give either --rate or --rate-profile, not both");
  }
  auto workload = ResolveWorkload(raw.workload, options.scale, raw.overrides);
  if (!workload.ok()) return workload.error();
  options.workload = std::move(workload).value();
  options.workload.keys = raw.keys;
  options.workload.key_seed = options.seed;
  options.pipeline = options.workload.pipeline;
  if (!options.duration && raw.profile_given) options.duration = ProfileDuration(options.rate);
  if (!options.duration && !options.requests) options.duration = kDefaultBenchDuration;
  const common::TlsFiles& tls = options.tls_files;
  if (tls.ca_file.empty() && (!tls.cert_file.empty() || !tls.key_file.empty())) {
    return Error(
        "--tls-cert/--tls-key need --tls-ca (the CA that signed the server's certificate)");
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return Error("--tls-cert and --tls-key go together (a client certificate and its key)");
  }
  return options;
}

}  // namespace shardctl::launcher
