// The Deployment record: everything `up` decided about a deployment (plan, engine, supervision,
// durability, proxy). Written to deployment.json (plan_json.h) and read back by every later
// command and by the supervisor. Pure data.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/numbers.h"
#include "launcher/model/plan.h"
#include "launcher/model/spec.h"

namespace shardctl::launcher {

enum class EngineKind { kRedis, kValkey };

// The server binary a deployment runs, as engine/ found and checked it.
struct Engine {
  EngineKind kind = EngineKind::kRedis;
  std::filesystem::path path;
  std::string version;  // "7.0.15"
  int major = 0;
  std::string Name() const { return kind == EngineKind::kRedis ? "redis" : "valkey"; }
  friend bool operator==(const Engine&, const Engine&) = default;
};

// The major version of "7.0.15" (7), or 0 when the text does not start with a number.
inline int VersionMajor(std::string_view version) {
  return common::ParseInteger<int>(version.substr(0, version.find('.'))).value_or(0);
}

// The shardproxy the supervisor runs in front of the cluster (`up --proxy-port`).
struct ProxyConfig {
  int port = 0;                       // 0: no proxy
  int threads = 0;                    // 0: shardproxy's default
  std::string read_from = "primary";  // shardproxy --read-from
  std::string binary;                 // resolved by `up`
  int metrics_port = 0;               // shardproxy --metrics-port; 0: no /metrics
  bool enabled() const { return port != 0; }
  friend bool operator==(const ProxyConfig&, const ProxyConfig&) = default;
};

// Where the Prometheus /metrics endpoints listen (`up --metrics-port`, `--proxy-metrics-port`).
struct MetricsConfig {
  int port = 0;                    // the supervisor's /metrics; 0: none
  std::string bind = "127.0.0.1";  // both endpoints' address
  bool enabled() const { return port != 0; }
  friend bool operator==(const MetricsConfig&, const MetricsConfig&) = default;
};

// Who may talk to the shards (`up --password-file`).
struct AuthConfig {
  bool password_required = false;  // recorded in deployment.json
  // The shards' requirepass and masterauth; empty until read. A secret: it lives in the state
  // dir's password file (mode 0600), never in deployment.json, an argv or any output.
  std::string password;
};

// TLS on every shard link (`up --tls-cert --tls-key --tls-ca`): clients, the cluster bus and
// replication; shardctl's own connections present the same certificate. Absolute paths.
struct TlsConfig {
  std::string cert;
  std::string key;
  std::string ca;
  std::string auth_clients = "no";  // --tls-auth-clients: no, yes or optional
  // --tls-also-plain: shard i also serves plain RESP on plain_base_port + i (0: TLS only). Redis
  // tells each client the ports of its own kind (MOVED, CLUSTER SLOTS), so plain cluster clients
  // stay on plain ports; the bus, replication and shardctl stay on TLS.
  int plain_base_port = 0;
  bool enabled() const { return !cert.empty(); }
  bool also_plain() const { return plain_base_port != 0; }
  int PlainPort(int shard_index) const { return plain_base_port + shard_index; }
  friend bool operator==(const TlsConfig&, const TlsConfig&) = default;
};

// What `up` records about a deployment.
struct Deployment {
  Plan plan;
  Engine engine;
  Supervision supervision;
  Durability durability;
  ProxyConfig proxy{};
  MetricsConfig metrics{};
  AuthConfig auth{};
  TlsConfig tls{};
  // Shards that run another engine than `engine`, by index: a `restart SHARD --engine E`, or a
  // rolling switch under way. A shard that crashes comes back on its own engine; once every shard
  // runs one engine, it is `engine` and this is empty again (RecordShardEngine).
  std::map<int, Engine> shard_engines{};
};

// The engine shard `index` runs.
const Engine& EngineOf(const Deployment& deployment, int index);

// Records that shard `index` runs `engine` from now on. When every shard of the plan then runs
// one engine, that engine becomes the deployment's and no shard is listed apart.
void RecordShardEngine(Deployment& deployment, int index, const Engine& engine);

// "shard 2 runs valkey 9.1.2, the others redis 7.0.15": what runs where while the shards'
// engines differ; empty when they all run `engine`.
std::string MixedEngines(const Deployment& deployment);

// What differs between a running deployment and a requested one, one line a person reads per
// difference ("shards: 3 -> 4", "engine binary: /a -> /b"); empty when `up` would change nothing.
// The proxy's binary path is not compared: it is found anew by every `up`.
std::vector<std::string> DiffDeployments(const Deployment& running, const Deployment& requested);

// What a stopped deployment's data cannot be resumed with: another number of primaries or
// replicas, other shard indices or ports, another engine or engine major, another persistence
// (an rdb deployment resumed as aof would start from an empty AOF, and the reverse from a stale
// snapshot). One line per difference
// naming the command that makes the change live where there is one ("shards: 3 -> 2 (live:
// shardctl scale --shards 2)"); empty when `up` may resume `recorded` as `requested`.
// `target` (" --name N --state-dir D") is appended to every command named, so it can be pasted.
std::vector<std::string> ShapeDifferences(const Deployment& recorded, const Deployment& requested,
                                          const std::string& target = "");

// "3 shards, 0 replicas, ports 7000-7002, redis 7.0.15, persistence rdb": what a deployment is,
// for a person deciding what to type.
std::string ShapeSummary(const Deployment& deployment);

}  // namespace shardctl::launcher
