// The deployment spec: what the user asked for, from a TOML file and command-line flags.
//
// Every setting has one name, used both as the flag (`--base-port 7000`) and as the TOML key
// (`base-port = 7000`). Settings arrive as (key, text, where) triples so that the validation can
// name where each bad value came from ("cluster.toml:4:1: shards" or "--shards") and report every
// problem at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

inline constexpr uint64_t kDefaultMaxShardMemory = 25ull << 30;  // keeps fork cheap (see docs)
inline constexpr int kDefaultBasePort = 7000;
inline constexpr int kBusPortOffset = 10000;  // Redis' own default: cluster bus = port + 10000
// --tls-also-plain's plain ports, unless --plain-base-port: past the bus ports.
inline constexpr int kPlainPortOffset = 20000;
// Redis Cluster is designed for up to ~1000 nodes; the slot split also needs it.
inline constexpr int kMaxShards = 1000;
// More replicas per primary than this only multiplies memory; Redis users rarely run over 2.
inline constexpr int kMaxReplicas = 5;

// How the supervisor watches shards.
struct Supervision {
  // A shard that has not answered PING for this long is reported "unresponsive".
  std::chrono::milliseconds health_timeout{3000};
  // An unresponsive shard is killed and restarted after this much more time. Long enough by
  // default that a slow command or a big load is not mistaken for a hang.
  std::chrono::milliseconds hang_grace{30000};
  friend bool operator==(const Supervision&, const Supervision&) = default;
};

// What a shard keeps on disk. The supervisor, not the shards' own `save` schedules, decides when
// to fork for BGSAVE / BGREWRITEAOF, so that at most fork-limit shards fork at once on the host.
enum class Persistence { kNone, kRdb, kAof };

const char* PersistenceName(Persistence persistence);  // "none", "rdb", "aof"

struct Durability {
  Persistence persistence = Persistence::kNone;  // none: a cache; data is gone after a stop
  std::string appendfsync = "everysec";          // aof: always, everysec or no
  // rdb: a shard with changes is saved at least this often. aof: rewrite checks run this often.
  std::chrono::milliseconds save_interval{300'000};
  int fork_limit = 1;  // forks (BGSAVE, BGREWRITEAOF) at once on the host
  // Redis' cluster-node-timeout: how long a silent primary may be unreachable before its replica
  // takes over on its own (the supervisor promotes replicas of a dead primary at once).
  std::chrono::milliseconds cluster_node_timeout{15'000};
  friend bool operator==(const Durability&, const Durability&) = default;
};

struct Spec {
  std::string name = "default";
  std::optional<int>
      shards;        // primaries (slot owners); unset: usable physical cores / (1+replicas)
  int replicas = 0;  // replicas per primary
  int base_port = kDefaultBasePort;
  std::optional<int> bus_base_port;  // unset: base_port + 10000
  std::string bind = "127.0.0.1";
  // --announce: what the shards tell other nodes and clients. An IP address becomes
  // cluster-announce-ip; a host name cluster-announce-hostname. Empty: the bind address.
  std::string announce;
  // --join HOST:PORT: a node of an existing cluster (another host's) that this deployment's
  // shards join, instead of forming a cluster of their own. Empty: form a new cluster.
  std::string join;
  // --cluster-name: a label for the cluster this deployment belongs to, recorded and shown by
  // status --cluster. Empty: the deployment's name.
  std::string cluster_name;
  // --preferred-endpoint: what redirects (MOVED/ASK) and CLUSTER SLOTS name first, "ip" or
  // "hostname" (cluster-preferred-endpoint-type; hostname needs --announce NAME).
  std::string preferred_endpoint = "ip";
  std::string engine = "redis";          // "redis", "valkey" or a path to a server binary
  std::optional<std::vector<int>> cpus;  // unset: every online CPU
  std::vector<int> reserve_cpus;
  bool reserve_cpus_auto = false;  // --reserve-cpus auto: the NIC interrupts' CPUs (host_limits.h)
  std::optional<uint64_t> memory;  // total, divided among the shards
  std::optional<uint64_t> shard_memory;  // per shard
  uint64_t max_shard_memory = kDefaultMaxShardMemory;
  std::string maxmemory_policy = "noeviction";
  std::optional<std::filesystem::path> state_dir;  // unset: DefaultStateDir()
  Supervision supervision;
  Durability durability;
  std::optional<int> proxy_port;     // set: the supervisor also runs shardproxy on bind:port
  std::optional<int> proxy_threads;  // shardproxy --threads; unset: its default (its CPUs)
  std::optional<std::string> proxy_read_from;  // shardproxy --read-from
  std::optional<int> metrics_port;         // set: the supervisor serves Prometheus /metrics on it
  std::string metrics_bind = "127.0.0.1";  // address of both /metrics endpoints
  std::optional<int> proxy_metrics_port;   // shardproxy --metrics-port
  // The shards' password (requirepass and masterauth), read by `up`; required when `bind` is
  // not loopback unless `allow_no_auth`.
  std::optional<std::filesystem::path> password_file;
  bool allow_no_auth = false;
  // --tls-cert/--tls-key/--tls-ca (all three, or none): the shards serve TLS only.
  std::optional<std::filesystem::path> tls_cert;
  std::optional<std::filesystem::path> tls_key;
  std::optional<std::filesystem::path> tls_ca;
  std::optional<std::string> tls_auth_clients;  // no (default), yes, optional
  bool tls_also_plain = false;         // --tls-also-plain: plain RESP too, from PlainBasePort()
  std::optional<int> plain_base_port;  // --plain-base-port; unset: base_port + kPlainPortOffset

  int BusBasePort() const { return bus_base_port.value_or(base_port + kBusPortOffset); }
  int PlainBasePort() const { return plain_base_port.value_or(base_port + kPlainPortOffset); }
  friend bool operator==(const Spec&, const Spec&) = default;
};

// One setting as the user wrote it.
struct Setting {
  std::string key;    // the canonical name, e.g. "base-port"
  std::string value;  // the text, e.g. "7000" (TOML integers and arrays are turned into text)
  std::string where;  // for messages: "--base-port" or "file.toml:3:1: base-port"
};

// True when `text` is an IPv4 or IPv6 address (no name, no brackets, no port).
bool IsIpLiteral(const std::string& text);

// The names of all spec settings, in the order --help lists them.
const std::vector<std::string_view>& SpecKeys();

// True when `key` names a spec setting.
bool IsSpecKey(std::string_view key);

// The known key closest to `key` (for "did you mean --base-port?"), or "" when none is close.
std::string ClosestKey(std::string_view key, const std::vector<std::string_view>& known);

// Builds and validates a spec from settings applied in order (later ones win, so pass the file's
// settings before the flags'). On failure the error holds one line per problem, each starting with
// the setting's `where`.
common::Result<Spec> BuildSpec(const std::vector<Setting>& settings);

// Reads a TOML file into settings. Errors: syntax errors with line:column, unknown keys (with the
// closest known key), values of a type no setting takes (tables, floats), all in one error.
common::Result<std::vector<Setting>> ReadSpecFile(const std::filesystem::path& file);

// Same as ReadSpecFile, for TOML text already in memory; `source_name` appears in messages.
common::Result<std::vector<Setting>> ParseSpecToml(std::string_view text,
                                                   std::string_view source_name);

// Where deployments live when --state-dir is not given: $SHARDCTL_STATE_DIR, else
// /var/lib/shardctl for root, else $XDG_STATE_HOME/shardctl or ~/.local/state/shardctl.
std::filesystem::path DefaultStateDir();

// " --name N [--state-dir D]": what a printed follow-up command needs to reach this deployment.
std::string StateDirHint(const Spec& spec);

}  // namespace shardctl::launcher
