// Flags of `shardctl bench run`, parsed into BenchOptions. Pure: argv in, options or a usage
// error (naming the flag and the fix) out.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/completion.h"
#include "common/flags.h"
#include "common/result.h"
#include "common/tls.h"
#include "launcher/bench/rate.h"
#include "launcher/bench/workload.h"

namespace shardctl::launcher {

// Everything a load-generator run needs, defaults filled in.
struct BenchOptions {
  bool help = false;  // --help: print the help, run nothing
  std::string host = "127.0.0.1";
  int port = 6379;
  bool cluster = false;        // --cluster HOST:PORT: route by slot, follow MOVED and ASK
  std::string password_file;   // --password-file: every connection logs in with its password
  std::string password;        // read from password_file by the command, not by the parser
  common::TlsFiles tls_files;  // --tls-ca (and --tls-cert, --tls-key for client certificates)
  // Loaded from tls_files by the command: every connection speaks TLS with it. Null: plain.
  std::shared_ptr<const common::TlsContext> tls;
  int threads = 1;
  int connections = 50;  // per thread
  int pipeline = 1;      // requests in flight per connection
  Workload workload;
  double scale = 1;
  std::vector<RateStep> rate;  // empty: closed loop (as fast as replies come back)
  std::optional<std::chrono::milliseconds> duration;  // bound on the measured phases
  std::optional<uint64_t> requests;                   // bound on the measured requests
  bool json = false;
  bool progress = false;  // force the progress line even when stderr is no terminal
  std::vector<int> cpus;  // pin generator thread i to cpus[i % size]
  uint64_t seed = 1;
};

// The default bound when neither --duration, --requests nor --rate-profile gives one.
inline constexpr std::chrono::milliseconds kDefaultBenchDuration{10000};

// The rows ParseBenchArgs reads flags with (bound to options nobody reads): for --help, whose
// option lists are made from them, and for `bench compare`, which passes some on.
const std::vector<common::Flag>& BenchRunRows();

// Every flag `bench run` accepts, from its rows (for shell completion).
std::vector<common::CompletionFlag> BenchRunFlags();

// Parses the arguments after "bench" ("run" first). Errors are usage errors.
common::Result<BenchOptions> ParseBenchArgs(const std::vector<std::string>& args);

}  // namespace shardctl::launcher
