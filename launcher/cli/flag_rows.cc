#include "launcher/cli/flag_rows.h"

#include <algorithm>
#include <set>

#include "common/duration.h"
#include "common/numbers.h"
#include "common/slots.h"
#include "launcher/ops/top.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Flag;
using common::FlagType;

// A flag's name, value and help line; how it is stored is decided by CommandRows.
struct Row {
  const char* name;
  FlagType type;
  const char* value_name;
  const char* help;
  char short_name = 0;
};

// The deployment options: every spec key (each also a TOML key), in the order --help lists them.
const std::vector<Row> kSpecRows = {
    {"name", FlagType::kDynamic, "NAME",
     "deployment name; a host can run several (default: default)"},
    {"shards", FlagType::kNumber, "N",
     "number of primaries, the slot owners (default: one per usable physical core, divided by "
     "1 + replicas)"},
    {"replicas", FlagType::kNumber, "R",
     "replicas per primary (default: 0); each is placed on another core than its primary, and "
     "on another NUMA node when the host has several"},
    {"base-port", FlagType::kNumber, "P", "shard i listens on P+i (default: 7000)"},
    {"bus-base-port", FlagType::kNumber, "P",
     "shard i's cluster bus port is P+i (default: base-port + 10000)"},
    {"bind", FlagType::kText, "ADDR",
     "address the shards listen on (default: 127.0.0.1); any other than loopback needs "
     "--password-file or --allow-no-auth"},
    {"announce", FlagType::kText, "ADDR",
     "what the shards tell other nodes and clients to reach them at, when not the bind address "
     "(NAT, a container): an IP address becomes cluster-announce-ip, a host name "
     "cluster-announce-hostname (shown to clients in CLUSTER SLOTS beside the IP)"},
    {"preferred-endpoint", FlagType::kText, "E",
     "ip (default) or hostname: what MOVED/ASK redirects and CLUSTER SLOTS name first "
     "(cluster-preferred-endpoint-type). hostname gives clients the --announce name (for TLS "
     "name checks); clients must resolve it. shardproxy and bench route by the IP CLUSTER SLOTS "
     "still carries"},
    {"join", FlagType::kText, "HOST:PORT",
     "join the cluster a node of another host serves at HOST:PORT instead of forming one: this "
     "host's shards meet it, its replicas follow primaries on other hosts (and other hosts' "
     "replicas move to its primaries, so no primary's replica shares its host), then its "
     "primaries take a fair share of the slots, keys and all. Give every host the same "
     "--password-file; leave with shardctl down --leave"},
    {"cluster-name", FlagType::kText, "NAME",
     "a label for the whole cluster, shown by status --cluster (default: the deployment name)"},
    {"password-file", FlagType::kFile, "FILE",
     "the shards' password, on one line of FILE (mode 0600, else refused). It reaches the "
     "shards through their config files (requirepass, masterauth; mode 0600), never a command "
     "line; shardctl, the proxy and bench log in with it. Make one: openssl rand -hex 32 > FILE"},
    {"allow-no-auth", FlagType::kSwitch, "",
     "let a bind beyond loopback run without a password (a trusted network)"},
    {"tls-cert", FlagType::kFile, "FILE",
     "TLS on every link (give all three): the shards' certificate (PEM)"},
    {"tls-key", FlagType::kFile, "FILE", "its private key (mode 0600, else refused)"},
    {"tls-ca", FlagType::kFile, "FILE",
     "the CA that signed it. Shards then listen for TLS only (port 0, tls-port on their port), "
     "and the cluster bus and replication use TLS too; shardctl presents the same certificate. "
     "Needs an engine built with TLS (Debian's redis-server is); --proxy-port serves TLS with "
     "the same files. The files are checked as a TLS peer will: an expired certificate, one "
     "the CA did not sign, or a key that is not its key is refused before anything starts "
     "(exit 2).\nConnect: redis-cli --tls --cacert FILE -c -p PORT"},
    {"tls-auth-clients", FlagType::kText, "A",
     "no (default: the password authenticates clients), yes (clients must present a "
     "certificate signed by --tls-ca) or optional"},
    {"tls-also-plain", FlagType::kSwitch, "",
     "also serve plain RESP, shard i on --plain-base-port + i (clients that cannot do TLS yet; "
     "redirects name the ports of the client's kind)"},
    {"plain-base-port", FlagType::kNumber, "P",
     "where those plain ports start (default: --base-port + 20000)"},
    {"engine", FlagType::kText, "E",
     "redis, valkey, or a path to a server binary (default: redis)"},
    {"cpus", FlagType::kText, "LIST",
     "CPUs shards may use, e.g. 2-63 (default: every online CPU this process may run on: its "
     "affinity and cgroup cpuset; memory defaults likewise respect the cgroup memory limit)"},
    {"reserve-cpus", FlagType::kText, "LIST",
     "CPUs kept free, e.g. for NIC interrupts (default: none); auto: the CPUs the physical "
     "NICs' interrupts are pinned to (shown by plan)"},
    {"memory", FlagType::kSize, "SIZE",
     "total maxmemory, divided evenly among shards, at least 8mb each (default: half of the "
     "used NUMA nodes' memory, split)"},
    {"shard-memory", FlagType::kSize, "SIZE",
     "maxmemory of each shard, at least 8mb (instead of --memory; same default)"},
    {"max-shard-memory", FlagType::kSize, "SIZE",
     "refuse plans with bigger shards (default: 25gb; small shards keep fork for snapshots "
     "cheap)"},
    {"maxmemory-policy", FlagType::kText, "P", "what a full shard does (default: noeviction)"},
    {"state-dir", FlagType::kDirectory, "DIR",
     "where deployments keep state, logs and data (default: $SHARDCTL_STATE_DIR, "
     "/var/lib/shardctl for root, ~/.local/state/shardctl otherwise)"},
    {"persistence", FlagType::kText, "P",
     "none (a cache, default), rdb (snapshots) or aof (append-only file)"},
    {"appendfsync", FlagType::kText, "A", "aof: always, everysec (default) or no"},
    {"save-interval", FlagType::kDuration, "TIME",
     "rdb: save a shard with changes at least this often (default: 5m)"},
    {"fork-limit", FlagType::kNumber, "K",
     "at most K shards fork (BGSAVE, BGREWRITEAOF) at once (default: 1)"},
    {"cluster-node-timeout", FlagType::kDuration, "T",
     "Redis' failure detection (default: 15s). Lower fails over sooner when a primary hangs; "
     "too low on a busy host causes needless failovers"},
    {"health-timeout", FlagType::kDuration, "TIME",
     "a shard silent to PING this long is unresponsive (default: 3s)"},
    {"hang-grace", FlagType::kDuration, "TIME",
     "an unresponsive shard is killed and restarted after this much more (default: 30s). A "
     "primary no replica can stand in for comes back with what its persistence kept: raise it, "
     "or run --replicas 1, where a stopped or hung primary must not be given up quickly"},
    {"proxy-port", FlagType::kNumber, "P",
     "also run shardproxy on bind:P, so clients without cluster support (redis-cli without -c, "
     "redis-benchmark, plain redis-py) see one Redis; the supervisor restarts it when it exits "
     "(default: no proxy)"},
    {"proxy-threads", FlagType::kNumber, "N",
     "shardproxy's event-loop threads (default: the CPUs it may run on)"},
    {"proxy-read-from", FlagType::kText, "MODE",
     "primary (default), prefer-replica or replica: where shardproxy sends read-only commands "
     "(replicas need --replicas; see shardproxy --help)"},
    {"metrics-port", FlagType::kNumber, "P",
     "the supervisor serves Prometheus metrics at http://ADDR:P/metrics: every shard under "
     "redis_exporter's names (redis_up, redis_memory_*, ...) plus shardctl_* (restarts, CPU, "
     "forks, cluster state), polled every second (default: no endpoint)"},
    {"proxy-metrics-port", FlagType::kNumber, "Q",
     "shardproxy serves its own /metrics on Q (needs --proxy-port)"},
    {"metrics-bind", FlagType::kText, "ADDR",
     "address of both metrics endpoints (default: 127.0.0.1)"},
};

const Row kConfigRow = {
    "config", FlagType::kFile, "FILE",
    "read the deployment options from a TOML file (see configs/); flags given too win"};

// A command's own flag: the commands that take it (space-separated) and its row there.
struct CommandRow {
  const char* commands;
  Row row;
  bool hidden = false;
};

const std::vector<CommandRow> kCommandRows = {
    {"plan",
     {"json", FlagType::kSwitch, "",
      "print the plan as JSON: name, engine, shards[] with index, port, bus_port, cpus, "
      "numa_node, maxmemory, role, primary, slots"}},
    {"plan",
     {"sysfs-root", FlagType::kDirectory, "DIR",
      "read another host's topology from a copy of its /sys (e.g. the fixtures in "
      "tests/fixtures/sysfs) to plan for a bigger host"}},
    {"up",
     {"dry-run", FlagType::kSwitch, "", "check everything and print the plan, start nothing"}},
    {"up",
     {"foreground", FlagType::kSwitch, "",
      "run the supervisor in this terminal (for systemd); Ctrl-C stops it"}},
    {"status",
     {"json", FlagType::kSwitch, "",
      "print JSON: name, engine, cluster_state, supervisor, shards[] with the plan "
      "fields plus pid, node_id, health, used_memory, keys, and moves_in_progress[] "
      "(slots, first_slot, last_slot, source_shard, target_shard); import (source, phase, keys, "
      "commands, lag_bytes, lag_ms) while an import --live runs"}},
    {"status",
     {"cluster", FlagType::kSwitch, "",
      "every node of the Redis Cluster the deployment is in, other hosts' too, as the "
      "first local shard that answers sees them: host, port, name, role, primary, "
      "slots, state, and which shard of this deployment it is (\"-\": not one of "
      "ours). JSON: cluster_state, seen_from, hosts, nodes[] (id, host, port, hostname, "
      "role, primary_id, slots, state, shard). Exit 0 all ok, 1 a node failing or "
      "unreachable, 2 cluster down"}},
    {"restart",
     {"rolling", FlagType::kSwitch, "",
      "restart every shard, one at a time, waiting for the cluster to be healthy "
      "before the next"}},
    {"restart",
     {"engine", FlagType::kText, "E",
      "switch to another server binary as each shard restarts (redis, valkey or a "
      "path): how to upgrade Redis/Valkey without downtime for the other shards. "
      "Refused before anything stops when E cannot read the data format of the "
      "running engine (a downgrade, e.g. Redis 8 to 7.0)"}},
    {"restart",
     {"discard-data", FlagType::kSwitch, "",
      "restart without keeping the keys: the shard comes back empty (its snapshot and "
      "AOF are deleted). Only for data you can lose"}},
    {"restart",
     {"json", FlagType::kSwitch, "",
      "print the result as JSON: per shard old_pid, new_pid, ms, data, keys_before, "
      "keys_after, write_pause_ms"}},
    {"scale", {"shards", FlagType::kNumber, "N", "the number of primaries wanted (required)"}},
    {"logs",
     {"follow", FlagType::kSwitch, "",
      "keep printing new lines as they are written (Ctrl-C to stop); follows rotation", 'f'}},
    {"logs", {"lines", FlagType::kNumber, "N", "how many lines to show first (default: 50)"}},
    {"rebalance",
     {"by", FlagType::kText, "slots|keys|memory|load",
      "what each primary gets its share of:\n"
      "slots    the same number of slots each (default)\n"
      "keys     the same number of keys each (CLUSTER COUNTKEYSINSLOT per slot)\n"
      "memory   the same estimated bytes each (keys times bytes per key)\n"
      "load     the same CPU each, measured per slot over --window (CLUSTER SLOT-STATS: Valkey "
      "8+,\n"
      "         Redis 8.2+); a slot hotter than a fair share stays alone on its primary, named"}},
    {"rebalance",
     {"threshold", FlagType::kText, "P",
      "do nothing unless some primary is more than P% off its share (default 2%; 10% --by load)"}},
    {"rebalance",
     {"window", FlagType::kDuration, "D",
      "--by load: how long each slot's CPU is counted, under the usual traffic (default 5s)"}},
    {"move-slots", {"to", FlagType::kNumber, "SHARD", "the shard (a primary) to move them to"}},
    {"rebalance move-slots scale",
     {"migration", FlagType::kText, "auto|migrate|atomic",
      "auto (default): Valkey 9+ atomic slot migration when both nodes have it, else MIGRATE; "
      "migrate or atomic to force one"}},
    {"rebalance move-slots", {"dry-run", FlagType::kSwitch, "", "print the moves, change nothing"}},
    {"scale",
     {"dry-run", FlagType::kSwitch, "",
      "print the new shards' placement and the slot moves, change nothing"}},
    {"reload-tls",
     {"dry-run", FlagType::kSwitch, "", "check the files and say what would be reloaded"}},
    {"reload-tls",
     {"json", FlagType::kSwitch, "",
      "{\"name\", \"cert\", \"reloaded_shards\": [...], \"supervisor\", \"proxy\", "
      "\"ms\"}"}},
    {"up down rebalance-roles rebalance move-slots scale save",
     {"json", FlagType::kSwitch, "", "print the result as JSON"}},
    {"backup",
     {"to", FlagType::kText, "DIR",
      "where the backup goes: a new or empty directory (required); it gets manifest.json and "
      "one shard-<k>.rdb per primary"}},
    {"backup",
     {"wait", FlagType::kText, "DURATION",
      "while another command holds the deployment's data (restore, import, scale, rebalance, "
      "move-slots, a backup) or a save or an atomic slot migration runs, wait up to DURATION "
      "(e.g. 10m, at most 24h) for it to end instead of refusing at once: for cron jobs"}},
    {"backup",
     {"json", FlagType::kSwitch, "",
      "{\"name\", \"dir\", \"shards\", \"keys\", \"bytes\", \"write_pause_ms\", \"ms\", "
      "\"waited_ms\", "
      "\"files\": [{\"file\", \"slots\", \"node\", \"keys\", \"bytes\", \"sha256\", "
      "\"rdb_format\"}]}"}},
    {"restore", {"from", FlagType::kText, "DIR", "the directory shardctl backup wrote (required)"}},
    {"restore",
     {"dry-run", FlagType::kSwitch, "",
      "check the manifest, every file's checksum, the engine and that the deployment is empty; "
      "copy nothing"}},
    {"restore",
     {"json", FlagType::kSwitch, "",
      "{\"name\", \"from\", \"backup_shards\", \"target_shards\", \"backup_keys\", "
      "\"keys\", \"expired\", \"keys_after\", \"resumed\", \"ms\"}"}},
    {"import",
     {"from", FlagType::kText, "HOST:PORT",
      "the running instance to copy from: a standalone server, or any node of another cluster "
      "(required)"}},
    {"import",
     {"password-file", FlagType::kFile, "FILE",
      "the source's password, on one line of FILE (mode 0600)"}},
    {"import", {"tls-ca", FlagType::kFile, "FILE", "speak TLS to the source, trusting this CA"}},
    {"import",
     {"live", FlagType::kSwitch, "",
      "after the copy keep applying the source's writes (it is followed as a replica: PSYNC) "
      "until import --cutover or Ctrl-C; then wait until the lag is 0 and report. Lag (bytes, "
      "ms) in status and /metrics. A source cluster is followed by one stream per primary. A "
      "Valkey 8.1+ deployment expires nothing until the import ends (import-mode), so a key the "
      "source extends meanwhile is never lost here first; on Redis that cannot be held, and a "
      "source with TTLs gets a warning"}},
    {"import",
     {"cutover", FlagType::kSwitch, "",
      "end the live import of this deployment: it catches up (lag 0), stops, and this prints its "
      "report"}},
    {"import",
     {"dry-run", FlagType::kSwitch, "",
      "probe the source and the deployment and list every problem (keys in a db other than 0, "
      "a data format the engine cannot load, a deployment not empty); copy nothing. Exit 2 "
      "when there is one"}},
    {"import",
     {"json", FlagType::kSwitch, "",
      "{\"name\", \"from\", \"source_engine\", \"source_keys\", \"problems\", "
      "\"warnings\", \"expiry_held\", \"keys\", "
      "\"bytes\", \"vanished\", \"keys_after\", \"source_unchanged\", \"resumed\", "
      "\"ms\"}: source_unchanged when nothing wrote to the source during the copy, so "
      "keys_after was checked against its key count (fewer: exit 1, run it again)"}},
    {"down",
     {"leave", FlagType::kSwitch, "",
      "this host leaves a cluster that spans hosts (up --join): first each primary with "
      "a replica on another host hands over to it (CLUSTER FAILOVER, nothing moves), the "
      "slots left move with their keys to the other hosts' primaries, their replicas "
      "that followed ours follow one of theirs; then the shards stop, the other nodes "
      "forget them and the deployment is purged. Refused when no other host has a "
      "primary. A failure stops nothing; run it again to continue"}},
    {"down", {"purge", FlagType::kSwitch, "", "also delete the deployment's state, logs and data"}},
    {"down",
     {"no-save", FlagType::kSwitch, "",
      "with --persistence rdb, stop without saving every primary first: writes since each "
      "one's last snapshot are lost (for a shard that cannot be saved)"}},
    {"top",
     {"interval", FlagType::kDuration, "TIME",
      "time between refreshes (default: 1s; at least 100ms)"}},
    {"top", {"sort", FlagType::kText, "KEY", "ops (default), mem, cpu, clients, hits or shard"}},
    {"top", {"count", FlagType::kNumber, "N", "stop after N refreshes (default: run until quit)"}},
    {"top",
     {"slots", FlagType::kSwitch, "",
      "the hottest slots instead of the shards: slot, owner shard, ops/s (through the "
      "deployment's shardproxy), CPU share, keys, bytes in/out per second, by CPU"}},
    {"top", {"limit", FlagType::kNumber, "K", "--slots: how many slots (default: 20)"}},
    {"top",
     {"json", FlagType::kSwitch, "",
      "--slots: one JSON object per refresh: {\"name\", \"seconds\", \"slot_stats\", \"proxy\", "
      "\"slots\": [{\"slot\", \"shard\", \"ops_per_second\", \"cpu_share\", \"keys\", "
      "\"network_bytes_in_per_second\", \"network_bytes_out_per_second\"}]}, null where "
      "there is no source"}},
    {"top",
     {"keys", FlagType::kSwitch, "",
      "the hottest keys the deployment's shardproxy routed, not the shards (needs --proxy-port)"}},
    {"supervise", {"ready-fd", FlagType::kNumber, "FD", "where up reads start-up events"}, true},
};

bool Takes(const char* commands, const std::string& command) {
  std::string_view list = commands;
  while (!list.empty()) {
    const size_t end = std::min(list.find(' '), list.size());
    if (list.substr(0, end) == command) return true;
    list.remove_prefix(std::min(end + 1, list.size()));
  }
  return false;
}

bool TakesFullSpec(const std::string& command) { return command == "plan" || command == "up"; }

// Spec keys a command takes as its own flag (scale --cpus) besides --name and --state-dir.
bool TakesSpecKey(const std::string& command, std::string_view key) {
  return TakesFullSpec(command) || key == "name" || key == "state-dir" ||
         (command == "scale" && (key == "cpus" || key == "reserve-cpus"));
}

// `top`'s own flags: how often, in which order, how many times.
common::Status ApplyTopFlag(const std::string& flag, const std::string& value,
                            Invocation& invocation) {
  if (flag == "interval") {
    auto interval = common::ParseDuration(value);
    if (!interval.ok() || interval->count() < 100) {
      return Error("--interval: \"" + value + "\" is not a duration of at least 100ms (e.g. 1s)");
    }
    invocation.interval = *interval;
  } else if (flag == "sort") {
    if (!ParseTopSort(value)) {
      return Error("--sort: \"" + value +
                   "\" is not a sort key (use shard, ops, mem, cpu, clients or hits)");
    }
    invocation.sort = value;
  } else if (flag == "limit") {
    std::optional<int> limit = common::ParseIntegerIn(value, 1, common::kSlotCount);
    if (!limit) return Error("--limit: \"" + value + "\" is not a number of slots (1 to 16384)");
    invocation.limit = *limit;
  } else {
    std::optional<int> count = common::ParseIntegerIn(value, 1, 1000000);
    if (!count) return Error("--count: \"" + value + "\" is not a number of refreshes (e.g. 5)");
    invocation.count = *count;
  }
  return common::Ok();
}

// A non-negative number for --lines, --to, --ready-fd; `what` names it in the error.
common::Status SetCount(const std::string& flag, const std::string& value, const char* what,
                        int& out) {
  std::optional<int> number = common::ParseInteger<int>(value);
  if (!number || *number < 0) return Error("--" + flag + ": \"" + value + "\" is not " + what);
  out = *number;
  return common::Ok();
}

// The flags of backup, restore and import, whose names other commands use for other things
// (move-slots --to is a shard; up --password-file is the deployment's own password).
bool ApplyDataFlag(const std::string& flag, const std::string& value, Invocation& invocation) {
  const std::string& command = invocation.command;
  if (command == "backup" && flag == "to") {
    invocation.data_dir = value;
  } else if (command == "restore" && flag == "from") {
    invocation.data_dir = value;
  } else if (command == "import" && flag == "from") {
    invocation.import_from = value;
  } else if (command == "import" && flag == "password-file") {
    invocation.source_password_file = value;
  } else if (command == "import" && flag == "tls-ca") {
    invocation.source_tls_ca = value;
  } else {
    return false;
  }
  return true;
}

common::Status ApplyValueFlag(const std::string& flag, const std::string& value,
                              Invocation& invocation) {
  if (invocation.command == "backup" && flag == "wait") {
    auto wait = common::ParseDuration(value);
    if (!wait.ok() || wait->count() < 0 || *wait > std::chrono::hours(24)) {
      return Error("--wait: \"" + value + "\" is not a duration of at most 24h (e.g. 10m)");
    }
    invocation.backup_wait = *wait;
    return common::Ok();
  }
  if (ApplyDataFlag(flag, value, invocation)) return common::Ok();
  if (IsSpecKey(flag)) {
    invocation.settings.push_back({flag, value, "--" + flag});
  } else if (flag == "config") {
    invocation.config_file = value;
  } else if (flag == "sysfs-root") {
    invocation.sysfs_root = value;
  } else if (flag == "lines") {
    return SetCount(flag, value, "a number of lines", invocation.lines);
  } else if (flag == "interval" || flag == "sort" || flag == "count" || flag == "limit") {
    return ApplyTopFlag(flag, value, invocation);
  } else if (flag == "by") {
    invocation.balance_by = value;
  } else if (flag == "threshold") {
    // An empty value would read as "not given" (the default band) and run a rebalance.
    if (value.empty()) return Error("--threshold needs a percentage such as 2% (0-100)");
    invocation.threshold = value;
  } else if (flag == "window") {
    auto window = common::ParseDuration(value);
    if (!window.ok() || window->count() < 100 || window->count() > 3600000) {
      return Error("--window: \"" + value + "\" is not a duration from 100ms to 1h (e.g. 10s)");
    }
    invocation.load_window = *window;
  } else if (flag == "migration") {
    invocation.migration = value;
  } else if (flag == "to") {
    int shard = 0;
    auto status = SetCount(flag, value, "a shard index (shards are numbered 0, 1, ...)", shard);
    if (status.ok()) invocation.to_shard = shard;
    return status;
  } else if (flag == "ready-fd") {
    return SetCount(flag, value, "a file descriptor number", invocation.ready_fd);
  }
  return common::Ok();
}

void ApplySwitch(const std::string& flag, Invocation& invocation) {
  if (flag == "json") invocation.json = true;
  if (flag == "dry-run") invocation.dry_run = true;
  if (flag == "foreground") invocation.foreground = true;
  if (flag == "purge") invocation.purge = true;
  if (flag == "leave") invocation.leave = true;
  if (flag == "no-save") invocation.no_save = true;
  if (flag == "rolling") invocation.rolling = true;
  if (flag == "discard-data") invocation.discard_data = true;
  if (flag == "follow") invocation.follow = true;
  if (flag == "cluster") invocation.cluster = true;
  if (flag == "slots") invocation.slots = true;
  if (flag == "live") invocation.live = true;
  if (flag == "cutover") invocation.cutover = true;
  if (flag == "keys") invocation.top_keys = true;
  // A spec setting written as a switch: `--allow-no-auth` is allow-no-auth = true.
  if (flag == "allow-no-auth" || flag == "tls-also-plain") {
    invocation.settings.push_back({flag, "true", "--" + flag});
  }
}

Flag Bind(const Row& row, Invocation& invocation, std::string group) {
  Flag flag{.name = row.name,
            .type = row.type,
            .value_name = row.value_name,
            .help = row.help,
            .group = std::move(group),
            .short_name = row.short_name};
  if (row.type == FlagType::kSwitch) {
    flag.apply = [&invocation, name = flag.name](const std::string&) {
      ApplySwitch(name, invocation);
      return common::Ok();
    };
  } else {
    flag.apply = [&invocation, name = flag.name](const std::string& value) {
      return ApplyValueFlag(name, value, invocation);
    };
  }
  return flag;
}

}  // namespace

std::vector<Flag> CommandRows(const std::string& command, Invocation& invocation) {
  const auto& commands = CommandNames();
  if (std::find(commands.begin(), commands.end(), command) == commands.end()) return {};
  std::vector<Flag> rows;
  for (const auto& row : kSpecRows) {
    if (TakesSpecKey(command, row.name)) rows.push_back(Bind(row, invocation, "deployment"));
  }
  rows.push_back(Bind(kConfigRow, invocation, "deployment"));
  std::set<std::string> own;
  for (const auto& entry : kCommandRows) {
    if (!Takes(entry.commands, command) || !own.insert(entry.row.name).second) continue;
    rows.push_back(Bind(entry.row, invocation, ""));
    rows.back().hidden = entry.hidden;
  }
  rows.push_back({.name = "help",
                  .help = "this help",
                  .apply =
                      [&invocation, command](const std::string&) {
                        invocation.help_topic = command;
                        return common::Ok();
                      },
                  .group = "deployment",
                  .short_name = 'h',
                  .stops = true});
  return rows;
}

const std::vector<std::string>& AllFlagNames() {
  // In the rows' order, which "did you mean" follows on a tie (--shard: --shards first).
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    auto add = [&all](const std::string& name) {
      if (std::find(all.begin(), all.end(), name) == all.end()) all.push_back(name);
    };
    for (const auto& row : kSpecRows) add(row.name);
    add(kConfigRow.name);
    for (const auto& entry : kCommandRows) add(entry.row.name);
    add("help");
    return all;
  }();
  return names;
}

}  // namespace shardctl::launcher
