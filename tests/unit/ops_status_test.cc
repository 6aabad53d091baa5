// What `status` concludes from probed shards: the cluster state and verdict (its exit code), the
// slot moves in progress, and how the supervisor's view of each shard overrides what a probe saw.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "launcher/ops/status.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

// A shard as a probe left it: "ok" (healthy, map A), "ok-b" (healthy, another slot map), "fail"
// (answers, cluster_state:fail), "down" (did not answer), "crashloop" (answers, but the supervisor
// says it is crash looping).
ShardStatus Shard(const std::string& kind) {
  ShardStatus shard;
  if (kind == "down") {
    shard.health = "down";
    return shard;
  }
  shard.reachable = true;
  shard.cluster_state = kind == "fail" ? "fail" : "ok";
  shard.health = kind == "fail"                                 ? "cluster_fail"
                 : kind == "crashloop" || kind == "save-failed" ? kind
                 : kind == "aof-disk-full"                      ? "disk-full"
                 : kind == "rdb-disk-full"                      ? "disk-full"
                                                                : "ok";
  shard.aof = kind == "aof-disk-full";
  shard.slot_map = kind == "ok-b" ? "map B" : "map A";
  if (kind == "moving") shard.migrations = {{.slot = 7, .importing = false, .peer_id = "other"}};
  return shard;
}

struct SummaryCase {
  const char* label;
  std::vector<std::string> shards;
  bool supervised;
  bool proxy_answers;
  std::string cluster_state;
  Verdict verdict;
};

const SummaryCase kSummaryCases[] = {
    {"all healthy", {"ok", "ok", "ok"}, true, true, "ok", Verdict::kOk},
    {"all healthy, no supervisor", {"ok", "ok", "ok"}, false, true, "ok", Verdict::kDegraded},
    {"all healthy, proxy silent", {"ok", "ok", "ok"}, true, false, "ok", Verdict::kDegraded},
    {"one shard down", {"ok", "down", "ok"}, true, true, "degraded", Verdict::kDegraded},
    {"slot maps disagree", {"ok", "ok-b", "ok"}, true, true, "degraded", Verdict::kDegraded},
    {"one crash looping", {"ok", "crashloop", "ok"}, true, true, "degraded", Verdict::kDegraded},
    {"every shard down", {"down", "down"}, true, true, "down", Verdict::kDown},
    {"every reachable shard failing", {"fail", "fail", "down"}, true, true, "fail", Verdict::kDown},
    {"none healthy", {"crashloop", "crashloop"}, true, true, "fail", Verdict::kDown},
    {"some failing, some healthy", {"ok", "fail"}, true, true, "degraded", Verdict::kDegraded},
    {"a slot move open", {"ok", "moving", "ok"}, true, true, "ok", Verdict::kDegraded},
    // A failed snapshot refuses no write (no save points): serving, but not healthy. A full disk
    // under an AOF refuses every write.
    {"every snapshot failing",
     {"save-failed", "save-failed"},
     true,
     true,
     "degraded",
     Verdict::kDegraded},
    {"every disk full, snapshots only",
     {"rdb-disk-full", "rdb-disk-full"},
     true,
     true,
     "degraded",
     Verdict::kDegraded},
    {"every disk full under an AOF",
     {"aof-disk-full", "aof-disk-full"},
     true,
     true,
     "fail",
     Verdict::kDown},
};

TEST(StatusSummaryTest, ClusterStateAndVerdictFromTheShards) {
  for (const SummaryCase& test : kSummaryCases) {
    SCOPED_TRACE(test.label);
    std::vector<ShardStatus> shards;
    for (const auto& kind : test.shards) shards.push_back(Shard(kind));
    Summary summary = Summarize(shards, test.supervised, test.proxy_answers);
    EXPECT_EQ(summary.cluster_state, test.cluster_state);
    EXPECT_EQ(summary.verdict, test.verdict);
  }
}

// A reachable shard with node ID `id` and these MIGRATING ("m") / IMPORTING ("i") markers.
ShardStatus Marked(int index, const std::string& id,
                   const std::vector<std::tuple<int, char, std::string>>& markers) {
  ShardStatus shard = Shard("ok");
  shard.index = index;
  shard.node_id = id;
  for (const auto& [slot, kind, peer] : markers) {
    shard.migrations.push_back({.slot = slot, .importing = kind == 'i', .peer_id = peer});
  }
  return shard;
}

TEST(StatusMovesTest, BothSidesOfAMoveAreOneEntryAndNeighbouringSlotsOneRange) {
  // Shard 0 migrates 100-102 to shard 3 (which imports 100-101 of them: a crash between the two
  // markers leaves one side only); shard 3 also imports 5 from a node not in the plan; shard 5
  // migrates 104 to shard 3 (a gap at 103, another source: separate entries).
  std::vector<ShardStatus> shards = {
      Marked(0, "a", {{100, 'm', "d"}, {101, 'm', "d"}, {102, 'm', "d"}}),
      Marked(3, "d", {{100, 'i', "a"}, {101, 'i', "a"}, {5, 'i', "gone"}}),
      Marked(5, "f", {{104, 'm', "d"}}),
      Marked(6, "g", {}),
  };
  EXPECT_EQ(CollectMoves(shards),
            (std::vector<MoveInProgress>{
                {.first = 5, .last = 5, .source_shard = -1, .target_shard = 3},
                {.first = 100, .last = 102, .source_shard = 0, .target_shard = 3},
                {.first = 104, .last = 104, .source_shard = 5, .target_shard = 3},
            }));
  EXPECT_TRUE(CollectMoves({Marked(0, "a", {}), Marked(1, "b", {})}).empty());
}

// A supervisor's status reply naming one shard's state.
json Reply(bool ok, int index, const std::string& state) {
  json shard = {{"index", index}, {"state", state}};
  return {{"ok", ok}, {"shards", json::array({shard})}};
}

struct MergeCase {
  const char* label;
  std::string probed;  // Shard() kind of shard 1
  json reply;
  std::string health;  // shard 1's health afterwards
  bool supervised;     // shard 1 carries the supervisor's entry
};

const MergeCase kMergeCases[] = {
    {"crash loop overrides a probe", "ok", Reply(true, 1, "crashloop"), "crashloop", true},
    {"unresponsive overrides a probe", "ok", Reply(true, 1, "unresponsive"), "unresponsive", true},
    {"restarting overrides a dead probe", "down", Reply(true, 1, "restarting"), "restarting", true},
    {"starting overrides a dead probe", "down", Reply(true, 1, "starting"), "starting", true},
    {"starting but answering is ok", "ok", Reply(true, 1, "starting"), "ok", true},
    {"the supervisor's ok leaves the probe's view", "fail", Reply(true, 1, "ok"), "cluster_fail",
     true},
    {"a failed reply is ignored", "ok", Reply(false, 1, "crashloop"), "ok", false},
    {"indices out of range are ignored", "ok", Reply(true, 7, "crashloop"), "ok", false},
};

TEST(StatusSummaryTest, SupervisorViewOverridesWhatAProbeCannotSee) {
  for (const MergeCase& test : kMergeCases) {
    SCOPED_TRACE(test.label);
    std::vector<ShardStatus> shards = {Shard("ok"), Shard(test.probed)};
    shards[1].index = 1;
    MergeSupervisorView(test.reply, shards);
    EXPECT_EQ(shards[1].health, test.health);
    EXPECT_EQ(!shards[1].supervised.is_null(), test.supervised);
    EXPECT_EQ(shards[0].health, "ok");
  }
}

// The probe's seven replies for a healthy primary, with `persistence` as INFO persistence.
std::vector<common::Result<std::string>> ProbeReplies(const std::string& persistence) {
  return {std::string("aaaa"),
          std::string("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n"),
          std::string("used_memory:1000\r\n"),
          std::string("role:master\r\n"),
          std::string("12"),
          std::string("aaaa 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n"),
          persistence};
}

TEST(ProbeRepliesTest, AShardThatCannotWriteItsAofIsAWriteErrorAFailedSnapshotIsNot) {
  struct Case {
    std::string persistence;
    std::string health;
  };
  for (const auto& [persistence, health] : std::vector<Case>{
           {"aof_enabled:1\r\naof_last_write_status:ok\r\nrdb_last_bgsave_status:ok\r\n", "ok"},
           {"aof_enabled:1\r\naof_last_write_status:err\r\nrdb_last_bgsave_status:ok\r\n",
            "write-error"},
           // A failed snapshot refuses no write: the shards keep no save points.
           {"aof_enabled:0\r\naof_last_write_status:ok\r\nrdb_last_bgsave_status:err\r\n",
            "save-failed"},
           // AOF off: its last write status is not the shard's.
           {"aof_enabled:0\r\naof_last_write_status:err\r\nrdb_last_bgsave_status:ok\r\n", "ok"}}) {
    ShardStatus status;
    ReadProbeReplies(ProbeReplies(persistence), status);
    EXPECT_EQ(status.health, health) << persistence;
    EXPECT_EQ(status.keys, 12u);
    EXPECT_EQ(status.role, "primary");
  }
}

}  // namespace
}  // namespace shardctl::launcher
