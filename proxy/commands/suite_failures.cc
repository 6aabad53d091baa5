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
  std::string_view engines;
  std::string_view reason;
};

// Measured on each of the engines users run (scripts/redis-test-suite --engine redis, redis8,
// valkey): the test fails through the proxy and passes on one server of that engine.
constexpr std::string_view kAllEngines = "all three";
constexpr std::string_view kValkey = "Valkey 9.1";

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

constexpr std::string_view kValkeyStuckSlot =
    "Valkey 9.1 cluster mode: once a script on a cluster node touches keys of two slots (the "
    "suite's `EVAL \"return redis.pcall('brpoplpush','empty_list1','empty_list2',0)\" 0`, early "
    "in unit/scripting), that node answers `Attempted to access a non local key in a cluster "
    "node` to every later script that touches a key, declared and local or not, until it "
    "restarts (`SCRIPT FLUSH`, `FUNCTION FLUSH` do not clear it). Shown on a one-node Valkey "
    "cluster with a plain client: `redis-cli -p <node> eval \"return "
    "redis.pcall('rpoplpush','empty_list1','empty_list2')\" 0`, then `redis-cli -p <node> set b "
    "1` and `redis-cli -p <node> eval \"return redis.call('get',KEYS[1])\" 1 b` answers that "
    "error. The suite straight against such a node fails every one of these tests too "
    "(scripting passes 112 there, 115 through the proxy; functions 54 in both). Redis 7.0 and "
    "8.2 refuse the cross-slot call alone and go on; a Valkey server outside cluster mode is "
    "not affected. The unit files run after unit/scripting meet shards already in that state.";

constexpr std::string_view kValkeyStuckSlotAgain =
    "Valkey 9.1 cluster mode, as in unit/scripting's Valkey row above: on shards an earlier "
    "cross-slot script left in that state, every script that touches a key is refused as a non "
    "local key; the same on a one-node Valkey cluster with a plain client.";

constexpr SuiteFailure kFailures[] = {
    {"unit/scripting",
     "Script check unpack with massive arguments*; Script del key with expiration set*; Script "
     "read key with expiration set*; EVAL - Scripts can run non-deterministic commands; allow-oom "
     "shebang flag",
     kAllEngines, kNonLocalKey},
    {"unit/functions", "FUNCTION - test fcall_ro with read only commands", kAllEngines,
     kNonLocalKey},
    {"unit/scripting", "not enough good replicas", kAllEngines,
     "Follows from allow-oom shebang flag, which fails (a non local key) before its `CONFIG SET "
     "maxmemory 0`: the primaries are still out of memory. Alone it passes."},
    {"unit/scripting", "Script ACL check*", kAllEngines,
     "Choice: the proxy's users are its own (`--auth-file`), so `ACL` is refused with that "
     "reason. Alternative: `ACL SETUSER` on each shard, and the user in `--auth-file`."},
    {"unit/other", "RESET clears authenticated state", kAllEngines,
     "Choice: `ACL` is refused (see Script ACL check). Alternative: users in `--auth-file`, then "
     "`AUTH` and `RESET` through the proxy behave as the test expects."},
    {"unit/other", "RESET clears MONITOR state", kAllEngines,
     "Choice: `MONITOR` is refused (see unit/introspection's MONITOR row below: it streams one "
     "server's commands). Alternative: `MONITOR` on a shard (`redis-cli -p <shard> monitor`)."},
    {"unit/type/list", "client unblock tests (both runs: BLPOP and BLMPOP)", kAllEngines,
     "`CLIENT UNBLOCK` is refused: a client's blocking command waits on the proxy's connection "
     "pinned to it, whose id on the shard is not the id `CLIENT ID` gives the client; mapping "
     "one to the other (unblock the pinned connection on its shard) is not built yet. "
     "Alternative: a timeout on the blocking command, or `CLIENT UNBLOCK` on the shard for the "
     "blocked connection `CLIENT LIST` there shows (cmd=blpop)."},
    {"unit/scripting", "SCRIPT EXISTS - can detect already defined scripts?", kAllEngines,
     "Choice: a keyless `EVAL` caches its script on the one primary that ran it; `SCRIPT EXISTS` "
     "answers 1 only for a script every primary has, so that `EVALSHA` of it works whatever its "
     "keys. Alternative: `SCRIPT LOAD` (loads on every primary; then EXISTS answers 1)."},
    {"unit/multi",
     "MULTI and script timeout; EXEC and script timeout; MULTI-EXEC body and script timeout; "
     "just EXEC and script timeout",
     kAllEngines, kBusyOneNode},
    {"unit/multi",
     "EXEC with only read commands should not be rejected when OOM; EXEC with at least one "
     "use-memory command should fail; and in some runs Blocking commands ignores the timeout; "
     "MULTI with SAVE; MULTI with SHUTDOWN; MULTI with config error; Flushall while watching "
     "several keys by one client",
     kAllEngines,
     "Follow from the script timeout tests above, which fail before their `SCRIPT KILL`: a "
     "`while true do end` keeps one primary busy, and the tests after it get `BUSY` from it "
     "(the last, its `MSET` refused as CROSSSLOT: the client is still in the `MULTI` the test "
     "before it left open). How many depends on which primary each keyless script lands on. "
     "Alone (tests/integration/proxy_transaction_compat_test.cc) the two OOM tests pass."},
    {"unit/latency-monitor", "LATENCY HISTOGRAM sub commands", kAllEngines,
     "Choice: `CLIENT ID` and `CLIENT LIST` are answered by the proxy (a client's connection is "
     "the proxy's), so no shard counts them. Alternative: `LATENCY HISTOGRAM` on a shard for "
     "the commands it runs."},
    {"unit/slowlog", "SLOWLOG - max entries is correctly handled", kAllEngines,
     "Choice: `PING` is answered by the proxy (no shard logs it; it asks the shards only while "
     "a script runs). Alternative: `SLOWLOG` on a shard for the commands it runs."},
    {"unit/slowlog",
     "SLOWLOG - Rewritten commands are logged as their original command; SLOWLOG - commands "
     "with too many arguments are trimmed; SLOWLOG - too long arguments are trimmed; SLOWLOG - "
     "get all slow logs",
     kAllEngines,
     "Redis Cluster: each node has its own slow log, stamped to the second, and logs every "
     "`CONFIG SET` and `SLOWLOG RESET` it is sent; entries of several nodes within one second "
     "cannot be put in order, and a server-wide command is one entry per node. The same holds "
     "for a cluster client reading `SLOWLOG GET` from every node."},
    {"unit/scripting",
     "EVAL_RO - Successful case*; EVAL_RO - Cannot run write commands*; Test an example script "
     "DECR_IF_GT*; EVAL does not leak in the Lua stack*; Number conversion precision test (issue "
     "#1118)*; String containing number precision test (regression of issue #1118)*; Correct "
     "handling of reused argv (issue #1939)*; Timedout script link is still usable after Lua "
     "returns*; Call Redis command with many args from Lua (issue #1764); Script with RESP3 map; "
     "EVAL - is Lua able to call Redis API?; EVALSHA - Can we call a SHA1 if already defined?; "
     "EVALSHA - Can we call a SHA1 in uppercase?; EVAL - Redis integer -> Lua type conversion; "
     "EVAL - Redis bulk -> Lua type conversion; EVAL - Redis multi bulk -> Lua type conversion; "
     "EVAL - Redis status reply -> Lua type conversion; EVAL - Redis error reply -> Lua type "
     "conversion; EVAL - Redis nil bulk reply -> Lua type conversion; SCRIPTING FLUSH - is able "
     "to clear the scripts cache?; SCRIPTING FLUSH ASYNC (its `number_of_cached_scripts` "
     "counts the scripts the test before it could not flush); Timedout script does not cause a "
     "false dead client",
     kValkey, kValkeyStuckSlot},
    {"unit/functions",
     "FUNCTION - test fcall_ro with write command; FUNCTION - test keys and argv; LIBRARIES - "
     "test shared function can access default globals; FUNCTION - verify allow-omm allows "
     "running any command",
     kValkey, kValkeyStuckSlotAgain},
    {"unit/pause",
     "Test RO scripts are not blocked by pause RO; Test may-replicate commands are rejected in "
     "RO scripts",
     kValkey, kValkeyStuckSlotAgain},
    {"unit/introspection-2", "command stats for scripts", kValkey, kValkeyStuckSlotAgain},
    {"unit/latency-monitor", "LATENCY RESET is able to reset events", kValkey,
     "Follows from the Valkey state above: the expire test's `EVAL` (a million SADDs, the slow "
     "event this test resets) is refused as a non local key, so no shard has a latency event "
     "and `LATENCY RESET` answers 0. The same on a one-node Valkey cluster after unit/scripting."},
    {"unit/scripting", "no-writes shebang flag", kValkey,
     "Follows from allow-oom shebang flag, which fails (the Valkey state above) before its "
     "`CONFIG SET maxmemory 0`: the primaries are still out of memory."},
    {"unit/functions",
     "FUNCTION - wrong flag type; FUNCTION - unknown flag; FUNCTION - write script on fcall_ro; "
     "FUNCTION - write script with no-writes flag; FUNCTION - deny oom; FUNCTION - deny oom on "
     "no-writes function; FUNCTION - redis version api; FUNCTION - function stats; FUNCTION - "
     "function stats delete library; FUNCTION - test function stats on loading failure; FUNCTION "
     "- function test empty engine; FUNCTION - function test unknown metadata value; FUNCTION - "
     "function test no name; FUNCTION - function test multiple names; FUNCTION - function test "
     "name with quotes; FUNCTION - trick global protection 1; FUNCTION - test getmetatable on "
     "script load",
     kValkey,
     "Follow from FUNCTION - verify allow-omm allows running any command, which fails (the "
     "Valkey state above) before its `CONFIG SET maxmemory 0`: every later write, `FUNCTION "
     "LOAD` too, is refused with OOM. The same on a one-node Valkey cluster after unit/scripting; "
     "on a fresh cluster (`scripts/redis-test-suite --compare --engine valkey --units "
     "unit/functions`) all of them pass through the proxy."},
    {"unit/pause",
     "Test special commands are paused by RO; Test read/admin mutli-execs are not blocked by "
     "pause RO; Test read-only scripts in mutli-exec are not blocked by pause RO",
     kValkey,
     "Fail only on Valkey shards that unit/scripting left in the state above (the runner's "
     "default order): the first times out waiting for `blocked_clients` to read 1 and leaves "
     "its pause set, the other two then get `shard ... no reply within 5000ms`. On a fresh "
     "cluster (`--engine valkey --units unit/pause`) all three pass through the proxy."},
};

}  // namespace

std::string SuiteFailuresSection() {
  std::string out =
      "## Redis' own tests that still fail\n\n"
      "Redis 7.0.15's test suite through shardproxy (`scripts/redis-test-suite --compare "
      "--engine E`), for\nthe unit files of scripting, functions, transactions, the latency "
      "monitor, the slow log, lazy\nfree, HyperLogLog, the protocol, dump, sort, bitops, lists and "
      "other, with shards of each engine users\nrun (Redis 7.0, Redis 8.2, Valkey 9.1): every "
      "test that passes on one server of that engine\nand fails through the proxy, and why. A "
      "name ending in `*` fails in both of unit/scripting's\nruns (EVAL and FUNCTION).\n\n"
      "| unit file | tests | engines | reason |\n|---|---|---|---|\n";
  for (const SuiteFailure& failure : kFailures) {
    out += "| " + std::string(failure.unit) + " | " + std::string(failure.tests) + " | " +
           std::string(failure.engines) + " | " + std::string(failure.reason) + " |\n";
  }
  return out + "\n";
}

}  // namespace shardctl::proxy
