#include "launcher/bench/help.h"

namespace shardctl::launcher {
namespace {

constexpr const char* kBench =
    R"(Usage: shardctl bench run [options]

Generate GET/SET load against one Redis/Valkey server (--host/--port) or a Redis Cluster
(--cluster HOST:PORT: reads CLUSTER SLOTS, sends each key to its slot's primary, follows MOVED
and ASK), then print throughput and latency percentiles. Works against any server, not only
deployments made by shardctl.

Target:
  --host HOST            plain server address (default: 127.0.0.1)
  --port PORT            plain server port (default: 6379)
  --cluster HOST:PORT    any node of a cluster; enables cluster routing
  --password-file FILE   log in with the password in FILE (mode 0600), e.g. the file given to
                         shardctl up --password-file
  --tls-ca FILE          speak TLS, trusting servers whose certificate this CA signed (e.g. a
                         deployment of shardctl up --tls-ca, or shardproxy with --tls-*)
  --tls-cert FILE --tls-key FILE
                         a client certificate and its key, for servers with tls-auth-clients

Concurrency:
  --threads N            generator threads, one event loop each (default: 1)
  --connections N        connections per thread (default: 50); in cluster mode one per primary
  --pipeline N           requests in flight per connection (default: 1; redis-vs-dragonfly: 30)
  --cpus LIST            pin thread i to the i-th CPU of LIST, e.g. 2-3 (default: not pinned)

Workload:
  --workload NAME        set-then-get        1 KB values, 3M keys: one SET per key, then GETs
                         redis-vs-dragonfly  256 B values, 1M keys, pipeline 30: SETs, then GETs
                         mixed-80-20         80% GET / 20% SET, values ~N(1 KB, 340 B) clipped to
                                             4..2048 B, GETs over 3.75M keys, SETs over 3M keys,
                                             populated first so ~80% of GETs hit
                         custom (default)    --ratio 1:1, 256 B values, 100k keys
  --scale F              multiply the preset's key spaces by F, e.g. 0.01 for a laptop
  --ratio GET:SET        mix of GETs and SETs, e.g. 1:4 = 20% GETs, 0:1 = only SETs
  --value-size BYTES     fixed value size
  --keyspace N           keys key:000000000000 .. N-1 (both GETs and SETs)
  --populate             write every SET key once, unmeasured, before the run
  --seed N               random seed; the same seed sends the same keys (default: 1)

Pace and bounds (closed loop, as fast as replies come, unless a rate is given):
  --rate R               open loop at R ops/s in total (50000, 50k, 1.5m); latency counts from
                         each request's intended send time, so stalls are not hidden
  --rate-profile STEPS   open loop in steps, e.g. 50k:10s,150k:5s,50k:10s (a spike)
  --duration D           stop sending after D (default: 10s, or the profile's length)
  --requests N           stop after N requests (with no --duration, only this bounds the run)
                         Ctrl-C stops early: replies in flight are awaited, the report printed

Output:
  --json                 one JSON document on stdout: ops, ops_per_sec, errors, hits, misses,
                         latency_us {p50, p90, p99, p99_9, max, mean}, per_second, phases,
                         moved, asked, first_error, interrupted and the settings used
  --progress             the progress line (ops/s, p99, time) on stderr even when it is no
                         terminal (on a terminal it is always shown)

Examples:
  shardctl bench run --port 6379 --ratio 0:1 --value-size 100 --pipeline 16
  shardctl bench run --cluster 127.0.0.1:7000 --workload mixed-80-20 --scale 0.01 --threads 2
  shardctl bench run --cluster 127.0.0.1:7000 --rate 50k --duration 30s --json
  shardctl bench run --port 6379 --rate-profile 20k:5s,80k:2s,20k:5s --progress

Exit codes: 0 the run completed (error replies are counted, not fatal), 1 the target could not
be reached, a connection was lost or the server stopped answering, 2 bad flags.
)";

constexpr const char* kBenchCompare =
    R"(Usage: shardctl bench compare --cpus LIST --out DIR [options]

Runs the same load, one configuration after the other on the same server cores:
  1. single  one redis-server/valkey-server with io-threads (swept over --io-threads)
  2. cluster an N-shard `shardctl up` cluster, cluster-aware client (slot routing)
  3. proxy   the same cluster through shardproxy, plain client
and writes DIR/index.md (host, pinning, ops/s and p50/p99/p99.9 per configuration, every command
line), summary.csv, timeline.csv (ops and p99 per second), *.gp and, when gnuplot is installed,
throughput.png, latency.png and timeline.png. Everything it starts is stopped on every path,
Ctrl-C included (deployments live in a temp state dir and are removed with down --purge).

Options:
  --cpus LIST            server cores, e.g. 0-1 (required)
  --out DIR              report directory (required)
  --loadgen-cpus LIST    generator cores (default: the cores not in --cpus; if none, the same
                         cores: the report says "sharing")
  --engines LIST         redis, valkey or redis,valkey (default: redis)
  --io-threads LIST      single-instance io-threads sweep (default: 1,2)
  --shards N             cluster primaries (default: number of --cpus)
  --steps LIST           any of single,cluster,proxy (default: all three)
  --base-port P          single instance on P, shards on P+1.., proxy after them, buses +10000;
                         all must be below 32768 and free (default: 12700)
  --json                 results as one JSON document on stdout
  --dry-run              print the plan (runs, pinning, command lines); start nothing
Passed to every `bench run`: --workload (default: mixed-80-20), --scale, --duration, --rate,
  --rate-profile, --threads (default: one per generator core), --connections, --pipeline,
  --requests, --ratio, --value-size, --keyspace, --seed

Example:
  shardctl bench compare --cpus 0-1 --workload mixed-80-20 --duration 30s --out report/

Exit codes: 0 every run completed (a missing gnuplot only warns), 1 a run failed or a port is
taken, 2 bad flags, 130 interrupted (the report of what ran is still written).
)";

}  // namespace

std::string BenchHelpText(const std::string& command) {
  if (command == "bench") return kBench;
  if (command == "bench compare") return kBenchCompare;
  return "";
}

}  // namespace shardctl::launcher
