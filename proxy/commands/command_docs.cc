#include "proxy/commands/command_docs.h"

#include <map>
#include <string_view>
#include <vector>

#include "proxy/commands/command_table.h"

namespace shardctl::proxy {
namespace {

std::string Join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += "`" + std::string(name) + "`";
  }
  return out;
}

std::string KeysOf(const CommandInfo& info) {
  const KeySpec& keys = info.keys;
  if (keys.numkeys_at > 0) {
    return std::string(keys.dest_first ? "argument 1, and " : "") + "numkeys at argument " +
           std::to_string(keys.numkeys_at) + ", " + (keys.step == 2 ? "key, value pairs" : "keys") +
           " from " + std::to_string(keys.first);
  }
  if (keys.last == -1 && keys.step == 1) return "arguments " + std::to_string(keys.first) + "…";
  if (keys.last == -1) return "key, value pairs from argument " + std::to_string(keys.first);
  if (keys.first == keys.last) return "argument " + std::to_string(keys.first);
  return "arguments " + std::to_string(keys.first) + "–" + std::to_string(keys.last);
}

std::string_view MergeText(MergeKind merge) {
  switch (merge) {
    case MergeKind::kArrayByKey:
      return "values back in the request's key order";
    case MergeKind::kSumIntegers:
      return "the parts' counts added up";
    case MergeKind::kAllOk:
      return "`+OK` when every part said `+OK`";
    case MergeKind::kNone:
      break;
  }
  return "";
}

// The table's commands by how the proxy routes them.
struct CommandGroups {
  std::vector<std::string_view> single, local, fan_out, scan, blocking, pubsub, read_only;
  std::vector<const CommandInfo*> split, one_slot;
  std::map<std::string_view, std::vector<std::string_view>> unsupported;  // by reason
};

CommandGroups GroupCommands() {
  CommandGroups groups;
  for (const CommandInfo& info : AllCommands()) {
    if (info.read_only) groups.read_only.push_back(info.name);
    switch (info.kind) {
      case RouteKind::kSingleKey:
        groups.single.push_back(info.name);
        break;
      case RouteKind::kSplitBySlot:
        groups.split.push_back(&info);
        break;
      case RouteKind::kOneSlot:
        groups.one_slot.push_back(&info);
        break;
      case RouteKind::kLocal:
        groups.local.push_back(info.name);
        break;
      case RouteKind::kFanOut:
        groups.fan_out.push_back(info.name);
        break;
      case RouteKind::kScan:
        groups.scan.push_back(info.name);
        break;
      case RouteKind::kBlocking:
        groups.blocking.push_back(info.name);
        break;
      case RouteKind::kPubSub:
        groups.pubsub.push_back(info.name);
        break;
      case RouteKind::kUnsupported:
        groups.unsupported[info.unsupported_reason].push_back(info.name);
        break;
    }
  }
  return groups;
}

std::string Heading(std::string_view title, size_t count) {
  return "## " + std::string(title) + " (" + std::to_string(count) + ")\n\n";
}

std::string KeySlotSections(const CommandGroups& groups) {
  std::string out = Heading("Routed by key slot", groups.single.size());
  out +=
      "Sent to the primary serving the key's slot; MOVED, ASK, TRYAGAIN and CLUSTERDOWN are\n"
      "followed by the proxy. `MEMORY`, `OBJECT`, `XGROUP` and `XINFO` find the key after their\n"
      "subcommand; without one (`OBJECT HELP`, `MEMORY STATS`) any primary answers.\n\n" +
      Join(groups.single) + "\n\n";
  out += Heading("Split by slot and merged", groups.split.size());
  out +=
      "Keys of one slot stay in one sub-command; all sub-commands for one shard go out in one\n"
      "write; the first error of any part is the reply. Not atomic across slots, as in Redis\n"
      "Cluster: another client may read some parts' writes before the others land, and a part\n"
      "refused (OOM on one primary) leaves the other parts written. Keys that must change\n"
      "together share a hash tag (`{user1}:a`, `{user1}:b`): one slot, one sub-command.\n\n"
      "| command | keys | reply |\n|---|---|---|\n";
  for (const CommandInfo* info : groups.split) {
    out += "| `" + std::string(info->name) + "` | " + KeysOf(*info) + " | " +
           std::string(MergeText(info->merge)) + " |\n";
  }
  out += "\n" + Heading("Keys must share one slot", groups.one_slot.size());
  out +=
      "Otherwise `-CROSSSLOT Keys in request don't hash to the same slot`, as Redis Cluster "
      "answers.\nWithout keys (e.g. `EVAL` with numkeys 0) any primary runs it.\n\n"
      "| command | keys |\n|---|---|\n";
  for (const CommandInfo* info : groups.one_slot) {
    out += "| `" + std::string(info->name) + "` | " + KeysOf(*info) + " |\n";
  }
  return out;
}

std::string KeyspaceSection(const CommandGroups& groups) {
  return "\n" + Heading("Over the whole keyspace", groups.fan_out.size() + groups.scan.size()) +
         Join(groups.fan_out) + ", " + Join(groups.scan) + "\n\n" +
         "What one Redis answers about all of its data, made from every shard's answer; a "
         "change\nthat one Redis applies to all of it (a setting, a library) is applied on every "
         "primary,\nand the first shard's error is the client's (a refused `CONFIG SET` is "
         "refused as a whole).\n\n"
         "- every primary: `DBSIZE` (summed), `KEYS` (joined), `FLUSHALL`/`FLUSHDB`, `SCRIPT "
         "FLUSH`,\n  `FUNCTION FLUSH`/`DELETE`/`RESTORE`, `CONFIG SET`/`RESETSTAT`/`REWRITE`, "
         "`SAVE`, `SLOWLOG RESET`\n  (`+OK` when all are), `SCRIPT LOAD`/`FUNCTION LOAD` (every "
         "shard must answer the same),\n  `SCRIPT EXISTS` (1 only where every shard has it), "
         "`RANDOMKEY` (a non-null key from a\n  rotating shard), `SCRIPT KILL`/`FUNCTION KILL` "
         "(`+OK` when a shard stopped its script, else\n  `-NOTBUSY`), `SLOWLOG GET [count]` "
         "(every shard's entries, newest first, at most count,\n  default 10; entry ids are "
         "each shard's own), `SLOWLOG LEN` and `LATENCY RESET` (summed),\n  `LATENCY "
         "LATEST`/`HISTORY` (joined), `BGSAVE`\n"
         "- any one primary: `CONFIG GET`, `FUNCTION LIST`/`DUMP`/`STATS`, `TIME`, `LASTSAVE`,\n"
         "  `LATENCY DOCTOR`/`GRAPH`, `HELP` subcommands\n"
         "- refused, because the answer would describe one shard only: other subcommands\n"
         "- `SCAN`: one shard at a time; the cursor's low 10 bits name the shard, the rest is "
         "that\n  shard's cursor. A full iteration returns every key exactly once while the key "
         "set and\n  the slot map stay the same.\n\n";
}

std::string BlockingSection(const CommandGroups& groups) {
  return Heading("Blocking, over a connection pinned to the client", groups.blocking.size()) +
         Join(groups.blocking) + ", and `XREAD`/`XREADGROUP` with `BLOCK`" +
         "\n\nThe keys must share one slot. The command goes to the slot's primary over a "
         "connection\nthat only this client uses, so a blocked command never stalls other "
         "clients. Later\ncommands of the same client for that slot wait for it, as they would "
         "on one Redis\nconnection. Inside `MULTI` they do not block. Pinned connections come "
         "from a pool per\nproxy thread (up to 64 idle per shard, closed after 30 s idle) and go "
         "back to it once idle; "
         "one whose client left\nwhile blocked is closed (Redis then unblocks it).\n\n"
         "`WAIT numreplicas timeout` runs on every connection pinned to the client and answers "
         "the\nfewest replicas any shard counted. From its first `WAIT` on, the client's keyed "
         "commands\nstay on its pinned connections, so each shard's count covers the client's "
         "own writes. The\nfirst `WAIT` after keyed commands that went over shared connections "
         "goes to every primary\nafter those commands' replies, each preceded by a "
         "self-erasing write (`SET` + `DEL` of\n`__shardproxy:wait:{tag}` in one script) that "
         "moves the connection's replication offset past\nthem. Whole-keyspace commands "
         "(`FLUSHALL` ...) are not counted.\n\n";
}

std::string ReplicaSection(const CommandGroups& groups) {
  return Heading("Read from replicas with `--read-from`", groups.read_only.size()) +
         Join(groups.read_only) +
         "\n\nRedis' `readonly` commands (and the `_RO` script commands): with `--read-from "
         "replica` they go\nto a replica of the slot; with `prefer-replica` too, unless this "
         "client wrote that slot in the\nlast second. No healthy replica: the primary.\n\n";
}

std::string PubSubSection(const CommandGroups& groups) {
  return Heading("Pub/sub", groups.pubsub.size()) + Join(groups.pubsub) +
         "\n\nAnswered by the proxy per client (confirmations and counts as Redis gives them; "
         "RESP2\nclients in subscribed mode may only (un)subscribe, `PING`, `QUIT` and `RESET`). "
         "Each proxy\nthread holds one subscriber connection to one primary for all its "
         "clients' channels and\npatterns (Redis Cluster broadcasts `PUBLISH` to every node), "
         "and one per primary for shard\nchannels; a channel is subscribed there while at least "
         "one client wants it. Shard channels\nmust share one slot per `SSUBSCRIBE`; when their "
         "slot moves or their primary fails over they\nare subscribed again at the new owner. "
         "`PUBLISH` goes to one primary per client (so one client's messages reach\nsubscribers "
         "in the order it sent them, never one overtaking another on the cluster bus) and\n"
         "answers how many of the proxy's clients receive "
         "it (over every thread; subscribers connected straight to a shard are not counted), "
         "\n`SPUBLISH` to the channel's slot, `PUBSUB` to every primary (names joined, counts "
         "added).\nKeyspace notifications: while a client subscribes to a name one could reach "
         "(`*`,\n`__keyspace@0__:*`), each thread also subscribes `__keyspace@*` and "
         "`__keyevent@*` on every\nprimary (a node notifies only its own subscribers of its own "
         "keys) and hands each event to\nthe matching clients once; their `(P)SUBSCRIBE` is "
         "confirmed once those subscriptions are in\nplace. A subscriber that leaves more than "
         "`--pubsub-buffer-limit` bytes of messages unread\nis disconnected.\n\n";
}

// PROXY HOTKEYS / SLOTS and INFO hotkeys (proxy/services/key_load.h).
std::string HotKeysText() {
  return "### Hot keys and slots: `PROXY`\n\n"
         "Each proxy thread counts the keys it routes in a bounded top-K (Space-Saving, "
         "`--hot-keys N`\nkeys, default 64; `--hot-keys 0` turns counting off) and the "
         "requests per slot. A command\nrouted by slot counts one request for its slot and "
         "its first key; a command split by slot\n(`MGET`, `MSET`, `DEL`, ...) one request per "
         "part and every key. Transactions, keyless and\nfanned-out commands are not counted. "
         "Slots are counted exactly; about one key in `--hot-keys-sample`\n(default 8, at a "
         "random gap) is offered to the top-K and its counts are scaled back by that\nperiod "
         "(`--hot-keys-sample 1`: every key). "
         "Counts are cumulative since the proxy started, merged\nover the threads, at most "
         "about a second old.\n\n"
         "- `PROXY HOTKEYS [COUNT n]`: the hottest keys first, each `[key, requests, reads, "
         "error]`:\n  `reads` are requests of read-only commands since the key entered the "
         "table, `error` how\n  many of `requests` may belong to keys it displaced (Space-Saving's "
         "overcount bound).\n"
         "- `PROXY SLOTS`: `slot, requests, slot, requests, ...` for every slot with requests, "
         "ascending.\n"
         "- `PROXY HELP`: these lines.\n"
         "- `INFO hotkeys` (also in `INFO proxy` and `INFO all`, not in the default `INFO`):\n  "
         "`hotkeys_tracked`,\n"
         "  `hotkeys_requests` (keys counted), then "
         "`hotkey<i>:key=<k>,requests=<n>,reads=<n>,error=<n>`,\n"
         "  with bytes outside printable ASCII and `\\ , = \"` and space written as `\\xHH`.\n"
         "- `/metrics` (`--metrics-port`): `shardproxy_hot_key_requests_total{key}` and\n"
         "  `shardproxy_hot_key_reads_total{key}` for the 10 hottest keys,\n"
         "  `shardproxy_slot_requests_total{slot}` for the 20 busiest slots.\n\n";
}

std::string LocalSection(const CommandGroups& groups) {
  return Heading("Answered by the proxy", groups.local.size()) + Join(groups.local) +
         "\n\n`SELECT` accepts only 0; `HELLO` 2 or 3 with `AUTH` and `SETNAME`; `AUTH`/`HELLO "
         "AUTH` are\n"
         "checked against the users of `--auth-file` (without users: `default` with any password,\n"
         "like Redis' nopass default user; with users, everything else answers `-NOAUTH` until\n"
         "then); `MULTI`/`EXEC`/`DISCARD` are queued by the proxy (keys in one slot) and sent as\n"
         "one batch to that slot's primary; each queued write is first shown to that primary\n"
         "(`MULTI <command> DISCARD`) so the client gets its queue-time answer (`-OOM`); "
         "server-wide\n"
         "commands in a transaction (`CONFIG SET`, `FLUSHALL`, `DBSIZE`) also run on every other\n"
         "primary, their replies merged in `EXEC`'s (not atomic across primaries); `WATCH` (keys\n"
         "in one slot, the transaction's) pins a\n"
         "connection to that slot's primary for WATCH, the slot's commands and EXEC; if that\n"
         "connection fails or the slot moves, `EXEC` answers null (aborted) as for a changed key;\n"
         "`CLIENT` ID, GETNAME, SETNAME, SETINFO, INFO, LIST, KILL, REPLY, NO-EVICT, GETREDIR "
         "about the\nclient itself (LIST and KILL see only the calling client), `CLIENT "
         "PAUSE`/`UNPAUSE` on every\nprimary; `CLIENT TRACKING` (every option), `CACHING`, "
         "`TRACKINGINFO`: a tracking client's\ncommands go over its own connection to each "
         "primary, each in its tracking state; invalidations\ncome back as RESP3 pushes on "
         "them, placed among its replies where the shard put them; with\n`REDIRECT <id>` they "
         "go to that client of the proxy (any thread; RESP2: on `__redis__:invalidate`\nwhile "
         "subscribed), a RESP2 client's through a receiver connection per primary; a "
         "`FLUSHALL`\ninvalidates everything once, not once per primary; a lost connection "
         "invalidates everything;\na read under `CACHING` that meets MOVED is sent to the new "
         "owner with its `CACHING` again;\na RESP2 REDIRECT client whose receiver is lost, or "
         "which "
         "reads from a primary that joined after\nits `TRACKING ON`, has a broken redirect "
         "(as on Redis: `TRACKINGINFO` says so) until it turns\ntracking on again; `COMMAND "
         "GETKEYS` from the table, the "
         "rest of "
         "`COMMAND` (COUNT, INFO, DOCS, LIST,\nGETKEYSANDFLAGS) answered by any shard: it "
         "describes the engine; `INFO [section ...]`: every\nprimary's own INFO for those "
         "sections, counting sections (clients, stats, memory, cpu,\ncommandstats, "
         "errorstats, keyspace) summed, the others the first shard's, with the proxy's "
         "own\nfigures over them (connected_clients, tcp_port, ...) and its `# Proxy` section; "
         "`# Shards` lists\neach primary's keys.\n\n" +
         HotKeysText();
}

std::string UnsupportedSection(const CommandGroups& groups) {
  std::string out =
      "## Not supported yet\n\nAnswered with `-ERR command '<name>' is not supported by "
      "shardproxy: <reason>`.\n\n| reason | commands |\n|---|---|\n";
  for (const auto& [reason, names] : groups.unsupported) {
    if (reason.empty()) continue;
    out += "| " + std::string(reason) + " | " + Join(names) + " |\n";
  }
  return out;
}

}  // namespace

std::string RenderCommandDocs() {
  const CommandGroups groups = GroupCommands();
  std::string out =
      "# shardproxy commands\n\n"
      "Generated from `proxy/commands/command_table.cc` by `RenderCommandDocs()` "
      "(proxy/commands/command_docs.cc);\n"
      "the unit test `CommandDocsTest` fails when this page and the table differ. Regenerate with\n"
      "`SHARDCTL_UPDATE_DOCS=1 build-sanitize/tests/unit_tests --gtest_filter=CommandDocs*`.\n\n"
      "Commands the table does not know get Redis' own `-ERR unknown command '<name>'`.\n"
      "How much of Redis' own test suite passes through the proxy, and what fails and why:\n"
      "docs/benchmarks.md, \"Redis' test suite through shardproxy\" "
      "(`scripts/redis-test-suite`).\n\n";
  out += KeySlotSections(groups);
  out += KeyspaceSection(groups);
  out += BlockingSection(groups);
  out += ReplicaSection(groups);
  out += PubSubSection(groups);
  out += LocalSection(groups);
  out += UnsupportedSection(groups);
  out += "\n" + SuiteFailuresSection();
  out += SuiteFailuresClients();
  return out;
}

}  // namespace shardctl::proxy
