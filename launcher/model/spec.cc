#include "launcher/model/spec.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>

#include "common/cpu_list.h"
#include "common/duration.h"
#include "common/endpoint.h"
#include "common/numbers.h"
#include "common/secrets.h"
#include "common/size.h"
#include "common/text.h"

namespace shardctl::launcher {
namespace {

// A state directory as an absolute path: the engines a command starts change into their own
// directories (redis-server --dir), where a relative one would name something else.
std::filesystem::path Absolute(const std::string& dir) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(dir, error);
  return error ? std::filesystem::path(dir) : absolute.lexically_normal();
}

using common::Error;
using common::Result;

const std::vector<std::string_view> kKeys = {
    "name",
    "shards",
    "replicas",
    "base-port",
    "bus-base-port",
    "bind",
    "engine",
    "cpus",
    "reserve-cpus",
    "memory",
    "shard-memory",
    "max-shard-memory",
    "maxmemory-policy",
    "state-dir",
    "health-timeout",
    "hang-grace",
    "persistence",
    "appendfsync",
    "save-interval",
    "fork-limit",
    "cluster-node-timeout",
    "proxy-port",
    "proxy-threads",
    "proxy-read-from",
    "proxy-metrics-port",
    "metrics-port",
    "metrics-bind",
    "password-file",
    "allow-no-auth",
    "announce",
    "join",
    "cluster-name",
    "preferred-endpoint",
    "tls-cert",
    "tls-key",
    "tls-ca",
    "tls-auth-clients",
    "tls-also-plain",
    "plain-base-port",
};

const std::vector<std::string_view> kPolicies = {
    "noeviction",   "allkeys-lru",  "allkeys-lfu",     "allkeys-random",
    "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
};

// A switch setting (--allow-no-auth, or allow-no-auth = true in TOML): true or false.
common::Status AssignSwitch(const std::string& value, bool& target) {
  if (value != "true" && value != "false") {
    return Error("expected true or false (got \"" + value + "\")");
  }
  target = value == "true";
  return common::Ok();
}

// A file path setting: not empty.
common::Status AssignPath(const std::string& value, std::optional<std::filesystem::path>& target) {
  if (value.empty()) return Error("is empty (give the path of a PEM file)");
  target = std::filesystem::path(value);
  return common::Ok();
}

Result<int> ParseInt(std::string_view text, int min, int max) {
  std::optional<int> parsed = common::ParseInteger<int>(text);
  if (!parsed) return Error("\"" + std::string(text) + "\" is not a whole number");
  const int value = *parsed;
  if (value < min || value > max) {
    return Error("must be between " + std::to_string(min) + " and " + std::to_string(max) +
                 " (got " + std::to_string(value) + ")");
  }
  return value;
}

// A TCP port; the error names the range and an example.
Result<int> ParsePort(std::string_view text, std::string_view example) {
  std::optional<int> port = common::ParseIntegerIn(text, 1, 65535);
  if (!port) {
    return Error("\"" + std::string(text) + "\" is not a TCP port (use 1-65535, e.g. " +
                 std::string(example) + ")");
  }
  return *port;
}

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] == '.' || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// A DNS name: dot-separated labels of letters, digits and inner hyphens, at most 253 bytes.
bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  while (true) {
    const size_t dot = name.find('.');
    const std::string_view label = name.substr(0, dot);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

// Applies one setting to the spec; returns the problem (without `where`) or nothing.
using Applier = std::function<common::Status(const std::string&, Spec&)>;

template <typename T>
common::Status Assign(Result<T> parsed, T& out) {
  if (!parsed.ok()) return parsed.error();
  out = std::move(parsed).value();
  return common::Ok();
}

template <typename T>
common::Status AssignOptional(Result<T> parsed, std::optional<T>& out) {
  if (!parsed.ok()) return parsed.error();
  out = std::move(parsed).value();
  return common::Ok();
}

Result<uint64_t> ParsePositiveSize(const std::string& value) {
  auto size = common::ParseSize(value);
  if (size.ok() && *size == 0) return Error("must be larger than 0 (got \"" + value + "\")");
  return size;
}

const std::map<std::string_view, Applier>& Appliers() {
  static const std::map<std::string_view, Applier> appliers = {
      {"name",
       [](const std::string& v, Spec& s) -> common::Status {
         if (!IsValidName(v)) {
           return Error("\"" + v +
                        "\" is not a valid name (use 1-64 letters, digits, '-', '_', '.')");
         }
         s.name = v;
         return common::Ok();
       }},
      {"shards", [](const std::string& v,
                    Spec& s) { return AssignOptional(ParseInt(v, 1, kMaxShards), s.shards); }},
      {"replicas", [](const std::string& v,
                      Spec& s) { return Assign(ParseInt(v, 0, kMaxReplicas), s.replicas); }},
      {"base-port",
       [](const std::string& v, Spec& s) { return Assign(ParseInt(v, 1, 65535), s.base_port); }},
      {"bus-base-port",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParseInt(v, 1, 65535), s.bus_base_port);
       }},
      {"bind",
       [](const std::string& v, Spec& s) -> common::Status {
         if (!IsIpLiteral(v)) {
           return Error("\"" + v + "\" is not an IP address (use e.g. 127.0.0.1 or ::1)");
         }
         s.bind = v;
         return common::Ok();
       }},
      {"engine",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v != "redis" && v != "valkey" && v.find('/') == std::string::npos) {
           return Error("\"" + v + "\" is not an engine (use redis, valkey or a path such as " +
                        "/usr/bin/redis-server)");
         }
         s.engine = v;
         return common::Ok();
       }},
      {"cpus",
       [](const std::string& v, Spec& s) -> common::Status {
         auto cpus = common::ParseCpuList(v);
         if (cpus.ok() && cpus->empty()) return Error("is empty (name CPUs such as 0-3,8)");
         return AssignOptional(std::move(cpus), s.cpus);
       }},
      {"reserve-cpus",
       [](const std::string& v, Spec& s) -> common::Status {
         s.reserve_cpus_auto = v == "auto";
         if (s.reserve_cpus_auto) {
           s.reserve_cpus.clear();
           return common::Ok();
         }
         return Assign(common::ParseCpuList(v), s.reserve_cpus);
       }},
      {"memory", [](const std::string& v,
                    Spec& s) { return AssignOptional(ParsePositiveSize(v), s.memory); }},
      {"shard-memory",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParsePositiveSize(v), s.shard_memory);
       }},
      {"max-shard-memory",
       [](const std::string& v, Spec& s) {
         return Assign(ParsePositiveSize(v), s.max_shard_memory);
       }},
      {"maxmemory-policy",
       [](const std::string& v, Spec& s) -> common::Status {
         if (std::find(kPolicies.begin(), kPolicies.end(), v) == kPolicies.end()) {
           std::string all;
           for (auto p : kPolicies) all += (all.empty() ? "" : ", ") + std::string(p);
           return Error("\"" + v + "\" is not a maxmemory policy (use one of " + all + ")");
         }
         s.maxmemory_policy = v;
         return common::Ok();
       }},
      {"health-timeout",
       [](const std::string& v, Spec& s) -> common::Status {
         auto duration = common::ParseDuration(v);
         if (duration.ok() && duration->count() < 100) {
           return Error("must be at least 100ms (got \"" + v + "\")");
         }
         return Assign(std::move(duration), s.supervision.health_timeout);
       }},
      {"hang-grace",
       [](const std::string& v, Spec& s) {
         return Assign(common::ParseDuration(v), s.supervision.hang_grace);
       }},
      {"persistence",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v == "none") {
           s.durability.persistence = Persistence::kNone;
         } else if (v == "rdb") {
           s.durability.persistence = Persistence::kRdb;
         } else if (v == "aof") {
           s.durability.persistence = Persistence::kAof;
         } else {
           return Error("\"" + v + "\" is not a persistence profile (use none, rdb or aof)");
         }
         return common::Ok();
       }},
      {"appendfsync",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v != "always" && v != "everysec" && v != "no") {
           return Error("\"" + v + "\" is not an appendfsync policy (use always, everysec or no)");
         }
         s.durability.appendfsync = v;
         return common::Ok();
       }},
      {"save-interval",
       [](const std::string& v, Spec& s) -> common::Status {
         auto duration = common::ParseDuration(v);
         if (duration.ok() && duration->count() < 1000) {
           return Error("must be at least 1s (got \"" + v + "\")");
         }
         return Assign(std::move(duration), s.durability.save_interval);
       }},
      {"fork-limit",
       [](const std::string& v, Spec& s) {
         return Assign(ParseInt(v, 1, kMaxShards), s.durability.fork_limit);
       }},
      {"cluster-node-timeout",
       [](const std::string& v, Spec& s) -> common::Status {
         auto duration = common::ParseDuration(v);
         if (duration.ok() && duration->count() < 100) {
           return Error("must be at least 100ms (got \"" + v + "\")");
         }
         return Assign(std::move(duration), s.durability.cluster_node_timeout);
       }},
      {"proxy-port", [](const std::string& v,
                        Spec& s) { return AssignOptional(ParseInt(v, 1, 65535), s.proxy_port); }},
      {"proxy-threads",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParseInt(v, 1, 256), s.proxy_threads);
       }},
      {"proxy-read-from",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v != "primary" && v != "prefer-replica" && v != "replica") {
           return Error("expected primary, prefer-replica or replica (got \"" + v + "\")");
         }
         s.proxy_read_from = v;
         return {};
       }},
      {"metrics-port",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParsePort(v, "9121"), s.metrics_port);
       }},
      {"proxy-metrics-port",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParsePort(v, "9122"), s.proxy_metrics_port);
       }},
      {"metrics-bind",
       [](const std::string& v, Spec& s) -> common::Status {
         if (!IsIpLiteral(v)) {
           return Error("\"" + v + "\" is not an IP address (use e.g. 127.0.0.1, 0.0.0.0 or ::1)");
         }
         s.metrics_bind = v;
         return common::Ok();
       }},
      {"announce",
       [](const std::string& v, Spec& s) -> common::Status {
         if (!IsIpLiteral(v) && !IsHostName(v)) {
           return Error("\"" + v +
                        "\" is neither an IP address nor a host name (use e.g. 10.0.0.1 or "
                        "cache-1.example.com)");
         }
         s.announce = v;
         return common::Ok();
       }},
      {"join",
       [](const std::string& v, Spec& s) -> common::Status {
         auto seed = common::ParseEndpoint(v, "");
         if (!seed.ok() || seed->host.empty()) {
           return Error(
               "\"" + v +
               "\" is not HOST:PORT of a node of the cluster to join (e.g. 10.0.0.1:7000)");
         }
         s.join = seed->ToString();
         return common::Ok();
       }},
      {"tls-cert", [](const std::string& v, Spec& s) { return AssignPath(v, s.tls_cert); }},
      {"tls-key", [](const std::string& v, Spec& s) { return AssignPath(v, s.tls_key); }},
      {"tls-ca", [](const std::string& v, Spec& s) { return AssignPath(v, s.tls_ca); }},
      {"tls-auth-clients",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v != "no" && v != "yes" && v != "optional") {
           return Error("expected no, yes or optional (got \"" + v + "\")");
         }
         s.tls_auth_clients = v;
         return common::Ok();
       }},
      {"preferred-endpoint",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v != "ip" && v != "hostname") {
           return Error("expected ip or hostname (got \"" + v + "\")");
         }
         s.preferred_endpoint = v;
         return common::Ok();
       }},
      {"cluster-name",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v.empty() || v.size() > 64 ||
             v.find_first_not_of(
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                 std::string::npos) {
           return Error("\"" + v +
                        "\" is not a cluster name (1-64 letters, digits, '-', '_', '.')");
         }
         s.cluster_name = v;
         return common::Ok();
       }},
      {"password-file",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v.empty()) return Error("is empty (give the file holding the shards' password)");
         s.password_file = std::filesystem::path(v);
         return common::Ok();
       }},
      {"allow-no-auth",
       [](const std::string& v, Spec& s) { return AssignSwitch(v, s.allow_no_auth); }},
      {"tls-also-plain",
       [](const std::string& v, Spec& s) { return AssignSwitch(v, s.tls_also_plain); }},
      {"plain-base-port",
       [](const std::string& v, Spec& s) {
         return AssignOptional(ParseInt(v, 1, 65535), s.plain_base_port);
       }},
      {"state-dir",
       [](const std::string& v, Spec& s) -> common::Status {
         if (v.empty()) return Error("is empty (give a directory)");
         s.state_dir = Absolute(v);
         return common::Ok();
       }},
  };
  return appliers;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

bool IsIpLiteral(const std::string& text) { return common::IsIpAddress(text); }

const std::vector<std::string_view>& SpecKeys() { return kKeys; }

const char* PersistenceName(Persistence persistence) {
  switch (persistence) {
    case Persistence::kRdb:
      return "rdb";
    case Persistence::kAof:
      return "aof";
    default:
      return "none";
  }
}

bool IsSpecKey(std::string_view key) {
  return std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end();
}

std::string ClosestKey(std::string_view key, const std::vector<std::string_view>& known) {
  std::string best;
  size_t best_distance = std::max<size_t>(3, key.size() / 3) + 1;
  for (auto candidate : known) {
    size_t distance = EditDistance(key, candidate);
    // A prefix ("--shard" for "--shards") is a strong hint even when the distance is large.
    if (candidate.substr(0, key.size()) == key && key.size() >= 3) distance = 1;
    if (distance < best_distance) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

Result<Spec> BuildSpec(const std::vector<Setting>& settings) {
  Spec spec;
  std::string problems;
  std::map<std::string, std::string> where_of;
  for (const auto& setting : settings) {
    auto applier = Appliers().find(setting.key);
    if (applier == Appliers().end()) {
      problems += setting.where + ": unknown setting\n";
      continue;
    }
    auto status = applier->second(setting.value, spec);
    if (!status.ok()) problems += setting.where + ": " + status.error().message() + "\n";
    where_of[setting.key] = setting.where;
  }
  if (spec.memory && spec.shard_memory) {
    problems += where_of["memory"] + ": conflicts with " + where_of["shard-memory"] +
                " (give the total with memory or the per-shard size with shard-memory, not both)\n";
  }
  const int tls_files =
      int{spec.tls_cert.has_value()} + int{spec.tls_key.has_value()} + int{spec.tls_ca.has_value()};
  if (tls_files != 0 && tls_files != 3) {
    problems += std::string("--tls-cert, --tls-key, --tls-ca: TLS needs all three (the shards' ") +
                "certificate, its private key and the CA that signed it)\n";
  }
  if (spec.tls_also_plain && tls_files == 0) {
    problems += where_of["tls-also-plain"] +
                ": only means something with TLS (add --tls-cert, --tls-key and --tls-ca, or "
                "leave it out: without TLS the shards serve plain RESP anyway)\n";
  }
  if (spec.plain_base_port && !spec.tls_also_plain) {
    problems += where_of["plain-base-port"] + ": only means something with --tls-also-plain\n";
  }
  if (spec.tls_auth_clients && tls_files == 0) {
    problems += where_of["tls-auth-clients"] +
                ": only means something with TLS (add --tls-cert, --tls-key and --tls-ca)\n";
  }
  if (spec.preferred_endpoint == "hostname" &&
      (spec.announce.empty() || IsIpLiteral(spec.announce))) {
    problems += where_of["preferred-endpoint"] +
                ": hostname needs a host name to give (add --announce NAME, a name that clients "
                "resolve to this host)\n";
  }
  if (!common::IsLoopbackHost(spec.bind) && !spec.password_file && !spec.allow_no_auth) {
    problems += where_of["bind"] + ": " + spec.bind +
                " is reachable from other hosts, and the shards would accept anyone (give "
                "--password-file FILE holding a password, mode 0600, or --allow-no-auth on a "
                "trusted network)\n";
  }
  if (!problems.empty()) {
    problems.pop_back();
    return Error(problems);
  }
  return spec;
}

std::filesystem::path DefaultStateDir() {
  if (const char* dir = std::getenv("SHARDCTL_STATE_DIR"); dir && *dir) return Absolute(dir);
  if (geteuid() == 0) return "/var/lib/shardctl";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {
    return std::filesystem::path(xdg) / "shardctl";
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : "/tmp") / ".local/state/shardctl";
}

std::string StateDirHint(const Spec& spec) {
  std::string hint = " --name " + common::ShellQuote(spec.name);
  if (spec.state_dir) hint += " --state-dir " + common::ShellQuote(spec.state_dir->string());
  return hint;
}

}  // namespace shardctl::launcher
