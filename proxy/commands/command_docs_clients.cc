// docs/proxy-commands.md: the tests of Redis' own suite (scripts/redis-test-suite) that still
// fail through shardproxy in the connection and introspection families, with their reasons.
#include <initializer_list>
#include <string>
#include <string_view>

#include "proxy/commands/command_docs.h"

namespace shardctl::proxy {
namespace {

// Tests that fail for one reason, in one unit file of Redis 7.0.15's tests/.
struct Failing {
  std::string_view unit;
  std::string_view reason;
  std::initializer_list<std::string_view> tests;
};

constexpr std::string_view kChoice = "deliberate";
constexpr std::string_view kCluster = "Redis Cluster";

struct Reasoned {
  std::string_view kind;  // kChoice: a choice made here, its alternative named
  Failing failing;
};

const Reasoned kFailing[] = {
    {kCluster,
     {"unit/tracking",
      "Redis Cluster: memory limits are per node. The test sets `maxmemory` to `INFO`'s "
      "`used_memory` plus 100 KB; through the proxy that is the sum over the primaries, and "
      "`CONFIG SET maxmemory` gives each primary that sum while it holds a third of it, so no "
      "primary evicts the tracked key. With a cluster client connected to one node the test "
      "fails too: `volatile-key` (slot 8841) and `big-key` (slot 1080) live on different "
      "primaries of a 3-shard cluster, so the memory `big-key` takes never counts against the "
      "node that holds `volatile-key`, whichever node's limit was set.",
      {"Tracking invalidation message of eviction keys should be before response"}}},
    {kCluster,
     {"unit/tracking",
      "Redis Cluster: `tracking-table-max-keys` is per node. With it set to 1 and 250 keys "
      "tracked, each of the three primaries keeps one key and invalidates the rest: 247 "
      "messages, where one server sends 249. The test reads 249 and waits for the last two "
      "until the harness stops the file at its timeout, so the tests after it are not run "
      "(they pass: the same file run with `--skiptest` for this one). On a cluster with a "
      "cluster client the nodes keep one key each alike.",
      {"Server is able to evacuate enough keys when num of keys surpasses limit by more than "
       "defined initial effort",
       "not run, after it: Tracking info is correct; CLIENT GETREDIR provides correct client id; "
       "the seven CLIENT TRACKINGINFO tests; RESP3 and RESP2 based basic invalidation with "
       "client reply off; RESP3 based basic redirect invalidation with client reply off; RESP3 "
       "based basic tracking-redir-broken with client reply off"}}},
    {kChoice,
     {"unit/introspection",
      "`CLIENT LIST` and `CLIENT KILL` see only the calling client: each proxy thread owns its "
      "clients, and listing or closing another thread's clients would share every session "
      "across threads. Alternative: `CLIENT KILL ID <own id> SKIPME no` for the client itself, "
      "`redis-cli --cluster call` for the shards' connections.",
      {"CLIENT KILL SKIPME YES/NO will kill all clients",
       "After CLIENT SETNAME, connection can still be closed"}}},
    {kChoice,
     {"unit/introspection",
      "`MONITOR` is refused: it streams one server's commands, and the proxy's would be every "
      "shard's interleaved with other clients'. Alternative: `redis-cli -p <shard port> "
      "monitor` on each shard.",
      {"MONITOR can log executed commands",
       "MONITOR can log commands issued by the scripting engine",
       "MONITOR can log commands issued by functions",
       "MONITOR correctly handles multi-exec cases"}}},
    {kChoice,
     {"unit/introspection",
      "`CONFIG SET` goes to every primary (one Redis applies a setting everywhere), while "
      "`CONFIG GET *` is one shard's: its own `port`, `cluster-announce-*` and the like cannot "
      "be set on the other shards. Alternative: set a node's own settings on that node.",
      {"CONFIG sanity"}}},
    {kChoice,
     {"unit/introspection-2",
      "INFO commandstats is the shards' own, and since a queued write is shown to its primary "
      "as `MULTI <command> DISCARD` first (the transaction's queue-time answer from the "
      "shard), each probe counts as one more MULTI call there. Alternative: read MULTI and "
      "EXEC counts from the proxy's `/metrics`, or probe without MULTI.",
      {"command stats for MULTI"}}},
    {kChoice,
     {"unit/pause",
      "a shard counts one paused connection per proxy thread, however many clients' writes "
      "wait on it, so INFO's `blocked_clients` (the shards' own count) does not reach the "
      "number of paused clients. Alternative: send the writes from one client each, or read "
      "the shards' `blocked_clients` as connections.",
      {"Test multiple clients can be queued up and unblocked"}}},
    {kChoice,
     {"unit/pause",
      "`CLIENT PAUSE` cannot be queued in `MULTI` through the proxy (a transaction runs on "
      "the one shard of its keys, a pause belongs to every primary); the harness stops the "
      "test at the refusal, which it lists as \"d 'client' cannot be queued in a transaction "
      "through shardproxy\". Alternative: `CLIENT PAUSE` before `MULTI`.",
      {"Test both active and passive expires are skipped during client pause",
       "Test that client pause starts at the end of a transaction"}}},
};

}  // namespace

std::string SuiteFailuresClients() {
  std::string out =
      "\n## Redis' test suite: what still fails (connections, introspection, pub/sub)\n\n"
      "Tests of Redis 7.0.15's own suite (`scripts/redis-test-suite --compare`) that pass on "
      "one\nredis-server and fail through shardproxy, by unit file, with the reason: a limit "
      "of Redis Cluster\nitself, or a choice made here and its alternative.\n\n"
      "| unit | tests | kind | reason |\n|---|---|---|---|\n";
  for (const auto& [kind, failing] : kFailing) {
    std::string tests;
    for (std::string_view test : failing.tests) {
      tests += (tests.empty() ? "" : "; ") + std::string(test);
    }
    out += "| " + std::string(failing.unit) + " | " + tests + " | " + std::string(kind) + " | " +
           std::string(failing.reason) + " |\n";
  }
  return out;
}

}  // namespace shardctl::proxy
