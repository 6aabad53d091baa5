#include "proxy/services/options.h"

#include <arpa/inet.h>

#include <algorithm>

#include "common/flags.h"
#include "common/man_page.h"

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

// Stores a size of at least 1kb in `field`; `example` shows one in the error.
std::function<common::Status(const std::string&)> BufferSize(uint64_t& field, std::string_view flag,
                                                             std::string_view example) {
  return [&field, flag, example](const std::string& value) -> common::Status {
    auto bytes = common::ParseSizeFlag(flag, value, 1024, example);
    if (!bytes) return bytes.error();
    field = *bytes;
    return common::Ok();
  };
}

std::function<common::Status(const std::string&)> Duration(std::chrono::milliseconds& field,
                                                           std::string_view flag) {
  return [&field, flag](const std::string& value) -> common::Status {
    auto duration = common::ParsePositiveDurationFlag(flag, value);
    if (!duration) return duration.error();
    field = *duration;
    return common::Ok();
  };
}

common::Status SetTlsAuthClients(ProxyOptions& options, const std::string& value) {
  auto mode = common::ParseTlsClientCertificates(value);
  if (!mode) {
    return Error("--tls-auth-clients: expected no, yes or optional, got \"" + value + "\"");
  }
  options.tls_auth_clients = *mode;
  return common::Ok();
}

common::Status SetTlsToShards(ProxyOptions& options, const std::string& value) {
  if (value != "yes" && value != "no") {
    return Error("--tls-to-shards: expected yes or no, got \"" + value + "\"");
  }
  options.tls_to_shards = value == "yes";
  return common::Ok();
}

using common::Flag;
using common::FlagType;

// Where the slot map comes from and where clients connect.
std::vector<Flag> ConnectionRows(ProxyOptions& o) {
  return {
      {.name = "cluster",
       .type = FlagType::kText,
       .value_name = "HOST:PORT[,HOST:PORT]",
       .help = "cluster nodes to read the slot map from (required; repeatable)",
       .apply = [&o](const std::string& v) { return AddClusterNodes(o, v); }},
      {.name = "listen",
       .type = FlagType::kText,
       .value_name = "ADDR:PORT",
       .help = "where clients connect (default 127.0.0.1:6379; [::1]:6379 for IPv6)",
       .apply = [&o](const std::string& v) { return SetListen(o, v); }},
      {.name = "threads",
       .type = FlagType::kNumber,
       .help = "event-loop threads, each with its own listener (SO_REUSEPORT) and its own "
               "connection to every shard (default: the CPUs it may run on)",
       .apply = common::StoreNumber(o.threads, "threads", 1, 256)},
      {.name = "max-clients",
       .type = FlagType::kNumber,
       .help = "client connections over all threads (default 10000); more are refused with "
               "\"-ERR max number of clients reached\"",
       .apply = common::StoreNumber(o.max_clients, "max-clients", 1, 1000000)},
      {.name = "max-pending",
       .type = FlagType::kNumber,
       .help = "requests in flight per client before the proxy stops reading from it (default "
               "1024); reading resumes as replies drain",
       .apply = common::StoreNumber(o.max_pending, "max-pending", 1, 1000000)},
      {.name = "max-client-buffer",
       .type = FlagType::kSize,
       .help = "reply bytes held for a slow client before reading from it stops (default 64mb; "
               "the replies of requests already read still come on top)",
       .apply = BufferSize(o.max_client_buffer, "max-client-buffer", "64mb")},
      {.name = "read-from",
       .type = FlagType::kText,
       .value_name = "MODE",
       .help = "primary (default), prefer-replica (read-only commands to a replica of the slot, "
               "except slots this client wrote in the last second), or replica (always a "
               "replica); both fall back to the primary when the slot has no healthy replica. "
               "Replica reads may be slightly stale.",
       .apply = [&o](const std::string& v) { return SetReadFrom(o, v); }},
      {.name = "hot-keys",
       .type = FlagType::kNumber,
       .help = "keys each thread tracks as hot-key candidates (Space-Saving top-K, default 64), "
               "served with per-slot request counts by PROXY HOTKEYS, PROXY SLOTS, INFO hotkeys "
               "and /metrics; 0 turns key and slot counting off",
       .apply = common::StoreNumber(o.hot_keys, "hot-keys", 0, 100000)},
      {.name = "hot-keys-sample",
       .type = FlagType::kNumber,
       .help = "offer about one key in N to the hot-key top-K, its counts scaled back by N "
               "(default 8: a few ns per request instead of ~60; 1: every key, exact for the "
               "keys in the table); per-slot counts are always exact",
       .apply = common::StoreNumber(o.hot_keys_sample, "hot-keys-sample", 1, 1000000)},
      {.name = "pubsub-buffer-limit",
       .type = FlagType::kSize,
       .help = "unread pub/sub messages held for a subscriber before it is disconnected, so a "
               "slow subscriber cannot grow the proxy (32mb)",
       .apply = BufferSize(o.pubsub_buffer_limit, "pubsub-buffer-limit", "32mb")},
      {.name = "timeout",
       .type = FlagType::kDuration,
       .value_name = "DURATION",
       .help = "how long a shard may take to answer (default 5s); then the proxy drops that "
               "connection and the waiting clients get an error",
       .apply = Duration(o.backend_timeout, "timeout")},
      {.name = "refresh-interval",
       .type = FlagType::kDuration,
       .value_name = "DURATION",
       .help = "how often the slot map is re-read (default 5s); MOVED replies and connection "
               "errors also trigger a (rate-limited) refresh",
       .apply = Duration(o.refresh_interval, "refresh-interval")},
  };
}

// Who may connect, and TLS.
std::vector<Flag> SecurityRows(ProxyOptions& o) {
  return {
      common::TextFlag("auth-file", FlagType::kFile, "PATH", o.auth_file,
                       "passwords, one per line (keep the file mode 0600):\n"
                       "  requirepass PASS        the default user's password\n"
                       "  user NAME PASS          more users (AUTH NAME PASS, HELLO 3 AUTH ...)\n"
                       "  backend-password PASS   sent to the shards (AUTH), never shown\n"
                       "  backend-user NAME       the shards' ACL user for that password\n"
                       "Without users, clients need no AUTH."),
      common::SwitchFlag("allow-no-auth", o.allow_no_auth,
                         "listen on a non-loopback address without any client password "
                         "(refused by default)"),
      {.name = "tls-cert",
       .type = FlagType::kFile,
       .help = "serve TLS only (no plain RESP) with this certificate (give --tls-key and "
               "--tls-ca too); SIGHUP reads the files again (renewed certificates) for new "
               "connections. redis-cli --tls --cacert CA ...",
       .apply = common::StoreFile(o.tls.cert_file, "tls-cert")},
      {.name = "tls-key",
       .type = FlagType::kFile,
       .help = "the certificate's private key",
       .apply = common::StoreFile(o.tls.key_file, "tls-key")},
      {.name = "tls-ca",
       .type = FlagType::kFile,
       .help = "speak TLS to the shards, trusting certificates signed by this CA (and "
               "presenting the certificate, for shards with tls-auth-clients yes)",
       .apply = common::StoreFile(o.tls.ca_file, "tls-ca")},
      {.name = "tls-auth-clients",
       .type = FlagType::kText,
       .value_name = "MODE",
       .help = "no (default): clients need no certificate; yes: clients must present one "
               "signed by --tls-ca; optional: checked when presented",
       .apply = [&o](const std::string& v) { return SetTlsAuthClients(o, v); }},
      {.name = "tls-to-shards",
       .type = FlagType::kText,
       .value_name = "yes|no",
       .help = "no: plain RESP to the shards (they serve no TLS), TLS to clients only (default "
               "yes)",
       .apply = [&o](const std::string& v) { return SetTlsToShards(o, v); }},
  };
}

// Metrics, the process, and the entry points that print instead of serving.
std::vector<Flag> ProcessRows(ProxyOptions& o) {
  return {
      {.name = "metrics-port",
       .type = FlagType::kNumber,
       .value_name = "PORT",
       .help = "serve Prometheus metrics at http://ADDR:PORT/metrics: commands and their "
               "duration per command family, client connections, shard connection errors, "
               "redirects, the slot map version (default: off)",
       .apply = common::StoreNumber(o.metrics_port, "metrics-port", 1, 65535)},
      {.name = "metrics-bind",
       .type = FlagType::kText,
       .value_name = "ADDR",
       .help = "the address of --metrics-port (default 127.0.0.1)",
       .apply = [&o](const std::string& v) { return SetMetricsBind(o, v); }},
      common::TextFlag("pidfile", FlagType::kFile, "PATH", o.pidfile, "write the process id here"),
      common::SwitchFlag("quiet", o.quiet, "log only errors"),
      {.name = "version",
       .help = "print the version and exit",
       .apply = [&o](const std::string&) { return (o.version = true, common::Ok()); },
       .stops = true},
      {.name = "help",
       .help = "print this help and exit",
       .apply = [&o](const std::string&) { return (o.help = true, common::Ok()); },
       .short_name = 'h',
       .stops = true},
  };
}

// Every flag of shardproxy, storing into `options`.
std::vector<Flag> ProxyRows(ProxyOptions& options) {
  std::vector<Flag> rows = ConnectionRows(options);
  for (auto part : {SecurityRows(options), ProcessRows(options)}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

// The rows for --help and completion (bound to options nobody reads).
const std::vector<Flag>& DescribedRows() {
  static ProxyOptions unused;
  static const std::vector<Flag> rows = ProxyRows(unused);
  return rows;
}

}  // namespace

std::vector<common::CompletionFlag> ProxyFlags() {
  return common::CompletionFlags(DescribedRows());
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
  const common::FlagTable table{
      .command = "shardproxy", .help_hint = "see shardproxy --help", .flags = ProxyRows(options)};
  if (auto parsed = common::ParseFlags(table, args); !parsed) return parsed.error();
  if (options.help || options.version) return options;
  if (options.cluster.empty()) {
    return Error(
        "--cluster is required: the address of any node of the cluster, e.g. "
        "--cluster 127.0.0.1:7000");
  }
  if (auto tls = CheckTls(options); !tls) return tls.error();
  return options;
}

std::string ProxyHelpText() {
  return common::FillOptions(
      R"(shardproxy: one Redis endpoint in front of a Redis Cluster, for clients that do not
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
{options}

Keyspace commands go to every primary and are merged (DBSIZE, KEYS, FLUSHALL, SCRIPT LOAD, ...);
SCAN walks the shards one after the other. MULTI/EXEC (keys in one slot), WATCH, blocking
commands (BLPOP, XREAD BLOCK, ...) and WAIT work; the last three on connections pinned to the
client, from a small per-thread pool. Pub/sub: (P)SUBSCRIBE fanned in over one subscriber
connection per thread, SSUBSCRIBE at the channel's shard, PUBLISH/SPUBLISH routed. Unsupported commands get an error naming them. Every
command: docs/proxy-commands.md. Exit codes: 0 clean shutdown (SIGINT/SIGTERM), 1 runtime
failure (cannot reach the cluster, cannot listen), 2 bad arguments.
)",
      DescribedRows());
}

std::string ProxyManPage(const std::string& version_line) {
  return common::RenderManPage({.program = "shardproxy",
                                .source = version_line,
                                .help = common::SplitHelp(ProxyHelpText(), "shardproxy"),
                                .see_also = {"shardctl(1)", "redis-cli(1)"}});
}

}  // namespace shardctl::proxy
