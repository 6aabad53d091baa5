// shardproxy's command line: what it connects to, where it listens, its limits.
//
// Pure: argv in, ProxyOptions or one error out; the help text. main.cc applies the result.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/completion.h"
#include "common/endpoint.h"
#include "common/result.h"
#include "common/tls.h"

namespace shardctl::proxy {

// The one endpoint type and reader of launcher, proxy and bench.
using common::Endpoint;
using common::ParseEndpoint;

// Where read-only commands go (--read-from).
enum class ReadFrom {
  kPrimary,        // everything to the slot's primary (the default)
  kPreferReplica,  // reads to a replica, except a slot this client wrote in the last second
  kReplica,        // reads always to a replica
};  // both replica modes fall back to the primary when the slot has no healthy replica

std::string_view ReadFromName(ReadFrom mode);

struct ProxyOptions {
  std::vector<Endpoint> cluster;             // seed nodes; --cluster may repeat or list with commas
  Endpoint listen{"127.0.0.1", 6379};        // --listen
  std::optional<int> threads;                // --threads; default: the CPUs the process may run on
  int max_clients = 10000;                   // --max-clients, over all threads
  size_t max_pending = 1024;                 // --max-pending: requests in flight per client
  uint64_t max_client_buffer = 64ull << 20;  // --max-client-buffer: reply bytes held per client
  uint64_t pubsub_buffer_limit = 32ull << 20;  // --pubsub-buffer-limit: unsent messages per client
  ReadFrom read_from = ReadFrom::kPrimary;     // --read-from
  // --hot-keys: keys each worker tracks for PROXY HOTKEYS (key_load.h); 0: no key or slot
  // counting at all.
  size_t hot_keys = 64;
  // --hot-keys-sample: about one key in N is offered to the top-K (KeyLoad); 1: every key.
  uint32_t hot_keys_sample = 8;
  std::chrono::milliseconds backend_timeout{5000};   // --timeout
  std::chrono::milliseconds refresh_interval{5000};  // --refresh-interval
  std::string pidfile;                               // --pidfile
  std::optional<int> metrics_port;                   // --metrics-port: serve Prometheus /metrics
  std::string metrics_bind = "127.0.0.1";            // --metrics-bind: the address of /metrics
  std::string auth_file;       // --auth-file: users and the backend password (auth.h)
  bool allow_no_auth = false;  // --allow-no-auth: listen beyond loopback without one
  // TLS (--tls-cert, --tls-key, --tls-ca): to clients, and to the shards unless
  // --tls-to-shards no. All three or none.
  common::TlsFiles tls;
  common::TlsClientCertificates tls_auth_clients = common::TlsClientCertificates::kNo;
  bool tls_to_shards = true;  // --tls-to-shards yes|no
  bool tls_enabled() const { return !tls.cert_file.empty(); }
  bool quiet = false;  // --quiet: no log lines but errors
  bool help = false;
  bool version = false;
  bool man_page = false;  // --help-man (hidden): the man page; the build runs it
  std::optional<std::vector<std::string>> complete;  // --help-complete WORDS... (hidden)
};

// Parses shardproxy's arguments (without argv[0]). Errors are one line naming the flag and the
// fix, e.g. "--threads: expected a number from 1 to 256, got \"x\"".
common::Result<ProxyOptions> ParseProxyArgs(std::span<const std::string> args);

// The --help text.
std::string ProxyHelpText();

// shardproxy(1) in roff, the --help text as it is; `version_line` goes in the footer.
std::string ProxyManPage(const std::string& version_line);

// Every flag ParseProxyArgs accepts, with what its value is (for shell completion).
std::vector<common::CompletionFlag> ProxyFlags();

}  // namespace shardctl::proxy
