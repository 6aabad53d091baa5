// The --help texts. They teach: what the command does, every flag with its default, an example,
// and the exit codes scripts can rely on. The prose is written here; each options list is filled
// in from the flag rows (flag_rows.cc) that ParseArgs reads, at each "{options ...}" line.

#include <map>

#include "common/flags.h"
#include "common/man_page.h"
#include "launcher/cli/args.h"
#include "launcher/cli/flag_rows.h"
#include "launcher/ops/bench.h"

namespace shardctl::launcher {
namespace {

constexpr const char* kOverview =
    R"(shardctl - run Redis or Valkey as many pinned single-threaded shards on one host,
joined into a Redis Cluster, and keep them that way.

Usage: shardctl <command> [options]

Commands:
  plan      print where each shard would live (CPU, NUMA node, memory, ports); starts nothing
  up        start the shards, form the cluster, return when it is healthy (idempotent)
  status    one row per shard; exit 0 healthy, 1 degraded, 2 down, 3 unknown deployment
  top       live per-shard table: ops/s, hit ratio, memory, clients, CPU, role, last fork
  down      stop every shard gracefully (--purge also deletes the data)
  restart   restart one shard, or all one at a time (--rolling), e.g. to switch --engine
  logs      show the supervisor's log, or a shard's (logs 3), -f to follow
  rebalance-roles  make the planned primaries primary again after failovers
  rebalance even out slots (or keys, or memory) across primaries, live, keys and all
  move-slots  move slot ranges to one shard, live (move-slots 100-200 --to 3)
  scale     add or remove primaries (and their replicas) live: scale --shards 48
  save      save every shard now, at most --fork-limit forks at once on the host
  reload-tls  renewed TLS certificates taken up by every shard (one at a time) and the proxy
  backup    every primary's data as of one instant into a directory (--to DIR)
  restore   a backup's keys into this deployment, whatever its shard count (--from DIR)
  import    copy every key of a running Redis/Valkey (or another cluster) in (--from HOST:PORT)
  supervise run a deployment's supervisor in the foreground (what `up` starts in the background)
  bench compare  single instance vs cluster vs proxy on the same cores: report, CSV, plots
  bench run generate GET/SET load against a server or cluster; throughput and latency percentiles

Examples:
  shardctl plan --shards 40                  # preview a 40-shard layout on this host
  shardctl up --shards 8 --memory 16gb       # 8 shards, 2gb maxmemory each
  redis-cli -c -p 7000 set foo bar           # talk to it with any cluster client
  shardctl status --json                     # for scripts and monitoring
  shardctl down                              # stop it

Run `shardctl <command> --help` for the options of a command.

Exit codes (all commands but status): 0 success, 1 runtime failure (port taken, engine crashed,
state dir unwritable), 2 usage or config error (bad flag, bad TOML, impossible plan).
)";

constexpr const char* kSpecOptions = R"(
Deployment options (each also a key of the TOML file given with --config; flags win):
{options deployment}
Sizes use Redis' units: 100mb, 1.5gb, 1g (= 10^9 bytes), 512kb.
)";

constexpr const char* kPlan = R"(Usage: shardctl plan [options]

Prints where each shard would live: its ports, its CPU, its NUMA node, its maxmemory and its
slots. Starts nothing and touches no state. Shards spread evenly over NUMA nodes, take one thread
of every physical core before any SMT sibling, never use reserved CPUs, and share CPUs evenly (with
a warning) when there are more shards than CPUs.

{options}
)";

constexpr const char* kUp = R"(Usage: shardctl up [options]

Checks the plan, the engine and that every port is free, then starts a supervisor that spawns
each shard pinned to its CPU with its memory bound to its NUMA node, forms the cluster (even slot
split as redis-cli assigns it, distinct config epochs, full-mesh MEET) and returns once every node
reports cluster_state:ok and all agree on the slot map. Prints how long it took.

Running `up` again with the same spec changes nothing and exits 0; with a different spec it
refuses and lists what differs. If anything fails, everything started is stopped again.

{options}
)";

constexpr const char* kStatus =
    R"(Usage: shardctl status [--name NAME] [--state-dir DIR] [--config FILE] [--json] [--cluster]

Probes every shard of the deployment and prints one row per shard: pid, port, CPUs, NUMA node,
maxmemory, used memory, keys, role and health, plus the cluster state and any slot moves in
progress (slots MIGRATING or IMPORTING: normal while scale or rebalance runs; after a crash they
stay until the next rebalance, move-slots, scale or up finishes them).

{options}
{options deployment}

Exit codes (monitoring-plugin convention, usable from cron and Nagios-style checks):
  0  every shard healthy and the supervisor running
  1  degraded: serving, but some shard is unhealthy, the supervisor is down or a slot move is open
  2  down: the cluster is not serving (no shard answers, or cluster_state is fail)
  3  unknown: no such deployment
)";

constexpr const char* kDown =
    R"(Usage: shardctl down [--name NAME] [--state-dir DIR] [--config FILE] [--purge] [--leave]
                     [--no-save] [--json]

Stops every shard (SIGTERM, which Redis handles as a clean shutdown; SIGKILL after 10 s) and the
supervisor. Works without a supervisor too, from the pid files. Stopping a deployment that is not
running succeeds. Only processes shardctl started are ever signalled (pid and start time checked).

With --persistence rdb every primary is saved first (its writes held from its snapshot until it
exits; a shard stopped with SIGSTOP is continued; at most --fork-limit at once): a primary that
cannot be saved (a full disk, mostly) or does not answer ends the down with exit 1 before
anything is stopped. Free space and run it again, or stop without saving with --no-save (writes
since each primary's last snapshot are lost). Ctrl-C while they are saved resumes their writes
and stops nothing (exit 130). Without persistence the keys go with the shards.

Refused (exit 2, nothing stopped) while an up starts the deployment or another shardctl command
works on it (scale, rebalance, move-slots, restart, restore, import, backup): it names the command
and its pid. A live import that follows its source is the exception: it stops with the shards, to
be run again.

{options}
{options deployment}
)";

constexpr const char* kRestart =
    R"(Usage: shardctl restart SHARD | --rolling [--engine E] [--discard-data] [--name NAME]
                        [--state-dir DIR] [--config FILE] [--json]

Restarts shards through the supervisor, keeping every key, and starts each again at once on the
same CPU, NUMA node, port and data directory, with its nodes.conf, so it rejoins the cluster with
the same node ID. How the keys are kept, whatever the persistence:
  a primary with a replica   the replica takes over first (CLUSTER FAILOVER); the old primary
                             comes back as its replica and resyncs            (data: handed-over)
  a primary, --persistence aof  a clean shutdown flushes the AOF; the new process replays it
                                                                              (data: aof)
  any other primary          writes are held while it is saved (CLIENT PAUSE WRITE: they wait),
                             it is stopped, and the new process loads that snapshot; without
                             persistence the snapshot is deleted once loaded  (data: saved)
                             Its slots have no server from the stop until the new process has
                             loaded and rejoined: commands for them get CLUSTERDOWN (about 1.5 s
                             for a small shard, more as it holds more to load); nothing
                             acknowledged is lost. A replica (--replicas 1) avoids the gap.
  a replica                  restarts and resyncs from its primary           (data: resynced)
Returns when the shard has loaded its keys and every node reports cluster_state:ok again; says
how many keys the shard had before and after.

  SHARD                    the index of the shard to restart (see shardctl status)
{options}
{options deployment}

Needs a running supervisor (start one with shardctl up, which adopts running shards); one restart
of a deployment runs at a time, and none while another command uses its data (restore, import,
with --live until its cutover, scale, rebalance, move-slots, backup: a shard stopped under them
fails them midway); the refusal names the pid and command. Ctrl-C sees the shard under way
through (or, while it is being saved, leaves it running with its writes resumed) and touches no
further shard; a second Ctrl-C stops at once. Exit codes: 0 restarted, 1 a restart failed (the
error says whether the shard still runs as it was), 2 bad input, a refused engine change, TLS
files no peer would accept, or another restart or data command under way, 130 interrupted.
)";

constexpr const char* kLogs =
    R"(Usage: shardctl logs [SHARD] [-f] [--lines N] [--name NAME] [--state-dir DIR] [--config FILE]

Prints the last lines of the supervisor's log, or of shard SHARD's server log.

  SHARD                    a shard index; without it, the supervisor's log
{options}
{options deployment}
)";

constexpr const char* kRebalance =
    R"(Usage: shardctl rebalance-roles [--name NAME] [--state-dir DIR] [--config FILE] [--json]

After failovers (a primary died and its replica took over) the primaries are no longer where the
plan put them, spread over cores and NUMA nodes. This moves the role back: each planned primary
that is now a replica gets a graceful CLUSTER FAILOVER, one at a time. The old primary pauses writes
only until its replica has caught up; no write is refused and none is lost. Typed right after a
failover, it first waits (up to 30 s) for every node to agree on who serves which slot, and after
the moves again, so the status that follows sees them settled.

{options}
{options deployment}
)";

constexpr const char* kRebalanceSlots =
    R"(Usage: shardctl rebalance [--by slots|keys|memory|load] [--threshold 2%] [--window 5s]
                          [--migration auto|migrate|atomic] [--dry-run] [--json] [--name NAME]
                          [--state-dir DIR] [--config FILE]

Moves slots between the running primaries, with their keys, while clients keep reading and
writing, until each primary holds its share (--by).

--by load counts the CPU each slot uses for --window (the primaries' own CLUSTER SLOT-STATS,
switched on for the window and back off), then moves slots so that each primary's CPU is within
--threshold of the mean. A slot hotter than one primary's fair share cannot be split by any move:
it stays, named, and its primary gives its other slots away. --dry-run prints the load of each
primary now and as predicted after the moves. Redis 7.0 has no per-slot counters: use --by keys.

{options}
{options deployment}

Moves between disjoint pairs of primaries run in parallel; each one pipelines many keys per MIGRATE
and several MIGRATEs at once. A progress line shows slots, keys, MB/s and ETA on a terminal; with
--json every second brings a {"event":"progress"} line and the last line is {"event":"done"}.
Ctrl-C stops after the slots in hand, leaving none half-moved; a crash, or a target that runs out
of memory during the move, can leave some open: `status` lists them (and exits 1), and the next
rebalance, move-slots, scale or up finishes them first, if their keys fit in the target's maxmemory.

Exit codes: 0 balanced (or moved), 1 a node failed, 2 bad flags, moves that would take a shard
past 90% of its maxmemory, or a slot left open whose keys do not fit in its target (nothing
moves), 130 stopped by Ctrl-C/SIGTERM.
)";

constexpr const char* kScale =
    R"(Usage: shardctl scale --shards N [--cpus LIST] [--reserve-cpus LIST] [--migration auto|migrate|atomic]
                      [--dry-run] [--json] [--name NAME] [--state-dir DIR] [--config FILE]

Changes the number of primaries of a running deployment while clients keep working.

Up (N above today's count): the new shards are placed by the same rules as `up` (free physical
cores first, NUMA nodes kept even, replicas away from their primary), started by the supervisor,
joined to the cluster, and only then given slots: a rebalance moves slots and keys onto them.
Down (N below): the most recently added primaries (highest indices) give all their slots and keys
to the others, are checked empty, stopped, deleted, and forgotten by every node (CLUSTER FORGET).
Each primary keeps as many replicas as the others have. Shards keep their index, port and data
directory for life, so indices may have gaps after scaling down.

  shardctl scale --shards 48 --dry-run     # the new shards' placement and the slot moves
  shardctl scale --shards 48
  shardctl scale --shards 32

Interrupted (Ctrl-C, a crash), the cluster keeps serving; running scale again continues: open
slot moves are finished first, shards started but not yet joined are joined, and shards stopped
but not yet forgotten are forgotten. `up` with the old spec afterwards reports how the running
shape differs instead of changing it back.

{options}
{options deployment}

Exit codes: 0 done (or nothing to do), 1 a step failed (named), 2 the count does not fit the host
or the keys would not fit the shards that stay (past 90% of their maxmemory: nothing moves),
130 stopped by Ctrl-C/SIGTERM.
)";

constexpr const char* kMoveSlots =
    R"(Usage: shardctl move-slots RANGES --to SHARD [--migration auto|migrate|atomic] [--dry-run] [--json]
                           [--name NAME] [--state-dir DIR] [--config FILE]

Moves the slots in RANGES (e.g. 100-200, or 0-99,500) to shard SHARD, a primary, with their keys,
live. Slots already on SHARD stay; running the same command again changes nothing. Overlapping
ranges and shards that do not exist are refused before anything moves.

  shardctl move-slots 0-1000 --to 3 --dry-run     # which shards would give what
  shardctl move-slots 0-1000 --to 3               # move them

Ctrl-C stops after the slots in hand (exit 130); run the same command again to continue.

  RANGES                   slot ranges, e.g. 100-200 or 0-99,500
{options}
{options deployment}

Exit codes: 0 moved (or nothing to move), 1 a node failed, 2 bad input (a target that is a replica,
or one the keys would take past 90% of its maxmemory: nothing moves), 130 stopped by Ctrl-C.
)";

constexpr const char* kSave =
    R"(Usage: shardctl save [--name NAME] [--state-dir DIR] [--config FILE] [--json]

Saves every shard once (BGSAVE with --persistence rdb, BGREWRITEAOF with aof) through the
supervisor's fork scheduler: at most fork-limit shards fork at once on the host, and a shard forks
only when the host's available memory covers its used memory (what copy-on-write could need).
Returns when every shard has saved; exit 1 if any save failed. Refused (exit 2, naming its pid)
while a backup runs: its snapshot forks would be counted as this save's.

{options}
{options deployment}
)";

constexpr const char* kBackup =
    R"(Usage: shardctl backup --to DIR [--wait DURATION] [--name NAME] [--state-dir DIR]
                       [--config FILE] [--json]

Every primary's data as of one instant: writes are held on every primary (CLIENT PAUSE WRITE: they
wait, none is refused) only while each primary forks its snapshot, which it then streams to shardctl
over its replication port (nothing is written to the shards' disks; works with TLS, passwords, and
without persistence). DIR gets one shard-<k>.rdb per primary and manifest.json: engine and version,
slot ranges, keys, size and SHA-256 of each file, and the pause measured. The pause is printed and
in --json (write_pause_ms). With CAP_SYS_NICE (root) or an rtprio limit (ulimit -r), shardctl takes
the cut at real-time priority (cut_realtime in --json), so that on a busy host it does not wait for
a CPU while writes are held. Slots that were moving between primaries at the cut are named in the
manifest and --json (moving_slots): a restore copies such a backup key by key. A failed or
interrupted backup removes what it wrote. While restore, import, scale, rebalance, move-slots,
restart, save or another backup runs on the deployment, or a restore into it was cut short and not
run again, a backup is refused before DIR is touched (a cut of half-copied keys or half-moved slots
would not restore as it was); so is it while a Valkey atomic slot migration (CLUSTER MIGRATESLOTS)
runs, whose target holds a hidden copy of the slots' keys that its snapshot would add a second time.
A deployment whose import was cut short is backed up with a warning (it may hold the only copy of
keys its source lost). DIR may not be inside the state directory (down --purge would delete it); an
existing empty DIR keeps its mode, the files are the owner's (0600).
With --wait DURATION it waits for any of these to end instead (checking every second, the
progress line saying what it waits for), for a backup from cron that meets a rebalance.

{options}
{options deployment}

Exit codes: 0 written, 1 a primary failed or the cluster is not ok, 2 DIR not empty, not
writable or inside the state directory, another command holds the deployment's data, a restore
into it was cut short, or an atomic slot migration runs, 130 stopped by Ctrl-C.
)";

constexpr const char* kRestore =
    R"(Usage: shardctl restore --from DIR [--dry-run] [--name NAME] [--state-dir DIR] [--json]

Puts a backup's keys into this deployment, which must be empty (start one with shardctl up; any
shard count, any engine that reads the backup's RDB format). First every file is checked against
the manifest (size, SHA-256), the format against the engine, and each file read to its end by the
deployment's engine as redis-check-rdb (a file it could not load would stop a shard at every
start): any problem is one line, exit 2, nothing changed. Then, when the deployment has the backup's shape (each file's slots are one
local primary's, no AOF, no slot moving at the cut), each primary restarts with its file as its
snapshot, all at once, and its replicas resync from it ("placed"); otherwise each file is loaded
by a scratch server of the deployment's engine on 127.0.0.1 and its keys go to the primaries
owning their slots (DUMP / RESTORE, TTLs kept; "copied"). --dry-run says which, and why not
placed.

Interrupted (Ctrl-C, a crash), run the same command again: it loads or copies every key again
(none twice) and finishes.
A restore ends by counting the deployment: fewer keys than it copied or loaded (less those that
expired meanwhile) fails it with both numbers, and the run again puts them back.

{options}
{options deployment}

Exit codes: 0 restored, 1 a server failed or keys were lost or evicted while it copied (run again
to finish), 2 a damaged or foreign backup, a format the engine cannot load, or a deployment that
is not empty, 130 stopped by Ctrl-C.
)";

constexpr const char* kImport =
    R"(Usage: shardctl import --from HOST:PORT [--password-file F] [--tls-ca F] [--live] [--dry-run]
                       [--json] [--name NAME] [--state-dir DIR]
       shardctl import --cutover [--json] [--name NAME] [--state-dir DIR]

Copies every key of a running Redis or Valkey into this deployment (which must be empty), each
to the primary owning its slot, TTLs kept, every type (the engines' DUMP / RESTORE, pipelined, on
several connections). The source may be a standalone server or a node of another cluster (then
every primary of it is copied). Problems are found before a key is copied: keys in a db other
than 0, a data format this deployment's engine cannot load, a deployment that is not empty.
--dry-run lists them all.

Without --live the copy reads the source as it is while it runs: stop writes to the source
first, or writes made during the copy may be missed. Interrupted, run the same command again.

With --live the source is followed as a replica would (PSYNC): its snapshot is loaded by a
scratch server and copied, then every write it made since is applied in order, routed by slot
(MSET and DEL split per slot, a transaction in one slot kept whole; RENAME, SMOVE, LMOVE,
COPY, *STORE, PFMERGE, BITOP of keys in different slots run on one primary with temporary
copies of the other keys), until `import --cutover` (or Ctrl-C) asks it to stop: it waits until
the lag is 0 and reports. Lag in bytes and ms is in `status` and `/metrics` meanwhile. A write
the cluster cannot follow (a script or SORT BY a pattern on keys of different slots, a write to
a db other than 0) stops the import with the command named.

{options}
{options deployment}

Into Valkey 8.1 or newer the primaries expire nothing until the import ends (import-mode), so a
key the source keeps extending is never lost here first; Redis cannot hold expiry, and a source
with TTLs gets a warning. A primary that restarts during a live import stops it; the same
command run again copies a new snapshot and deletes what the first run left that it lacks.

Exit codes: 0 imported (dry run: no problem; --live: Ctrl-C while following is the cutover), 1
the source or a shard failed, 2 bad input or a problem found, 130 stopped by Ctrl-C while copying.
)";

constexpr const char* kReloadTls =
    R"(Usage: shardctl reload-tls [--name NAME] [--state-dir DIR] [--config FILE] [--dry-run] [--json]

Takes up renewed certificates without a restart: replace the files `up --tls-cert/--tls-key/
--tls-ca` named (same paths), then run this. The files are checked first (the key only for its
owner, the key matching the certificate, the CA loading); a problem there is exit 2 and nothing
is touched. Then one shard at a time: CONFIG SET tls-cert-file/tls-key-file/tls-ca-cert-file, and
a new TLS connection must answer PING before the next shard. Then the supervisor's links and
shardproxy (SIGHUP) take the new files. Connections already open keep their session.

To change the CA, first give every process a CA file holding both the old and the new CA, reload,
move to certificates of the new CA, reload, then drop the old CA and reload again.

{options}
{options deployment}

Exit codes: 0 reloaded, 1 a shard refused or stopped answering (the error names it and how many
were done; running it again is safe), 2 no TLS on this deployment or a file that does not load.
)";

constexpr const char* kTop =
    R"(Usage: shardctl top [--interval 1s] [--sort KEY] [--count N] [--name NAME] [--state-dir DIR]
                    [--config FILE]
       shardctl top --slots [--limit K] [--json] [--interval 1s] [--count N] [--name NAME] ...
       shardctl top --keys [--interval 1s] [--count N] [--name NAME] ...

A live table of the deployment's shards, one row each: ops/s, keyspace hit ratio, used memory
against the cap (maxmemory), clients, CPU% (of one CPU, from /proc), role, and the last fork (how
long fork() took, and how long ago the last save finished). Shards are probed directly, so it
works without a supervisor.

On a terminal the table is redrawn in place; keys change the sort (o ops/s, m memory, c CPU,
l clients, h hit ratio, s shard number) and q, Ctrl-C or SIGTERM quit. When stdout is not a
terminal it prints the table as plain lines at every refresh.

--slots shows the K hottest slots over each interval instead, by CPU: slot, owner shard, ops/s
(requests the deployment's shardproxy routed there, from PROXY SLOTS; "-" without one), CPU share,
keys, bytes in and out per second (CLUSTER SLOT-STATS: Valkey 8+, Redis 8.2+). Where a primary has
cluster-slot-stats-enabled off, it is turned on for the run and back off at the end (also on
Ctrl-C or SIGTERM). Exit codes: 0 done, 1 the deployment cannot be read or, on an engine without
CLUSTER SLOT-STATS and no proxy answering PROXY SLOTS, per-slot load is not available; 2 bad flags.

--keys shows the hottest keys the deployment's shardproxy routed instead (PROXY HOTKEYS: up to
shardproxy --hot-keys keys, default 64): key, requests/s over the interval, share of all
the requests the proxy counted, reads % (read-only commands), the key's slot and the shard owning
it. The counts are the proxy's, about a second old. A deployment without --proxy-port fails with
exit 1.

{options}
{options deployment}
)";

constexpr const char* kSupervise =
    R"(Usage: shardctl supervise --name NAME [--state-dir DIR] [--config FILE]

Runs the supervisor of a deployment recorded by `shardctl up` in the foreground. `up` starts it in
the background; you rarely need this directly. SIGTERM or SIGINT stops the shards and exits 0.

{options deployment}
)";

// The hand-written text of `command` ("" when it has none).
const char* ProseOf(const std::string& command) {
  static const std::map<std::string, const char*> kTexts = {{"plan", kPlan},
                                                            {"up", kUp},
                                                            {"status", kStatus},
                                                            {"down", kDown},
                                                            {"supervise", kSupervise},
                                                            {"restart", kRestart},
                                                            {"logs", kLogs},
                                                            {"rebalance-roles", kRebalance},
                                                            {"rebalance", kRebalanceSlots},
                                                            {"move-slots", kMoveSlots},
                                                            {"scale", kScale},
                                                            {"save", kSave},
                                                            {"top", kTop},
                                                            {"reload-tls", kReloadTls},
                                                            {"backup", kBackup},
                                                            {"restore", kRestore},
                                                            {"import", kImport}};
  auto found = kTexts.find(command);
  return found == kTexts.end() ? "" : found->second;
}

}  // namespace

std::string HelpText(const std::string& command) {
  if (command == "bench" || command == "bench compare") return BenchHelp(command);
  const std::string prose = ProseOf(command);
  if (prose.empty()) return kOverview;
  const bool full_spec = command == "plan" || command == "up";
  Invocation unused;
  return common::FillOptions(full_spec ? prose + kSpecOptions : prose,
                             CommandRows(command, unused));
}

std::string ManPage(const std::string& version_line) {
  common::ManSection commands{.title = "Commands"};
  for (const auto& command : CommandNames()) {
    if (command == "help") continue;
    if (command == "bench") {
      commands.subsections.emplace_back("shardctl bench run", HelpText("bench"));
      commands.subsections.emplace_back("shardctl bench compare", HelpText("bench compare"));
      continue;
    }
    commands.subsections.emplace_back("shardctl " + command, HelpText(command));
  }
  return common::RenderManPage({.program = "shardctl",
                                .source = version_line,
                                .help = common::SplitHelp(kOverview, "shardctl"),
                                .sections = {commands},
                                .see_also = {"shardproxy(1)", "redis-server(1)", "redis-cli(1)"}});
}

}  // namespace shardctl::launcher
