// `shardctl bench run`: parse, check the target, populate if the workload asks, run, report.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "common/secrets.h"
#include "launcher/bench/args.h"
#include "launcher/bench/client.h"
#include "launcher/bench/cluster.h"
#include "launcher/bench/commands.h"
#include "launcher/bench/help.h"
#include "launcher/bench/report.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/term/exit_codes.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {
namespace {

constexpr std::chrono::milliseconds kProbeTimeout{3000};

// Set by the first SIGINT/SIGTERM: the run stops early and still reports. A second one kills.
std::atomic<bool> g_stop_requested{false};

void OnStopSignal(int signal) {
  g_stop_requested.store(true);
  std::signal(signal, SIG_DFL);
}

// CPUs in `cpus` this process may not run on, as a list ("" when all are allowed).
std::string UnavailableCpus(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return "";
  std::string missing;
  for (int cpu : cpus) {
    if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      if (!missing.empty()) missing += ',';
      missing += std::to_string(cpu);
    }
  }
  return missing;
}

// Reaches the target once before any thread starts, so "cannot connect" is one clear line.
common::Result<std::optional<SlotTable>> ProbeTarget(const BenchOptions& options) {
  const Access access{.password = options.password, .tls = options.tls};
  if (options.cluster) {
    auto slots = FetchSlotTable(access, options.host, options.port, kProbeTimeout);
    if (!slots.ok()) return slots.error();
    return std::optional<SlotTable>(std::move(slots).value());
  }
  auto connection = RedisConnection::Connect(access, options.host, options.port, kProbeTimeout);
  if (!connection.ok()) {
    return common::Error("cannot connect to " + connection.error().message() +
                         " (is the server running? see --host and --port)");
  }
  if (auto pong = connection->Run({"PING"}); !pong.ok()) {
    return pong.error().Context(options.host + ":" + std::to_string(options.port));
  }
  return std::optional<SlotTable>();
}

// Prints the progress line to stderr: rewritten in place on a terminal, a line each otherwise.
std::function<void(const LiveSecond&)> ProgressPrinter(const BenchOptions& options, bool terminal,
                                                       const std::string& label) {
  if (!terminal && !options.progress) return {};
  return [&options, terminal, label](const LiveSecond& live) {
    std::string line = label + ProgressLine(live, options);
    if (terminal) {
      std::fprintf(stderr, "\r%-78s", line.c_str());
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  };
}

int Fail(const std::string& message, int code) {
  PrintError("bench run: " + message);
  return code;
}

}  // namespace

common::Status PopulateKeys(const BenchOptions& options, const SlotTable* slots,
                            const std::atomic<bool>* stop, bool terminal) {
  std::vector<Phase> phases = PhasesOf(options.workload);
  phases.resize(1);  // populate comes first when the workload has it
  LoadSpec spec{.options = &options,
                .phases = phases,
                .bounded = false,
                .pipeline = std::max(options.pipeline, 16),
                .slots = slots,
                .stop = stop};
  if (options.progress || terminal) {
    std::fprintf(stderr, "populating %llu keys\n",
                 static_cast<unsigned long long>(options.workload.set_keyspace));
  }
  auto result = RunLoad(spec, ProgressPrinter(options, terminal, "populate "));
  if (terminal) std::fprintf(stderr, "\n");
  if (!result.ok()) return result.error().Context("populate");
  if (uint64_t errors = result->phases[0].errors; errors > 0) {
    return common::Error("populate: " + std::to_string(errors) +
                         " SETs failed (first error: " + result->first_error + ")");
  }
  return common::Ok();
}

common::Result<LoadResult> MeasureLoad(const BenchOptions& options, const SlotTable* slots,
                                       const std::atomic<bool>* stop,
                                       const std::function<void(const LiveSecond&)>& on_second) {
  std::vector<Phase> phases = PhasesOf(options.workload);
  std::erase_if(phases, [](const Phase& phase) { return !phase.measured; });
  LoadSpec spec{.options = &options,
                .phases = phases,
                .bounded = true,
                .pipeline = options.pipeline,
                .slots = slots,
                .stop = stop};
  return RunLoad(spec, on_second);
}

int RunBench(const std::vector<std::string>& args) {
  auto options = ParseBenchArgs(args);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  if (options->help) {
    std::cout << BenchHelpText("bench");
    return kExitOk;
  }
  if (std::string missing = UnavailableCpus(options->cpus); !missing.empty()) {
    return Fail("--cpus: CPU(s) " + missing + " not available to this process", kExitUsage);
  }
  if (!options->password_file.empty()) {
    auto password = common::ReadPasswordFile(options->password_file, "--password-file");
    if (!password.ok()) return Fail(password.error().message(), kExitUsage);
    options->password = std::move(password).value();
  }
  if (!options->tls_files.ca_file.empty()) {
    // The probe, the slot-table read and every load connection speak TLS.
    auto tls = common::TlsContext::ForClient(options->tls_files);
    if (!tls.ok()) return Fail(tls.error().message(), kExitUsage);
    options->tls = *std::move(tls);
  }
  auto slots = ProbeTarget(*options);
  if (!slots.ok()) return Fail(slots.error().message(), kExitRuntime);
  const SlotTable* table = slots->has_value() ? &**slots : nullptr;
  // The in-place progress line: on a terminal, and never under --json.
  bool terminal = ProgressAllowed(options->json);
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  if (options->workload.populate) {
    if (auto status = PopulateKeys(*options, table, &g_stop_requested, terminal); !status.ok()) {
      return Fail(status.error().message(), kExitRuntime);
    }
    if (g_stop_requested) return Fail("interrupted while populating; nothing measured", 130);
  }
  auto result =
      MeasureLoad(*options, table, &g_stop_requested, ProgressPrinter(*options, terminal, ""));
  if (terminal) std::fprintf(stderr, "\n");
  if (!result.ok()) return Fail(result.error().message(), kExitRuntime);
  if (options->json) {
    std::cout << BenchJson(*options, *result).dump(2) << "\n";
  } else {
    std::cout << BenchText(*options, *result);
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
