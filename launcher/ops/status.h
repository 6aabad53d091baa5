// What `shardctl status` learns about a deployment below the command line: every shard probed
// directly (pid file, /proc, RESP), so it tells the truth when the supervisor is down, merged with
// what a live supervisor knows (restarts, last exit, crash loop). Nothing here prints.
//
//   pid files + /proc ─┐
//   RESP per shard ────┼─▶ ShardStatus[] ─▶ MergeSupervisorView ─▶ Summarize ─▶ DeploymentStatus
//   supervisor status ─┘                                             ▲
//   proxy (pid file, PING) ──────────────────────────────────────────┘
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"
#include "launcher/os/process.h"
#include "launcher/state/import_progress.h"

namespace shardctl::launcher {

// One shard as a probe sees it.
struct ShardStatus {
  int index = 0;                     // the plan's shard index (indices may have gaps after scale)
  std::optional<ProcessId> process;  // from the pid file
  bool running = false;              // that process is alive
  bool reachable = false;            // it answered every probe command
  std::string node_id;
  std::string health;  // ok, down, unreachable, cluster_<state>, write-error (it refuses writes:
                       // its AOF write or its last snapshot failed), disk-full (so, with its data
                       // directory full); or the supervisor's crashloop, unresponsive,
                       // restarting, starting, disk-full
  std::string role;    // primary, replica (when reachable)
  std::string cluster_state;
  std::string slot_map;  // NormalizeSlotMap of CLUSTER NODES: equal on nodes that agree
  std::vector<common::SlotMigration> migrations;  // its own MIGRATING/IMPORTING markers
  std::vector<common::SlotRange> slots;           // the slots it owns now (moves change the plan's)
  uint64_t used_memory = 0;
  uint64_t keys = 0;
  std::vector<int> pinned_cpus;
  std::vector<int> bound_nodes;
  int64_t last_save_unix = 0;    // rdb_last_save_time (also the start time when never saved)
  std::string last_save_status;  // "ok" / "err" of the last BGSAVE (BGREWRITEAOF with aof)
  bool aof = false;
  nlohmann::json supervised;  // the supervisor's entry for the shard; null without one
};

// The supervised shardproxy as a probe sees it.
struct ProxyStatus {
  std::optional<ProcessId> process;  // set only while that process runs
  bool answers = false;              // PING on its port answered
  nlohmann::json supervised;         // the supervisor's "proxy" entry; null without one
};

// Slots a move has open (MIGRATING on the source, IMPORTING on the target, or either alone after a
// crash): consecutive slots between the same pair form one range. A shard index is -1 when the
// marker names a node that is not in the plan.
struct MoveInProgress {
  int first = 0;
  int last = 0;
  int source_shard = -1;
  int target_shard = -1;
  friend bool operator==(const MoveInProgress&, const MoveInProgress&) = default;
};

// The overall verdict, which `status` turns into its exit code.
enum class Verdict {
  kOk,        // every shard healthy, slot maps agree, supervised, proxy answering
  kDegraded,  // serving, but something needs attention
  kDown,      // not serving
};

struct Summary {
  std::string cluster_state;  // ok, degraded, fail, down
  Verdict verdict = Verdict::kDown;
};

struct DeploymentStatus {
  std::vector<ShardStatus> shards;  // by shard index
  bool supervised = false;          // a live supervisor holds the lock
  bool supervisor_answers = false;  // ... and answered its status request (not stopped or hung)
  bool supervisor_stopped = false;  // ... it does not, and is stopped (SIGSTOP, a debugger)
  std::optional<ProcessId> supervisor;
  std::optional<ProxyStatus> proxy;               // with --proxy-port only
  std::vector<MoveInProgress> moves;              // open slot moves, by first slot
  std::optional<LiveImportProgress> live_import;  // an `import --live` running into it
  // The hottest slots as the supervisor's /metrics poller last saw them ({"source": "slot-stats",
  // "hot": [...]}); {"source": "unavailable", "hot": []} without a poller or per-slot counting.
  nlohmann::json slots;
  Summary summary;
};

// Probes every shard and the proxy of `deployment` and asks a live supervisor for its view.
DeploymentStatus ProbeDeployment(const Access& access, const DeploymentDir& dir,
                                 const Deployment& deployment);

// Pure: folds the supervisor's status reply into the probed shards: it knows what a probe cannot
// (a crash loop, a restart under way, how many restarts, why the last exit).
void MergeSupervisorView(const nlohmann::json& reply, std::vector<ShardStatus>& shards);

// Pure: fills `status` from the replies of one shard to the probe's seven commands, in order:
// CLUSTER MYID, CLUSTER INFO, INFO memory, INFO replication, DBSIZE, CLUSTER NODES,
// INFO persistence (every one an answer, not an error).
void ReadProbeReplies(const std::vector<common::Result<std::string>>& replies, ShardStatus& status);

// Pure: the open moves the shards' markers show, one entry per range and pair.
std::vector<MoveInProgress> CollectMoves(const std::vector<ShardStatus>& shards);

// Pure: the cluster state and verdict from the shards' states. Unsupervised, with a proxy that
// does not answer, or with a slot move open, a healthy cluster is degraded.
Summary Summarize(const std::vector<ShardStatus>& shards, bool supervised, bool proxy_answers);

// `shardctl status`: the deployment's record and what probing it found. No deployment is
// Fault::kUnknown (status' exit 3).
struct StatusReport {
  Deployment deployment;
  DeploymentStatus status;
};
Outcome<StatusReport> Status(const Spec& spec);

}  // namespace shardctl::launcher
