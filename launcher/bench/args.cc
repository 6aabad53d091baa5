#include "launcher/bench/args.h"

#include <algorithm>
#include <functional>
#include <map>

#include "common/cpu_list.h"
#include "common/duration.h"
#include "common/endpoint.h"
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
  bool rate_given = false;
  bool profile_given = false;
};

template <typename Int>
Status ParseInt(const std::string& flag, const std::string& value, Int low, Int high, Int& out) {
  std::optional<Int> parsed = common::ParseIntegerIn(value, low, high);
  if (!parsed) {
    return Error("--" + flag + ": \"" + value + "\" is not a whole number from " +
                 std::to_string(low) + " to " + std::to_string(high));
  }
  out = *parsed;
  return common::Ok();
}

// A file flag's value: not empty.
Status SetFile(const std::string& flag, const std::string& value, std::string& out) {
  if (value.empty()) return Error("--" + flag + ": give a file");
  out = value;
  return common::Ok();
}

Status ParseClusterSeed(const std::string& value, BenchOptions& options) {
  auto seed = common::ParseEndpoint(value, "127.0.0.1");
  if (!seed.ok()) return seed.error().Context("--cluster");
  options.host = seed->host;
  options.port = seed->port;
  options.cluster = true;
  return common::Ok();
}

using ValueHandler = std::function<Status(const std::string& flag, const std::string&, RawBench&)>;

// Where the load goes and how much of it at once.
const std::map<std::string, ValueHandler>& TargetFlags() {
  static const std::map<std::string, ValueHandler> flags = {
      {"host",
       [](auto&, auto& v, RawBench& r) {
         r.options.host = v;
         return common::Ok();
       }},
      {"port",
       [](auto& f, auto& v, RawBench& r) { return ParseInt(f, v, 1, 65535, r.options.port); }},
      {"cluster", [](auto&, auto& v, RawBench& r) { return ParseClusterSeed(v, r.options); }},
      {"password-file",
       [](auto& f, auto& v, RawBench& r) {
         if (v.empty()) return Status(Error("--" + f + ": give the file holding the password"));
         r.options.password_file = v;
         return common::Ok();
       }},
      {"tls-ca",
       [](auto& f, auto& v, RawBench& r) { return SetFile(f, v, r.options.tls_files.ca_file); }},
      {"tls-cert",
       [](auto& f, auto& v, RawBench& r) { return SetFile(f, v, r.options.tls_files.cert_file); }},
      {"tls-key",
       [](auto& f, auto& v, RawBench& r) { return SetFile(f, v, r.options.tls_files.key_file); }},
      {"threads",
       [](auto& f, auto& v, RawBench& r) { return ParseInt(f, v, 1, 256, r.options.threads); }},
      {"connections", [](auto& f, auto& v,
                         RawBench& r) { return ParseInt(f, v, 1, 10000, r.options.connections); }},
      {"pipeline",
       [](auto& f, auto& v, RawBench& r) {
         int depth = 0;
         auto status = ParseInt(f, v, 1, 10000, depth);
         r.overrides.pipeline = depth;
         return status;
       }},
      {"cpus",
       [](auto&, auto& v, RawBench& r) {
         auto cpus = common::ParseCpuList(v);
         if (!cpus.ok()) return Status(cpus.error().Context("--cpus"));
         if (cpus->empty()) return Status(Error("--cpus: the list is empty (e.g. --cpus 0-1)"));
         r.options.cpus = std::move(cpus).value();
         return common::Ok();
       }},
      {"seed", [](auto& f, auto& v,
                  RawBench& r) { return ParseInt<uint64_t>(f, v, 0, UINT64_MAX, r.options.seed); }},
  };
  return flags;
}

// What the requests are.
const std::map<std::string, ValueHandler>& WorkloadFlags() {
  static const std::map<std::string, ValueHandler> flags = {
      {"workload",
       [](auto&, auto& v, RawBench& r) {
         r.workload = v;
         return common::Ok();
       }},
      {"scale",
       [](auto&, auto& v, RawBench& r) {
         std::optional<double> scale = common::ParseDecimal(v);
         if (!scale) {
           return Status(Error("--scale: \"" + v + "\" is not a number (e.g. --scale 0.01)"));
         }
         r.options.scale = *scale;
         return common::Ok();
       }},
      {"ratio",
       [](auto&, auto& v, RawBench& r) {
         auto ratio = ParseRatio(v);
         if (!ratio.ok()) return Status(ratio.error());
         r.overrides.get_fraction = *ratio;
         return common::Ok();
       }},
      {"value-size",
       [](auto& f, auto& v, RawBench& r) {
         uint32_t size = 0;
         auto status = ParseInt<uint32_t>(f, v, 1, 512u << 20, size);
         r.overrides.value_size = size;
         return status;
       }},
      {"keyspace",
       [](auto& f, auto& v, RawBench& r) {
         uint64_t keys = 0;
         auto status = ParseInt<uint64_t>(f, v, 1, 999999999999ull, keys);
         r.overrides.keyspace = keys;
         return status;
       }},
  };
  return flags;
}

// How fast and for how long.
const std::map<std::string, ValueHandler>& PaceFlags() {
  static const std::map<std::string, ValueHandler> flags = {
      {"rate",
       [](auto&, auto& v, RawBench& r) {
         auto rate = ParseRate(v);
         if (!rate.ok()) return Status(rate.error().Context("--rate"));
         r.options.rate = {{*rate, std::chrono::milliseconds(0)}};
         r.rate_given = true;
         return common::Ok();
       }},
      {"rate-profile",
       [](auto&, auto& v, RawBench& r) {
         auto steps = ParseRateProfile(v);
         if (!steps.ok()) return Status(steps.error().Context("--rate-profile"));
         r.options.rate = std::move(steps).value();
         r.profile_given = true;
         return common::Ok();
       }},
      {"duration",
       [](auto&, auto& v, RawBench& r) {
         auto duration = common::ParseDuration(v);
         if (!duration.ok()) return Status(duration.error().Context("--duration"));
         if (duration->count() <= 0) return Status(Error("--duration must be above 0 (e.g. 10s)"));
         r.options.duration = *duration;
         return common::Ok();
       }},
      {"requests",
       [](auto& f, auto& v, RawBench& r) {
         uint64_t count = 0;
         auto status = ParseInt<uint64_t>(f, v, 1, UINT64_MAX / 2, count);
         r.options.requests = count;
         return status;
       }},
  };
  return flags;
}

// The handler of a flag that takes a value, or nullptr.
const ValueHandler* FindValueFlag(const std::string& flag) {
  for (const auto* table : {&TargetFlags(), &WorkloadFlags(), &PaceFlags()}) {
    if (auto found = table->find(flag); found != table->end()) return &found->second;
  }
  return nullptr;
}

constexpr std::string_view kSwitches[] = {"json", "progress", "populate"};

bool IsSwitch(const std::string& flag) {
  return std::find(std::begin(kSwitches), std::end(kSwitches), flag) != std::end(kSwitches);
}

void ApplySwitch(const std::string& flag, RawBench& raw) {
  if (flag == "json") raw.options.json = true;
  if (flag == "progress") raw.options.progress = true;
  if (flag == "populate") raw.overrides.populate = true;
}

Status ParseFlags(const std::vector<std::string>& args, RawBench& raw) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      raw.options.help = true;
      return common::Ok();
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      return Error("unexpected argument \"" + arg +
                   "\" (options are written --name value; see shardctl bench run --help)");
    }
    std::string flag = arg.substr(2);
    std::optional<std::string> value;
    if (size_t equals = flag.find('='); equals != std::string::npos) {
      value = flag.substr(equals + 1);
      flag.resize(equals);
    }
    const ValueHandler* handler = FindValueFlag(flag);
    if (handler == nullptr) {
      if (!IsSwitch(flag))
        return Error("unknown flag --" + flag + "; see shardctl bench run --help");
      if (value) return Error("--" + flag + " takes no value");
      ApplySwitch(flag, raw);
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
        return Error("--" + flag + " needs a value (see shardctl bench run --help)");
      }
      value = args[++i];
    }
    if (auto status = (*handler)(flag, *value, raw); !status.ok()) return status;
  }
  return common::Ok();
}

}  // namespace

std::vector<common::CompletionFlag> BenchRunFlags() {
  std::vector<common::CompletionFlag> flags;
  for (const auto* table : {&TargetFlags(), &WorkloadFlags(), &PaceFlags()}) {
    for (const auto& [name, handler] : *table) {
      const bool file = name == "password-file" || name.starts_with("tls-");
      flags.push_back({name, file ? common::FlagValue::kFile : common::FlagValue::kAny});
    }
  }
  for (std::string_view name : kSwitches) flags.push_back({std::string(name)});
  flags.push_back({"help"});
  return flags;
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
  if (auto status = ParseFlags(args, raw); !status.ok()) return status.error();
  BenchOptions& options = raw.options;
  if (options.help) return options;
  if (raw.rate_given && raw.profile_given) {
    return Error("give either --rate or --rate-profile, not both");
  }
  auto workload = ResolveWorkload(raw.workload, options.scale, raw.overrides);
  if (!workload.ok()) return workload.error();
  options.workload = std::move(workload).value();
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
