#include "proxy/services/options.h"

#include <arpa/inet.h>

#include <algorithm>

#include "common/duration.h"
#include "common/man_page.h"
#include "common/numbers.h"
#include "common/size.h"

namespace shardctl::proxy {

std::string_view ReadFromName(ReadFrom mode) {
  switch (mode) {
    case ReadFrom::kPreferReplica:
      return "prefer-replica";
    case ReadFrom::kReplica:
      return "replica";
    case ReadFrom::kPrimary:
      break;
  }
  return "primary";
}

namespace {

using common::Error;
using common::Result;

Result<int64_t> ParseNumber(std::string_view flag, std::string_view text, int64_t low,
                            int64_t high) {
  std::optional<int64_t> value = common::ParseIntegerIn(text, low, high);
  if (!value) {
    return Error(std::string(flag) + ": expected a number from " + std::to_string(low) + " to " +
                 std::to_string(high) + ", got \"" + std::string(text) + "\"");
  }
  return *value;
}

Result<std::chrono::milliseconds> ParsePositiveDuration(std::string_view flag,
                                                        std::string_view text) {
  auto duration = common::ParseDuration(text);
  if (!duration) return duration.error().Context(flag);
  if (duration->count() <= 0) {
    return Error(std::string(flag) + ": must be more than 0 (e.g. 5s), got \"" + std::string(text) +
                 "\"");
  }
  return *duration;
}

// Stores `value`, a number from `low` to `high`, in `field`.
template <typename Field>
common::Status SetNumber(Field& field, std::string_view flag, std::string_view value, int64_t low,
                         int64_t high) {
  auto number = ParseNumber(flag, value, low, high);
  if (!number) return number.error();
  field = static_cast<Field>(*number);
  return common::Ok();
}

// Stores `value`, a size of at least 1kb, in `field`; `example` shows one in the error.
common::Status SetBufferSize(uint64_t& field, std::string_view flag, std::string_view value,
                             std::string_view example) {
  auto bytes = common::ParseSize(value);
  if (!bytes || *bytes < 1024) {
    return Error(std::string(flag) + ": expected a size of at least 1kb (e.g. " +
                 std::string(example) + "), got \"" + std::string(value) + "\"");
  }
  field = *bytes;
  return common::Ok();
}

common::Status SetDuration(std::chrono::milliseconds& field, std::string_view flag,
                           std::string_view value) {
  auto duration = ParsePositiveDuration(flag, value);
  if (!duration) return duration.error();
  field = *duration;
  return common::Ok();
}

// --cluster HOST:PORT[,HOST:PORT...]: adds to the seed nodes (the flag may repeat).
common::Status AddClusterNodes(ProxyOptions& options, std::string_view value) {
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = std::min(value.find(',', start), value.size());
    auto endpoint = ParseEndpoint(value.substr(start, comma - start), "127.0.0.1");
    if (!endpoint) return endpoint.error().Context("--cluster");
    options.cluster.push_back(*endpoint);
    start = comma + 1;
  }
  return common::Ok();
}

common::Status SetListen(ProxyOptions& options, std::string_view value) {
  auto endpoint = ParseEndpoint(value, "127.0.0.1");
  if (!endpoint) return endpoint.error().Context("--listen");
  options.listen = *endpoint;
  return common::Ok();
}

common::Status SetReadFrom(ProxyOptions& options, std::string_view value) {
  const ReadFrom modes[] = {ReadFrom::kPrimary, ReadFrom::kPreferReplica, ReadFrom::kReplica};
  const auto* mode = std::find_if(std::begin(modes), std::end(modes),
                                  [&](ReadFrom m) { return ReadFromName(m) == value; });
  if (mode == std::end(modes)) {
    return Error("--read-from: expected primary, prefer-replica or replica, got \"" +
                 std::string(value) + "\"");
  }
  options.read_from = *mode;
  return common::Ok();
}

common::Status SetMetricsBind(ProxyOptions& options, std::string_view value) {
  const std::string host(value);
  unsigned char address[sizeof(in6_addr)];
  if (inet_pton(AF_INET, host.c_str(), address) != 1 &&
      inet_pton(AF_INET6, host.c_str(), address) != 1) {
    return Error("--metrics-bind: expected an IP address (e.g. 127.0.0.1 or ::1), got \"" + host +
                 "\"");
  }
  options.metrics_bind = host;
  return common::Ok();
}

common::Status SetPath(std::string& field, std::string_view flag, std::string_view value) {
  if (value.empty()) return Error(std::string(flag) + ": expected a file name");
  field = std::string(value);
  return common::Ok();
}

// --tls-*: the three files together, and the modes only with them.
common::Status CheckTls(const ProxyOptions& options) {
  const common::TlsFiles& tls = options.tls;
  const int given =
      !tls.cert_file.empty() + !tls.key_file.empty() + static_cast<int>(!tls.ca_file.empty());
  if (given != 0 && given != 3) {
    return Error(
        "--tls-cert, --tls-key and --tls-ca go together: give all three (the proxy's certificate, "
        "its key, and the CA that signed the shards' and clients' certificates)");
  }
  if (given == 0 && options.tls_auth_clients != common::TlsClientCertificates::kNo) {
    return Error("--tls-auth-clients needs --tls-cert, --tls-key and --tls-ca");
  }
  return common::Ok();
}

// Applies one flag that takes a value.
common::Status ApplyFlag(ProxyOptions& options, std::string_view flag, std::string_view value) {
  if (flag == "--cluster") return AddClusterNodes(options, value);
  if (flag == "--listen") return SetListen(options, value);
  if (flag == "--threads") return SetNumber(options.threads, flag, value, 1, 256);
  if (flag == "--max-clients") return SetNumber(options.max_clients, flag, value, 1, 1000000);
  if (flag == "--max-pending") return SetNumber(options.max_pending, flag, value, 1, 1000000);
  if (flag == "--max-client-buffer") {
    return SetBufferSize(options.max_client_buffer, flag, value, "64mb");
  }
  if (flag == "--read-from") return SetReadFrom(options, value);
  if (flag == "--pubsub-buffer-limit") {
    return SetBufferSize(options.pubsub_buffer_limit, flag, value, "32mb");
  }
  if (flag == "--timeout") return SetDuration(options.backend_timeout, flag, value);
  if (flag == "--refresh-interval") return SetDuration(options.refresh_interval, flag, value);
  if (flag == "--auth-file") {
    options.auth_file = std::string(value);
    return common::Ok();
  }
  if (flag == "--tls-cert") return SetPath(options.tls.cert_file, flag, value);
  if (flag == "--tls-key") return SetPath(options.tls.key_file, flag, value);
  if (flag == "--tls-ca") return SetPath(options.tls.ca_file, flag, value);
  if (flag == "--tls-auth-clients") {
    auto mode = common::ParseTlsClientCertificates(value);
    if (!mode) {
      return Error("--tls-auth-clients: expected no, yes or optional, got \"" + std::string(value) +
                   "\"");
    }
    options.tls_auth_clients = *mode;
    return common::Ok();
  }
  if (flag == "--tls-to-shards") {
    if (value != "yes" && value != "no") {
      return Error("--tls-to-shards: expected yes or no, got \"" + std::string(value) + "\"");
    }
    options.tls_to_shards = value == "yes";
    return common::Ok();
  }
  if (flag == "--metrics-port") return SetNumber(options.metrics_port, flag, value, 1, 65535);
  if (flag == "--metrics-bind") return SetMetricsBind(options, value);
  if (flag == "--pidfile") {
    options.pidfile = std::string(value);
    return common::Ok();
  }
  return Error("unknown flag " + std::string(flag) + " (see shardproxy --help)");
}

}  // namespace

std::vector<common::CompletionFlag> ProxyFlags() {
  using common::FlagValue;
  std::vector<common::CompletionFlag> flags;
  for (const char* flag : {"auth-file", "pidfile", "tls-cert", "tls-key", "tls-ca"}) {
    flags.push_back({flag, FlagValue::kFile});
  }
  for (const char* flag :
       {"cluster", "listen", "threads", "max-clients", "max-pending", "max-client-buffer",
        "read-from", "pubsub-buffer-limit", "timeout", "refresh-interval", "metrics-port",
        "metrics-bind", "tls-auth-clients", "tls-to-shards"}) {
    flags.push_back({flag, FlagValue::kAny});
  }
  for (const char* flag : {"quiet", "allow-no-auth", "version", "help"}) flags.push_back({flag});
  return flags;
}

Result<ProxyOptions> ParseProxyArgs(std::span<const std::string> args) {
  ProxyOptions options;
  if (!args.empty() && args[0] == "--help-man") {
    options.man_page = true;
    return options;
  }
  if (!args.empty() && args[0] == "--help-complete") {
    options.complete = std::vector<std::string>(args.begin() + 1, args.end());
    return options;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      options.help = true;
      return options;
    }
    if (arg == "--version") {
      options.version = true;
      return options;
    }
    if (arg == "--quiet") {
      options.quiet = true;
      continue;
    }
    if (arg == "--allow-no-auth") {
      options.allow_no_auth = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      return Error("unexpected argument \"" + std::string(arg) + "\" (see shardproxy --help)");
    }
    std::string_view flag = arg;
    std::string_view value;
    if (const size_t eq = arg.find('='); eq != std::string_view::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size() && !std::string_view(args[i + 1]).starts_with("--")) {
      value = args[++i];
    } else {
      return Error(std::string(arg) + " needs a value (see shardproxy --help)");
    }
    if (auto applied = ApplyFlag(options, flag, value); !applied) return applied.error();
  }
  if (options.cluster.empty()) {
    return Error(
        "--cluster is required: the address of any node of the cluster, e.g. "
        "--cluster 127.0.0.1:7000");
  }
  if (auto tls = CheckTls(options); !tls) return tls.error();
  return options;
}

std::string ProxyHelpText() {
  return R"(shardproxy: one Redis endpoint in front of a Redis Cluster, for clients that do not
speak the cluster protocol (redis-cli without -c, redis-benchmark without --cluster, redis-py's
plain Redis client, PHP, scripts). Commands are routed by key slot; MGET, MSET, DEL, UNLINK,
EXISTS and TOUCH across slots are split by slot and their replies merged; RESP2 and RESP3 (HELLO 3).

Usage:
  shardproxy --cluster HOST:PORT [--listen ADDR:PORT] [--threads N] [options]

Examples:
  shardproxy --cluster 127.0.0.1:7000 --listen 127.0.0.1:6379 --threads 2
  redis-cli -p 6379 set foo bar
  shardproxy --cluster 127.0.0.1:7000 --tls-cert proxy.crt --tls-key proxy.key --tls-ca ca.crt
  shardctl up --shards 8 --proxy-port 6379     # the same, run and healed by shardctl

Options:
  --cluster HOST:PORT[,HOST:PORT]  cluster nodes to read the slot map from (required; repeatable)
  --listen ADDR:PORT       where clients connect (default 127.0.0.1:6379; [::1]:6379 for IPv6)
  --threads N              event-loop threads, each with its own listener (SO_REUSEPORT) and its
                           own connection to every shard (default: the CPUs it may run on)
  --max-clients N          client connections over all threads (default 10000); more are
                           refused with "-ERR max number of clients reached"
  --max-pending N          requests in flight per client before the proxy stops reading from it
                           (default 1024); reading resumes as replies drain
  --max-client-buffer SIZE reply bytes held for a slow client before reading from it stops
                           (default 64mb)
  --read-from MODE         primary (default), prefer-replica (read-only commands to a replica
                           of the slot, except slots this client wrote in the last second), or
                           replica (always a replica); both fall back to the primary when the
                           slot has no healthy replica. Replica reads may be slightly stale.
  --pubsub-buffer-limit SIZE  unread pub/sub messages held for a subscriber before it is
                           disconnected, so a slow subscriber cannot grow the proxy (32mb)
  --timeout DURATION       how long a shard may take to answer (default 5s); then the proxy
                           drops that connection and the waiting clients get an error
  --refresh-interval DURATION  how often the slot map is re-read (default 5s); MOVED replies and
                           connection errors also trigger a (rate-limited) refresh
  --auth-file PATH         passwords, one per line (keep the file mode 0600):
                             requirepass PASS        the default user's password
                             user NAME PASS          more users (AUTH NAME PASS, HELLO 3 AUTH ...)
                             backend-password PASS   sent to the shards (AUTH), never shown
                             backend-user NAME       the shards' ACL user for that password
                           Without users, clients need no AUTH.
  --allow-no-auth          listen on a non-loopback address without any client password
                           (refused by default)
  --tls-cert FILE --tls-key FILE --tls-ca FILE
                           serve TLS only (no plain RESP) with this certificate and key, and
                           speak TLS to the shards, trusting certificates signed by the CA (and
                           presenting the certificate, for shards with tls-auth-clients yes);
                           SIGHUP reads the files again (renewed certificates) for new
                           connections. redis-cli --tls --cacert CA ...
  --tls-auth-clients MODE  no (default): clients need no certificate; yes: clients must present
                           one signed by --tls-ca; optional: checked when presented
  --tls-to-shards yes|no   no: plain RESP to the shards (they serve no TLS), TLS to clients only
                           (default yes)
  --metrics-port PORT      serve Prometheus metrics at http://ADDR:PORT/metrics: commands and
                           their duration per command family, client connections, shard
                           connection errors, redirects, the slot map version (default: off)
  --metrics-bind ADDR      the address of --metrics-port (default 127.0.0.1)
  --pidfile PATH           write the process id here
  --quiet                  log only errors
  --version, --help

Keyspace commands go to every primary and are merged (DBSIZE, KEYS, FLUSHALL, SCRIPT LOAD, ...);
SCAN walks the shards one after the other. MULTI/EXEC (keys in one slot), WATCH, blocking
commands (BLPOP, XREAD BLOCK, ...) and WAIT work; the last three on connections pinned to the
client, from a small per-thread pool. Pub/sub: (P)SUBSCRIBE fanned in over one subscriber
connection per thread, SSUBSCRIBE at the channel's shard, PUBLISH/SPUBLISH routed. Unsupported commands get an error naming them. Every
command: docs/proxy-commands.md. Exit codes: 0 clean shutdown (SIGINT/SIGTERM), 1 runtime
failure (cannot reach the cluster, cannot listen), 2 bad arguments.
)";
}

std::string ProxyManPage(const std::string& version_line) {
  return common::RenderManPage({.program = "shardproxy",
                                .source = version_line,
                                .help = common::SplitHelp(ProxyHelpText(), "shardproxy"),
                                .see_also = {"shardctl(1)", "redis-cli(1)"}});
}

}  // namespace shardctl::proxy
