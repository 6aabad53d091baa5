// The --help texts of bench run and bench compare: prose written here, the options lists filled in
// from the rows their parsers read (BenchRunRows, BenchCompareRows) at each "{options ...}" line.
#include "launcher/bench/help.h"

#include "launcher/bench/args.h"
#include "launcher/bench/compare.h"

namespace shardctl::launcher {
namespace {

constexpr const char* kBench =
    R"(Usage: shardctl bench run [options]

Generate GET/SET load against one Redis/Valkey server (--host/--port) or a Redis Cluster
(--cluster HOST:PORT: reads CLUSTER SLOTS, sends each key to its slot's primary, follows MOVED
and ASK), then print throughput and latency percentiles. Works against any server, not only
deployments made by shardctl.

Target:
{options Target}

Concurrency:
{options Concurrency}

Workload:
{options Workload}

Pace and bounds (closed loop, as fast as replies come, unless a rate is given):
{options Pace}
Ctrl-C stops early: replies in flight are awaited, the report printed.

Output:
{options Output}

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
and writes DIR/index.md (host, pinning, ops/s, p50/p99/p99.9 and the server side's CPU per
request per configuration, every command line), summary.csv, timeline.csv (ops and p99 per second), *.gp and, when gnuplot is installed,
throughput.png, latency.png and timeline.png. Everything it starts is stopped on every path,
Ctrl-C included (deployments live in a temp state dir and are removed with down --purge).

Options:
{options}

Passed to every `bench run` (see shardctl bench run --help):
{options bench run}

Example:
  shardctl bench compare --cpus 0-1 --workload mixed-80-20 --duration 30s --out report/

Exit codes: 0 every run completed (a missing gnuplot only warns), 1 a run failed or a port is
taken, 2 bad flags, 130 interrupted (the report of what ran is still written).
)";

}  // namespace

std::string BenchHelpText(const std::string& command) {
  if (command == "bench") return common::FillOptions(kBench, BenchRunRows());
  if (command == "bench compare") return common::FillOptions(kBenchCompare, BenchCompareRows());
  return "";
}

}  // namespace shardctl::launcher
