// The section of docs/proxy-commands.md that lists the tests of Redis' own suite that still fail
// through shardproxy, with their reasons (issue 32): a limit of Redis Cluster itself, shown on a
// cluster node with a cluster client, or a choice of the proxy's with its alternative named.
#include <string>
#include <string_view>

#include "proxy/commands/command_docs.h"

namespace shardctl::proxy {
namespace {

struct SuiteFailure {
  std::string_view unit;
  std::string_view tests;  // the suite's test names ("*": both the EVAL and FUNCTION runs)
  std::string_view reason;
};

constexpr std::string_view kNonLocalKey =
    "Redis Cluster: a script may touch only keys it declares. These scripts declare none "
    "(numkeys 0) and touch one, so they run on one primary and fail with `Script attempted to "
    "access a non local key` unless that primary owns it; so do they on a cluster node with a "
    "cluster client: `redis-cli -c -p <node> eval \"redis.call('DEL','key') return "
    "redis.call('EXISTS','key')\" 0` answers that error on 2 of 3 nodes.";

constexpr std::string_view kBusyOneNode =
    "Redis Cluster: a script makes only its own node busy. The transaction's key lives on "
    "another primary, which queues and runs it; on a cluster, while `redis-cli -p <A> eval "
    "\"while true do end\" 0` runs, `redis-cli -c -p <A> incr xx` is redirected to xx's node and "
    "answers 1, not BUSY.";

constexpr SuiteFailure kFailures[] = {
    {"unit/scripting",
     "Script check unpack with massive arguments*; Script del key with expiration set; Script "
     "read key with expiration set; EVAL - Scripts can run non-deterministic commands; allow-oom "
     "shebang flag",
     kNonLocalKey},
    {"unit/functions", "FUNCTION - test fcall_ro with read only commands", kNonLocalKey},
    {"unit/scripting", "not enough good replicas",
     "Follows from allow-oom shebang flag, which fails (a non local key) before its `CONFIG SET "
     "maxmemory 0`: the primaries are still out of memory. Alone it passes."},
    {"unit/scripting", "Script ACL check*",
     "Choice: the proxy's users are its own (`--auth-file`), so `ACL` is refused with that "
     "reason. Alternative: `ACL SETUSER` on each shard, and the user in `--auth-file`."},
    {"unit/other", "RESET clears authenticated state",
     "Choice: `ACL` is refused (see Script ACL check). Alternative: users in `--auth-file`, then "
     "`AUTH` and `RESET` through the proxy behave as the test expects."},
    {"unit/scripting", "SCRIPT EXISTS - can detect already defined scripts?",
     "Choice: a keyless `EVAL` caches its script on the one primary that ran it; `SCRIPT EXISTS` "
     "answers 1 only for a script every primary has, so that `EVALSHA` of it works whatever its "
     "keys. Alternative: `SCRIPT LOAD` (loads on every primary; then EXISTS answers 1)."},
    {"unit/scripting",
     "SCRIPTING FLUSH ASYNC; LUA redis.error_reply API; LUA redis.error_reply API with empty "
     "string",
     "`INFO memory` (number_of_cached_scripts) and `INFO errorstats` are the proxy's own, not "
     "built from the shards' figures yet (the INFO work of issue 32, other branch)."},
    {"unit/multi",
     "MULTI and script timeout; EXEC and script timeout; MULTI-EXEC body and script timeout; "
     "just EXEC and script timeout",
     kBusyOneNode},
    {"unit/multi",
     "EXEC with only read commands should not be rejected when OOM; EXEC with at least one "
     "use-memory command should fail",
     "Follow from EXEC and script timeout, which fails before its `SCRIPT KILL`: its script keeps "
     "one primary busy. Alone (tests/integration/proxy_transaction_compat_test.cc) both pass."},
    {"unit/latency-monitor", "LATENCY HISTOGRAM sub commands",
     "Choice: `CLIENT ID` and `CLIENT LIST` are answered by the proxy (a client's connection is "
     "the proxy's), so no shard counts them. Alternative: `LATENCY HISTOGRAM` on a shard for "
     "the commands it runs."},
    {"unit/slowlog", "SLOWLOG - max entries is correctly handled",
     "Choice: `PING` is answered by the proxy (no shard logs it; it asks the shards only while "
     "a script runs). Alternative: `SLOWLOG` on a shard for the commands it runs."},
    {"unit/slowlog",
     "SLOWLOG - Rewritten commands are logged as their original command; SLOWLOG - commands "
     "with too many arguments are trimmed; SLOWLOG - too long arguments are trimmed; SLOWLOG - "
     "get all slow logs",
     "Redis Cluster: each node has its own slow log, stamped to the second, and logs every "
     "`CONFIG SET` and `SLOWLOG RESET` it is sent; entries of several nodes within one second "
     "cannot be put in order, and a server-wide command is one entry per node. The same holds "
     "for a cluster client reading `SLOWLOG GET` from every node."},
    {"unit/lazyfree",
     "UNLINK can reclaim memory in background; FLUSHDB ASYNC can reclaim memory in background; "
     "lazy free a stream with all types of metadata; lazy free a stream with deleted cgroup",
     "`INFO memory` (used_memory, lazyfree_pending_objects, lazyfreed_objects) is the proxy's "
     "own, not built from the shards' figures yet (the INFO work of issue 32, other branch)."},
    {"unit/dump", "MIGRATE cached connections are released after some time",
     "`INFO` lacks the shards' migrate_cached_sockets (the INFO work of issue 32, other branch)."},
};

}  // namespace

std::string SuiteFailuresSection() {
  std::string out =
      "## Redis' own tests that still fail\n\n"
      "Redis 7.0.15's test suite through shardproxy (`scripts/redis-test-suite`), for the unit "
      "files of\nscripting, functions, transactions, the latency monitor, the slow log, lazy "
      "free, HyperLogLog,\nthe protocol, dump, sort and other: every test that passes on one "
      "redis-server and fails\nthrough the proxy, and why. A name ending in `*` fails in both of "
      "unit/scripting's runs\n(EVAL and FUNCTION).\n\n"
      "| unit file | tests | reason |\n|---|---|---|\n";
  for (const SuiteFailure& failure : kFailures) {
    out += "| " + std::string(failure.unit) + " | " + std::string(failure.tests) + " | " +
           std::string(failure.reason) + " |\n";
  }
  return out + "\n";
}

}  // namespace shardctl::proxy
