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

constexpr std::string_view kClusterLimit = "Redis Cluster limit";
constexpr std::string_view kChoice = "deliberate";

struct Reasoned {
  std::string_view kind;  // kClusterLimit or kChoice
  Failing failing;
};

const Reasoned kFailing[] = {
    {kChoice,
     {"unit/tracking",
      "`CLIENT TRACKING` is refused (`-ERR command 'client|tracking' is not supported by "
      "shardproxy`): a shard sends an invalidation to the connection that read the key, and "
      "through the proxy that is a shard connection many clients share. Doing it right needs "
      "each tracking client's own connection to every shard, with RESP3 pushes or a REDIRECT "
      "connection subscribed to `__redis__:invalidate`, forwarded to the client: not built "
      "yet. Alternative: client-side caching with a cluster client connected to the shards "
      "(each node tracks the keys read from it). The file's first test then waits for an "
      "invalidation that never comes, so the harness stops the file at its timeout.",
      {"every test of the file (49 pass on redis-server)"}}},
    {kClusterLimit,
     {"unit/pubsub",
      "`PUBLISH` answers the receivers of the one node that ran it: Redis documents that in a "
      "cluster \"only clients that are connected to the same node as the publishing client are "
      "included in the count\", and through the proxy the receivers are its own per-thread "
      "subscriber connections, not its clients. The messages themselves arrive.",
      {"PUBLISH/SUBSCRIBE basics", "PUBLISH/SUBSCRIBE with two clients",
       "PUBLISH/SUBSCRIBE after UNSUBSCRIBE without arguments",
       "SUBSCRIBE to one channel more than once", "PUBLISH/PSUBSCRIBE basics",
       "PUBLISH/PSUBSCRIBE with two clients", "PubSub messages with CLIENT REPLY OFF",
       "NUMPATs returns the number of unique patterns", "Mix SUBSCRIBE and PSUBSCRIBE"}}},
    {kClusterLimit,
     {"unit/pubsub",
      "keyspace notifications are local to a node in Redis Cluster: each node publishes the "
      "events of its own keys to its own subscribers, not over the cluster bus, so a cluster "
      "client subscribes on every node. The proxy's channel and pattern subscriptions live on "
      "one primary, so only that primary's keys notify. Alternative: subscribe on each shard.",
      {"Keyspace notifications: we receive keyspace notifications",
       "Keyspace notifications: we receive keyevent notifications",
       "Keyspace notifications: we can receive both kind of events",
       "Keyspace notifications: general events test", "Keyspace notifications: zset events test"}}},
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
     {"unit/pause",
      "`CLIENT PAUSE` pauses every primary, and a shard counts a paused proxy connection once "
      "however many clients' writes wait on it, and cannot be queued in `MULTI` (the proxy "
      "queues only keyed commands). Alternative: `CLIENT PAUSE` before `MULTI`.",
      {"PLACEHOLDER"}}},
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
