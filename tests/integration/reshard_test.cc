// `shardctl rebalance` and `shardctl move-slots` on live clusters: slots move with their keys while
// a cluster client and a client through shardproxy keep writing, and every acknowledged write reads
// back; an interrupted move is finished by the next run; bad input changes nothing.
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>

#include "common/cluster_text.h"
#include "common/slots.h"
#include "launcher/cluster/slot_balance.h"
#include "launcher/os/process.h"
#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using common::FormatSlotRanges;

// A Valkey deployment of two shards with 40 keys in one slot, for an atomic move of that slot
// ("move-slots SLOT-SLOT --to OTHER --migration atomic", started by StartAtomicMove).
struct AtomicMoveSetup {
  int slot = -1;
  int source_shard = 0;
  int source = 0;  // the source primary's port
};

class ReshardTest : public ShardctlTest {
 protected:
  int ProxyPort() const { return base_port() + 45; }

  // Each writer has acknowledged at least `count` writes (so moves happen under load).
  void WaitForWrites(int shard_port, int count) {
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto size = QueryRedis(shard_port, {"DBSIZE"});
          return size && size->integer >= count;
        },
        30s, 50ms));
  }

  // A Valkey deployment of two shards, 40 keys in one slot of `setup.source`.
  void PrepareAtomicMove(AtomicMoveSetup& setup) {
    const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
    ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test does)";
    ASSERT_EQ(Up(2, {"--engine", valkey}).exit_code, 0);
    setup.slot = WriteKeysInOneSlot(base_port(), "moving", 40);
    ASSERT_GE(setup.slot, 0);
    ASSERT_EQ(TotalKeys(2), 40);
    setup.source_shard = KeysInSlot(base_port(), setup.slot) == 40 ? 0 : 1;
    setup.source = base_port() + setup.source_shard;
    ASSERT_EQ(KeysInSlot(setup.source, setup.slot), 40);
  }

  // move-slots of that slot to the other shard on the atomic path, in the background ("move").
  std::unique_ptr<BackgroundCommand> StartAtomicMove(const AtomicMoveSetup& setup,
                                                     std::vector<std::string> flags) {
    const std::string slot = std::to_string(setup.slot);
    std::vector<std::string> args = {
        slot + "-" + slot, "--to", std::to_string(1 - setup.source_shard), "--migration", "atomic"};
    args.insert(args.end(), flags.begin(), flags.end());
    return StartOnDeployment("move-slots", args, "move");
  }

  // Owner ranges as every node reports them, "" while nodes disagree or a slot is open.
  std::string AgreedSlotMap(int shards) {
    std::string agreed;
    for (int i = 0; i < shards; ++i) {
      auto nodes = QueryRedis(base_port() + i, {"CLUSTER", "NODES"});
      if (!nodes) return "";
      auto parsed = common::ParseClusterNodes(nodes->text);
      if (!parsed.ok()) return "";
      std::map<int, std::string> by_port;  // nodes list the cluster in their own order
      for (const auto& line : *parsed) {
        if (!line.migrations.empty()) return "";
        if (line.IsPrimary() && line.HasSlots())
          by_port[line.address.port] = common::FormatSlotRanges(line.slots);
      }
      std::string map;
      for (const auto& [port, ranges] : by_port) map += std::to_string(port) + "=" + ranges + " ";
      if (i > 0 && map != agreed) return "";
      agreed = map;
    }
    return agreed;
  }

  // Keys in `slot` (on shard 0; each its own name as value, or `value_size` bytes), then the
  // state a run killed mid-slot leaves: shard 1 IMPORTING, shard 0 MIGRATING, one of its 20 keys
  // already moved.
  void OpenSlot(int slot, size_t value_size = 0) {
    const std::string tag = std::string(common::TagForSlot(slot));
    for (int i = 0; i < 20; ++i) {
      const std::string key = "{" + tag + "}:" + std::to_string(i);
      ASSERT_TRUE(QueryRedis(base_port(),
                             {"SET", key, value_size == 0 ? key : std::string(value_size, 'k')}));
    }
    auto id0 = QueryRedis(base_port(), {"CLUSTER", "MYID"});
    auto id1 = QueryRedis(base_port() + 1, {"CLUSTER", "MYID"});
    ASSERT_TRUE(id0 && id1);
    const std::string number = std::to_string(slot);
    ASSERT_EQ(
        QueryRedis(base_port() + 1, {"CLUSTER", "SETSLOT", number, "IMPORTING", id0->text})->text,
        "OK");
    ASSERT_EQ(QueryRedis(base_port(), {"CLUSTER", "SETSLOT", number, "MIGRATING", id1->text})->text,
              "OK");
    ASSERT_EQ(QueryRedis(base_port(), {"MIGRATE", "127.0.0.1", std::to_string(base_port() + 1), "",
                                       "0", "5000", "KEYS", "{" + tag + "}:0"})
                  ->text,
              "OK");
  }

  // Every key of `slot` on shard 1, and every node agreeing on the owners with no slot open.
  void ExpectMovedToShard1(int slot) {
    std::string map;
    ASSERT_TRUE(WaitUntil([&] { return !(map = AgreedSlotMap(3)).empty(); }, 20s, 100ms));
    auto count = QueryRedis(base_port() + 1, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
    ASSERT_TRUE(count);
    EXPECT_EQ(count->integer, 20) << "slot " << slot;
  }

  // `count` keys of `size` bytes spread over every slot, written by shardctl bench run (pipelined).
  void Populate(int count, int size = 100) {
    auto filled = Shardctl(
        {"bench", "run", "--cluster", "127.0.0.1:" + std::to_string(base_port()), "--keyspace",
         std::to_string(count), "--ratio", "0:1", "--value-size", std::to_string(size),
         "--populate", "--requests", "1", "--pipeline", "64", "--json"},
        120s);
    ASSERT_EQ(filled.exit_code, 0) << filled.Describe();
  }

  // The same move-slots again until it succeeds (a shard just restarted may refuse it a while).
  void FinishMoveOfShard0ToShard2() {
    CommandResult rest;
    ASSERT_TRUE(WaitUntil(
        [&] {
          return (rest = OnDeployment("move-slots", {"0-5460", "--to", "2"})).exit_code == 0;
        },
        60s, 500ms))
        << rest.Describe();
  }

  // Keys on the first `shards` shards together.
  long long TotalKeys(int shards) {
    long long total = 0;
    for (int i = 0; i < shards; ++i) {
      auto size = QueryRedis(base_port() + i, {"DBSIZE"});
      total += size ? size->integer : -1'000'000;
    }
    return total;
  }

  // Slots shard `index` owns by its own account.
  int OwnedSlots(int index) {
    auto nodes = QueryRedis(base_port() + index, {"CLUSTER", "NODES"});
    if (!nodes) return -1;
    auto parsed = common::ParseClusterNodes(nodes->text);
    const common::NodeLine* myself = parsed.ok() ? common::FindMyself(*parsed) : nullptr;
    if (myself == nullptr) return -1;
    int owned = 0;
    for (const auto& range : myself->slots) owned += range.last - range.first + 1;
    return owned;
  }

  void ExpectNoLoss(const json& verdict, const std::string& who) {
    EXPECT_GT(verdict.value("acked", 0), 100) << who << ": " << verdict.dump();
    EXPECT_EQ(verdict.value("lost", -1), 0) << who << ": " << verdict.dump();
    EXPECT_EQ(verdict.value("wrong", -1), 0) << who << ": " << verdict.dump();
    EXPECT_EQ(verdict.value("errors", -1), 0) << who << ": " << verdict.dump();
  }

  // The last line of --json output (the "done" event).
  json DoneEvent(const CommandResult& result) {
    auto lines = SplitLines(result.out);
    json done = lines.empty() ? json() : json::parse(lines.back(), nullptr, false);
    EXPECT_TRUE(done.is_object() && done.value("event", "") == "done") << result.Describe();
    return done.is_object() ? done : json::object();
  }

  // Moves under load through both kinds of client, then checks every acknowledged write.
  void MoveUnderLoad(const std::string& expected_path) {
    AckedWriter cluster = StartAckedWriter("--cluster", base_port(), "c");
    AckedWriter proxied = StartAckedWriter("--plain", ProxyPort(), "p");
    WaitForWrites(base_port(), 200);

    auto moved = OnDeployment("move-slots", {"0-6000", "--to", "2", "--json"});
    ASSERT_EQ(moved.exit_code, 0) << moved.Describe();
    json done = DoneEvent(moved);
    EXPECT_EQ(done["moves"].size(), 2u) << done.dump();
    EXPECT_EQ(done["progress"]["slots_moved"], 6001) << done.dump();
    for (const auto& path : done["paths"]) EXPECT_EQ(path, expected_path) << done.dump();

    auto rebalanced = OnDeployment("rebalance", {"--json"});
    ASSERT_EQ(rebalanced.exit_code, 0) << rebalanced.Describe();
    EXPECT_FALSE(DoneEvent(rebalanced)["moves"].empty());

    ExpectNoLoss(StopAckedWriter(cluster), "cluster client");
    ExpectNoLoss(StopAckedWriter(proxied), "client through shardproxy");
    std::string map;
    ASSERT_TRUE(WaitUntil([&] { return !(map = AgreedSlotMap(3)).empty(); }, 20s, 100ms));
    // Balanced again: 5462/5461/5461 slots (the remainder may land anywhere).
    auto again = OnDeployment("rebalance", {"--json", "--threshold", "0"});
    ASSERT_EQ(again.exit_code, 0) << again.Describe();
    EXPECT_TRUE(DoneEvent(again)["moves"].empty()) << again.out;
  }
};

TEST_F(ReshardTest, RedisMovesAndRebalancesUnderLoadLosingNoAckedWrite) {
  auto up = Up(3, {"--proxy-port", std::to_string(ProxyPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  MoveUnderLoad("migrate");
}

TEST_F(ReshardTest, ValkeyUsesAtomicSlotMigrationUnderLoad) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test does)";
  auto up = Up(
      3, {"--engine", valkey, "--proxy-port", std::to_string(ProxyPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  MoveUnderLoad("atomic");
}

TEST_F(ReshardTest, ScalesOutAndInUnderLoadWithReplicasLosingNoAckedWrite) {
  const std::vector<std::string> proxy = {"--proxy-port", std::to_string(ProxyPort()),
                                          "--proxy-threads", "1"};
  std::vector<std::string> spec = {"--replicas", "1"};
  spec.insert(spec.end(), proxy.begin(), proxy.end());
  ASSERT_EQ(Up(2, spec).exit_code, 0);
  AckedWriter cluster = StartAckedWriter("--cluster", base_port(), "c");
  AckedWriter proxied = StartAckedWriter("--plain", ProxyPort(), "p");
  WaitForWrites(base_port(), 200);

  // Out: primary 4 with its replica 5 (0-1 primaries, 2-3 replicas), started, joined, given slots.
  auto out = OnDeployment("scale", {"--shards", "3", "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.Describe();
  json grown = DoneEvent(out);
  EXPECT_EQ(grown["added"], json({4, 5})) << grown.dump();
  EXPECT_FALSE(grown["moves"].empty()) << grown.dump();
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_EQ(status["shards"].size(), 6u);
  auto role = QueryRedis(base_port() + 5, {"ROLE"});
  ASSERT_TRUE(role && !role->elements.empty());
  EXPECT_EQ(role->elements[0].text, "slave") << "shard 5 replicates shard 4";
  // The old spec no longer matches: up says how, and changes nothing.
  auto again = Up(2, spec);
  EXPECT_EQ(again.exit_code, 2) << again.Describe();
  EXPECT_NE(again.err.find("shards: 6 -> 4"), std::string::npos) << again.Describe();

  // In: shards 4 and 5 give their slots back, are stopped, deleted and forgotten.
  auto in = OnDeployment("scale", {"--shards", "2", "--json"});
  ASSERT_EQ(in.exit_code, 0) << in.Describe();
  EXPECT_EQ(DoneEvent(in)["removed"], json({4, 5})) << in.out;
  ExpectNoLoss(StopAckedWriter(cluster), "cluster client");
  ExpectNoLoss(StopAckedWriter(proxied), "client through shardproxy");
  status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_EQ(status["shards"].size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(deployment_dir() / "shards" / "4"));
  // The removed shards' processes are reaped, not left zombies under the supervisor (a
  // multithreaded engine's main thread exits before its other threads).
  const std::string supervisor_pid = ReadFileText(deployment_dir() / "supervisor.pid");
  auto supervisor = launcher::IdentifyProcess(std::atoi(supervisor_pid.c_str()));
  ASSERT_TRUE(supervisor) << supervisor_pid;
  for (pid_t child : launcher::ChildrenOf(*supervisor)) {
    const std::string stat = ReadFileText("/proc/" + std::to_string(child) + "/stat");
    const size_t state = stat.rfind(") ");
    ASSERT_NE(state, std::string::npos) << stat;
    EXPECT_NE(stat[state + 2], 'Z') << "a zombie under the supervisor: " << stat;
  }
  auto nodes = QueryRedis(base_port(), {"CLUSTER", "NODES"});
  ASSERT_TRUE(nodes);
  EXPECT_EQ(SplitLines(nodes->text).size(), 4u) << "forgotten everywhere:\n" << nodes->text;
  auto back = Up(2, spec);
  EXPECT_EQ(back.exit_code, 0) << "the original shape again: " << back.Describe();
}

// Shards older than the health timeout plus the hang grace keep running through a scale out and
// in. The health checker made anew for the new shape once marked every shard as last heard at
// its process start: its first tick, before any PING of the new checker was answered, found them
// "silent" that long and killed them, and a primary without persistence came back empty.
// A scale whose new shard would take the deployment's own proxy port is refused as a plan
// error (exit 2, as up refuses it), naming the flag; it said "in use by another process", exit 1,
// with the deployment's own shardproxy as that process (found by a sweep). Nothing changes.
TEST_F(ReshardTest, AScaleOntoTheProxysPortIsRefusedAsThePlans) {
  const int proxy_port = base_port() + 3;  // shard 3's port, were there four
  ASSERT_EQ(Up(2, {"--proxy-port", std::to_string(proxy_port)}).exit_code, 0);
  WriteKeys(100);
  const auto before = KeysOnPrimaries();
  for (const bool dry_run : {true, false}) {
    std::vector<std::string> args = {"--shards", "4"};
    if (dry_run) args.push_back("--dry-run");
    auto refused = OnDeployment("scale", args, 120s);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("a new shard would take port " + std::to_string(proxy_port) +
                               ", this deployment's --proxy-port"),
              std::string::npos)
        << refused.Describe();
  }
  EXPECT_EQ(KeysOnPrimaries(), before);
  EXPECT_EQ(Status()["shards"].size(), 2u);
}

TEST_F(ReshardTest, AScaleKillsNoShardThatKeepsRunning) {
  ASSERT_EQ(Up(3, {"--health-timeout", "1s", "--hang-grace", "2s"}).exit_code, 0);
  const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 200);
  ASSERT_EQ(TotalKeys(3), written);
  auto pids = [&] {
    std::vector<long long> found;
    const json status = Status();
    for (const auto& shard : status["shards"]) found.push_back(shard.value("pid", -1LL));
    return found;
  };
  const std::vector<long long> before = pids();
  ASSERT_EQ(before.size(), 3u);
  std::this_thread::sleep_for(4s);  // older than 1 s + 2 s
  for (const char* shards : {"4", "3", "4", "3"}) {
    auto scaled = OnDeployment("scale", {"--shards", shards});
    ASSERT_EQ(scaled.exit_code, 0) << scaled.Describe();
  }
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(pids(), before) << ReadFileText(deployment_dir() / "supervisor.log");
  EXPECT_EQ(ReadFileText(deployment_dir() / "supervisor.log").find("killing it"), std::string::npos)
      << ReadFileText(deployment_dir() / "supervisor.log");
  EXPECT_EQ(TotalKeys(3), written);
}

// A shard in the plan that is not in the cluster (what a scale-out killed while joining leaves:
// started by the supervisor, never met) is joined by the next scale to the same count and given
// its share of the slots (before: "already 4 primaries", and the shard stayed cluster_state:fail).
TEST_F(ReshardTest, TheNextScaleJoinsAShardAnInterruptedScaleStarted) {
  ASSERT_EQ(Up(3).exit_code, 0);
  const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 200);
  auto out = OnDeployment("scale", {"--shards", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.Describe();
  // Shard 3 emptied, forgotten by the others and reset: in the plan, alone, as never joined.
  const int alone = base_port() + 3;
  auto id = QueryRedis(alone, {"CLUSTER", "MYID"});
  ASSERT_TRUE(id);
  auto away = OnDeployment("move-slots", {"0-16383", "--to", "0"});
  ASSERT_EQ(away.exit_code, 0) << away.Describe();
  ASSERT_EQ(KeysAt({alone}), 0);
  for (int port : {base_port(), base_port() + 1, base_port() + 2}) {
    ASSERT_TRUE(QueryRedis(port, {"CLUSTER", "FORGET", id->text}));
  }
  ASSERT_TRUE(QueryRedis(alone, {"CLUSTER", "RESET", "HARD"}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = QueryRedis(alone, {"CLUSTER", "INFO"});
        return info && info->text.find("cluster_known_nodes:1") != std::string::npos;
      },
      10s, 50ms));
  ASSERT_EQ(TotalKeys(3), written);

  auto again = OnDeployment("scale", {"--shards", "4", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_NE(again.out.find("joining 1 shard(s) an interrupted scale started"), std::string::npos)
      << again.out;
  int code = -1;
  const json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_GT(OwnedSlots(3), 3000) << "shard 3 got its share";
  EXPECT_EQ(TotalKeys(4), written);
}

// A scale-in killed while it stops the emptied shard (the supervisor finishes the stop, nothing
// forgets the node): the next scale forgets it (before: every node kept it as "fail" forever,
// and `status --cluster` failed).
TEST_F(ReshardTest, TheNextScaleForgetsAShardAnInterruptedScaleStopped) {
  ASSERT_EQ(Up(4).exit_code, 0);
  const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 200);
  auto ghosts = [&] {
    auto nodes = QueryRedis(base_port(), {"CLUSTER", "NODES"});
    auto lines = nodes ? common::ParseClusterNodes(nodes->text)
                       : common::Result<std::vector<common::NodeLine>>(common::Error("no reply"));
    int failing = 0;
    if (lines.ok()) {
      for (const auto& line : *lines) {
        failing += line.address.port == base_port() + 3 || (line.Failing() && !line.HasSlots());
      }
    }
    return failing;
  };
  bool left_one = false;
  // The kill must land between the stop and the forget (a few hundred ms): tried up to 3 times.
  for (int attempt = 0; attempt < 3 && !left_one; ++attempt) {
    if (attempt > 0) {
      ASSERT_EQ(OnDeployment("scale", {"--shards", "4"}).exit_code, 0);
    }
    auto in = StartOnDeployment("scale", {"--shards", "3", "--json"}, "in");
    ASSERT_TRUE(WaitUntil(
        [&] {
          return ReadFileText(scratch_dir() / "in.out").find("stopping 1 emptied") !=
                     std::string::npos ||
                 in->WaitForExit(0ms).has_value();
        },
        120s, 1ms));
    // Stopped, then let on 5 ms at a time until the supervisor has stopped shard 3 (the stop
    // takes far longer than a slice): killed then, the scale never forgets it.
    ::kill(in->pid(), SIGSTOP);
    bool stopped = false;
    for (int slice = 0; slice < 100 && !stopped; ++slice) {
      stopped = WaitUntil([&] { return PortBindable(base_port() + 3); }, 1s, 20ms);
      if (stopped) break;
      ::kill(in->pid(), SIGCONT);
      std::this_thread::sleep_for(5ms);
      ::kill(in->pid(), SIGSTOP);
    }
    ::kill(in->pid(), SIGKILL);
    in->WaitForExit(10s);
    left_one = stopped && ghosts() > 0;
  }
  ASSERT_TRUE(left_one) << "no kill landed between the stop and the forget in 3 tries";
  EXPECT_TRUE(std::filesystem::exists(deployment_dir() / "scale-forget.json"));
  EXPECT_EQ(TotalKeys(3), written);

  auto again = OnDeployment("scale", {"--shards", "3", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_NE(again.out.find("forgetting 1 shard(s) an interrupted scale stopped"), std::string::npos)
      << again.out;
  EXPECT_EQ(ghosts(), 0);
  EXPECT_FALSE(std::filesystem::exists(deployment_dir() / "scale-forget.json"));
  auto cluster = OnDeployment("status", {"--cluster"});
  EXPECT_EQ(cluster.exit_code, 0) << cluster.Describe();
  EXPECT_EQ(TotalKeys(3), written);
}

TEST_F(ReshardTest, DryRunAndBadInputChangeNothing) {
  ASSERT_EQ(Up(3).exit_code, 0);
  const std::string before = AgreedSlotMap(3);
  ASSERT_FALSE(before.empty());
  auto dry = OnDeployment("move-slots", {"0-99", "--to", "1", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_NE(dry.out.find("would move"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("0-99"), std::string::npos) << dry.out;
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"move-slots", "0-200,100-300", "--to", "1"}, "overlap"},
           {{"move-slots", "0-99", "--to", "7"}, "no shard 7"},
           {{"move-slots", "0-16384", "--to", "1"}, "within 0-16383"},
           {{"move-slots", "0-99"}, "--to"},
           {{"rebalance", "--by", "cpu"}, "slots, keys, memory or load"},
           {{"rebalance", "--threshold", "200%"}, "percentage"},
           {{"scale", "--shards", "5000"}, "between 1 and 1000"},
           {{"scale"}, "--shards"},
           // Redis 7.0 has no CLUSTER MIGRATESLOTS: said before anything moves, not a raw ERR.
           {{"move-slots", "0-99", "--to", "1", "--migration", "atomic"},
            "has no atomic slot migration"}}) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    auto bad = OnDeployment(args[0], rest);
    EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.Describe();
    EXPECT_EQ(SplitLines(bad.err).size(), 1u) << bad.Describe();
  }
  EXPECT_EQ(AgreedSlotMap(3), before);
  auto balanced = OnDeployment("rebalance");
  EXPECT_EQ(balanced.exit_code, 0) << balanced.Describe();
  EXPECT_NE(balanced.out.find("nothing to move"), std::string::npos) << balanced.out;
}

// A scale to more shards than the CPUs given says so, as up does, dry run or not (it said nothing).
TEST_F(ReshardTest, AScaleOntoSharedCpusWarnsAsUpDoes) {
  ASSERT_EQ(Up(2, {"--cpus", "0"}).exit_code, 0);
  auto dry = OnDeployment("scale", {"--shards", "3", "--cpus", "0", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_NE(dry.err.find("warning: 3 shards share 1 CPU(s)"), std::string::npos) << dry.Describe();
  auto json_dry = OnDeployment("scale", {"--shards", "3", "--cpus", "0", "--dry-run", "--json"});
  EXPECT_NE(json_dry.out.find("\"warnings\":[\"3 shards share 1 CPU(s)"), std::string::npos)
      << json_dry.Describe();
  EXPECT_EQ(Status()["shards"].size(), 2u) << "a dry run changed the deployment";
}

// Three shards of 8 MB hold 12,000 keys of 500 B; one could not. A scale to one shard used to
// run out of memory part way through a slot (OOM from MIGRATE), leave it open on both sides, and
// fail the same way when run again. It is refused before anything moves, dry run or not; a scale
// to two, which fits, moves every key.
TEST_F(ReshardTest, AScaleIntoTooLittleMemoryIsRefusedBeforeAnythingMoves) {
  ASSERT_EQ(Up(3, {"--shard-memory", "8mb"}).exit_code, 0);
  Populate(12000, 500);
  ASSERT_EQ(TotalKeys(3), 12000);
  const std::string before = AgreedSlotMap(3);
  ASSERT_FALSE(before.empty());

  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--shards", "1", "--dry-run"}, {"--shards", "1"}}) {
    auto refused = OnDeployment("scale", flags, 60s);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("shard 0 would use about"), std::string::npos) << refused.Describe();
    EXPECT_NE(refused.err.find("maxmemory 8mb"), std::string::npos) << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  }
  EXPECT_EQ(AgreedSlotMap(3), before) << "slots moved or were left open";
  EXPECT_EQ(TotalKeys(3), 12000);

  auto fits = OnDeployment("scale", {"--shards", "2"}, 120s);
  ASSERT_EQ(fits.exit_code, 0) << fits.Describe();
  EXPECT_EQ(TotalKeys(2), 12000);
}

// A move that runs out of memory part way (clients filled its target meanwhile) leaves its slot
// open. The next rebalance used to try to finish it into the full shard and fail the same way
// (exit 1, OOM from MIGRATE, a few more keys moved), while its dry run said "would finish 1 slot
// moves". Both now refuse before any key moves, exit 2, naming the shard to free; once it has
// room the move finishes with every key.
TEST_F(ReshardTest, AnOpenMoveIntoAFullShardIsRefusedUntilItHasRoom) {
  ASSERT_EQ(Up(3, {"--shard-memory", "8mb"}).exit_code, 0);
  // Shard 0 -> shard 1, 19 of its 20 keys of 100 KB (1.9 MB) still on shard 0.
  OpenSlot(100, 100 * 1024);
  // Shard 1 filled past 80% of its 8 MB by values in a slot it owns (shard 1 of 3: 5461-10922).
  const std::string tag = std::string(common::TagForSlot(6000));
  const std::string value(64 * 1024, 'v');
  int fillers = 0;
  auto used_share = [&] {
    auto info = QueryRedis(base_port() + 1, {"INFO", "memory"});
    if (!info) return 0.0;
    auto field = [&](const std::string& name) {
      const auto at = info->text.find("\n" + name + ":");
      return at == std::string::npos ? 0.0 : std::atof(info->text.c_str() + at + name.size() + 2);
    };
    return (field("used_memory") - field("mem_not_counted_for_evict")) / field("maxmemory");
  };
  while (used_share() < 0.8 && fillers < 200) {
    auto set = QueryRedis(base_port() + 1,
                          {"SET", "{" + tag + "}:fill:" + std::to_string(fillers), value});
    ASSERT_TRUE(set && set->text == "OK") << "shard 1 refused a write at " << used_share();
    ++fillers;
  }
  ASSERT_GE(used_share(), 0.8);
  const long long keys = TotalKeys(3);

  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--dry-run"}, {}}) {
    auto refused = OnDeployment("rebalance", flags, 60s);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("the move of slot 100 from shard 0 into shard 1 was left half"),
              std::string::npos)
        << refused.Describe();
    EXPECT_NE(refused.err.find("free memory on shard 1"), std::string::npos) << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  }
  // `up` of the running deployment warns the same way and still succeeds: the shards run.
  auto up = Up(3, {"--shard-memory", "8mb"});
  EXPECT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_NE(up.err.find("the move of slot 100 from shard 0 into shard 1"), std::string::npos)
      << up.Describe();
  EXPECT_EQ(up.err.find("usage:"), std::string::npos) << up.Describe();
  EXPECT_TRUE(AgreedSlotMap(3).empty()) << "slot 100 is still open, as it was";
  auto on_source = QueryRedis(base_port(), {"CLUSTER", "COUNTKEYSINSLOT", "100"});
  ASSERT_TRUE(on_source);
  EXPECT_EQ(on_source->integer, 19) << "no key of slot 100 moved";
  EXPECT_EQ(TotalKeys(3), keys);

  for (int i = 0; i < fillers; ++i) {
    ASSERT_TRUE(QueryRedis(base_port() + 1, {"DEL", "{" + tag + "}:fill:" + std::to_string(i)}));
  }
  auto finished = OnDeployment("rebalance", {"--json"}, 60s);
  ASSERT_EQ(finished.exit_code, 0) << finished.Describe();
  EXPECT_EQ(DoneEvent(finished)["finished_open_slots"], 1) << finished.out;
  ExpectMovedToShard1(100);
  EXPECT_EQ(TotalKeys(3), keys - fillers);
}

TEST_F(ReshardTest, TheNextRunFinishesAMoveAnInterruptedRunLeftOpen) {
  ASSERT_EQ(Up(3).exit_code, 0);
  OpenSlot(100);
  EXPECT_TRUE(AgreedSlotMap(3).empty()) << "slot 100 is open";

  auto dry = OnDeployment("rebalance", {"--dry-run", "--json"});
  EXPECT_EQ(DoneEvent(dry)["finished_open_slots"], 1) << dry.out;
  EXPECT_TRUE(AgreedSlotMap(3).empty()) << "a dry run finishes nothing";

  auto run = OnDeployment("rebalance", {"--json"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(DoneEvent(run)["finished_open_slots"], 1) << run.out;
  // The move was finished toward its target: slot 100 and all 20 keys are on shard 1.
  ExpectMovedToShard1(100);
  EXPECT_NE(AgreedSlotMap(3).find(std::to_string(base_port() + 1) + "=100,"), std::string::npos);
}

TEST_F(ReshardTest, StatusListsAnOpenMoveAndUpFinishesIt) {
  // AOF, so the keys of the slot left open survive down and up.
  const std::vector<std::string> spec = {"--persistence", "aof"};
  ASSERT_EQ(Up(3, spec).exit_code, 0);
  OpenSlot(100);
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 1) << "an open move is degraded: " << status.dump(2);
  EXPECT_EQ(status["moves_in_progress"],
            json::parse(R"([{"slots":"100","first_slot":100,"last_slot":100,)"
                        R"("source_shard":0,"target_shard":1}])"))
      << status.dump(2);
  auto table = OnDeployment("status");
  EXPECT_NE(table.out.find("slots 100: shard 0 -> shard 1"), std::string::npos) << table.out;

  // `up` of the running deployment finishes it.
  std::vector<std::string> as_json = spec;
  as_json.push_back("--json");
  auto again = Up(3, as_json);
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  json reply = json::parse(again.out, nullptr, false);
  EXPECT_EQ(reply.value("finished_open_slots", -1), 1) << again.out;
  ExpectMovedToShard1(100);
  status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_TRUE(status["moves_in_progress"].empty());

  // So does `up` after `down` mid-move: the markers come back with nodes.conf.
  OpenSlot(200);
  auto down = OnDeployment("down");
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  auto resumed = Up(3, spec);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_NE(resumed.out.find("finished the move of 1 slot(s)"), std::string::npos)
      << resumed.Describe();
  ExpectMovedToShard1(200);
  Status(&code);
  EXPECT_EQ(code, 0);
}

TEST_F(ReshardTest, CtrlCStopsBetweenBatchesAndTheNextRunContinues) {
  ASSERT_EQ(Up(3).exit_code, 0);
  Populate(60000);
  const long long keys = TotalKeys(3);
  ASSERT_GT(keys, 59000);
  auto move =
      StartOnDeployment("move-slots", {"0-5460", "--to", "2", "--migration", "migrate"}, "move");
  // Once the target has taken its first slots, Ctrl-C.
  ASSERT_TRUE(WaitUntil([&] { return OwnedSlots(2) > 5461; }, 60s, 5ms));
  ASSERT_EQ(kill(move->pid(), SIGINT), 0);
  auto code = move->WaitForExit(60s);
  const std::string err = ReadFileText(scratch_dir() / "move.err");
  ASSERT_EQ(code, std::optional<int>(130)) << err;
  EXPECT_NE(err.find("interrupted; slots moved so far stay moved and none is left open"),
            std::string::npos)
      << err;
  // The hint is the whole command: ranges and target too.
  EXPECT_NE(err.find("run shardctl move-slots 0-5460 --to 2 --name"), std::string::npos) << err;
  EXPECT_LT(OwnedSlots(2), 5461 + 5461) << "stopped before the end";
  EXPECT_FALSE(AgreedSlotMap(3).empty()) << "no slot left MIGRATING or IMPORTING";
  EXPECT_EQ(TotalKeys(3), keys);

  auto rest = OnDeployment("move-slots", {"0-5460", "--to", "2"});
  ASSERT_EQ(rest.exit_code, 0) << rest.Describe();
  EXPECT_EQ(OwnedSlots(2), 5461 + 5461);
  EXPECT_EQ(TotalKeys(3), keys);
}

// `up` while a move-slots runs takes the slots it has open for its own and leaves them to it
// (before: it finished them too, racing the move, and said "an interrupted scale or rebalance
// left" them open).
TEST_F(ReshardTest, UpLeavesTheOpenSlotsOfARunningMoveToIt) {
  ASSERT_EQ(Up(3).exit_code, 0);
  Populate(60000);
  const long long keys = TotalKeys(3);
  auto move =
      StartOnDeployment("move-slots", {"0-5460", "--to", "2", "--migration", "migrate"}, "move");
  ASSERT_TRUE(WaitUntil([&] { return OwnedSlots(2) > 5461; }, 60s, 5ms));
  auto up = Up(3);
  EXPECT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(up.out.find("finished the move"), std::string::npos) << up.Describe();
  EXPECT_EQ(move->WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "move.err");
  EXPECT_EQ(OwnedSlots(2), 5461 + 5461);
  EXPECT_FALSE(AgreedSlotMap(3).empty()) << "no slot left open";
  EXPECT_EQ(TotalKeys(3), keys);
}

// Ctrl-C during an atomic move cancels the migration on the source (Valkey 9.1 refuses the
// "CANCELSLOTMIGRATIONS ALL" its help shows, and the refusal went unseen: the move went on and
// finished after shardctl had said it stopped). The slot stays with its source, every key there.
TEST_F(ReshardTest, CtrlCCancelsAnAtomicMove) {
  AtomicMoveSetup setup;
  ASSERT_NO_FATAL_FAILURE(PrepareAtomicMove(setup));
  auto count_at = [&](int port) { return KeysInSlot(port, setup.slot); };
  auto states = [&] { return SlotMigrationStates(setup.source); };
  // 200 ms a key in the source's snapshot of the slot: the move is under way for ~8 s.
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "200000"}));
  auto move = StartAtomicMove(setup, {});
  ASSERT_TRUE(WaitUntil([&] { return states().size() == 1; }, 30s, 10ms));
  ASSERT_EQ(kill(move->pid(), SIGINT), 0);
  const auto code = move->WaitForExit(60s);
  const std::string err = ReadFileText(scratch_dir() / "move.err");
  EXPECT_EQ(code, std::optional<int>(130)) << err;
  EXPECT_EQ(states(), std::vector<std::string>{"cancelled"}) << err;
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  EXPECT_EQ(count_at(setup.source), 40);
  EXPECT_EQ(TotalKeys(2), 40);
  EXPECT_FALSE(AgreedSlotMap(2).empty()) << "no slot left open";
}

// Ctrl-C that reaches the move after its job has succeeded (the cancel finds nothing to stop):
// the slot has moved, and the progress says so instead of "0 moved".
TEST_F(ReshardTest, CtrlCAfterAnAtomicJobSucceededCountsTheMove) {
  AtomicMoveSetup setup;
  ASSERT_NO_FATAL_FAILURE(PrepareAtomicMove(setup));
  auto states = [&] { return SlotMigrationStates(setup.source); };
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "100000"}));
  auto move = StartAtomicMove(setup, {"--json"});
  ASSERT_TRUE(WaitUntil([&] { return states().size() == 1; }, 30s, 5ms));
  // shardctl stopped while the job runs on: it sees the Ctrl-C before the success.
  ASSERT_EQ(kill(move->pid(), SIGSTOP), 0);
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  const bool succeeded =
      WaitUntil([&] { return states() == std::vector<std::string>{"success"}; }, 60s, 50ms);
  ASSERT_EQ(kill(move->pid(), SIGINT), 0);
  ASSERT_EQ(kill(move->pid(), SIGCONT), 0);
  ASSERT_TRUE(succeeded) << "the job did not succeed by itself";
  const auto code = move->WaitForExit(60s);
  const std::string out = ReadFileText(scratch_dir() / "move.out");
  EXPECT_EQ(code, std::optional<int>(130)) << out;
  const std::string err = ReadFileText(scratch_dir() / "move.err");
  EXPECT_NE(out.find("\"slots_moved\":1"), std::string::npos) << out << err;
  // Valkey refuses the cancel of a job that has ended ("No migrations ongoing"): not a failure.
  EXPECT_EQ(err.find("could not be cancelled"), std::string::npos) << err;
  EXPECT_EQ(SplitLines(err).size(), 1u) << err;
  EXPECT_EQ(KeysInSlot(base_port() + 1 - setup.source_shard, setup.slot), 40);
  EXPECT_EQ(TotalKeys(2), 40);
  EXPECT_FALSE(AgreedSlotMap(2).empty()) << "no slot left open";
}

// move-slots killed (kill -9) while its atomic migration runs: the job runs on in Valkey and
// ends by itself. The move run again waits for it, then finishes (before: exit 1 with the
// server's "I am already migrating slot N", or a plan made from the slot map it was changing).
TEST_F(ReshardTest, AMoveRunAgainAfterAKillWaitsForTheAtomicJobItLeft) {
  AtomicMoveSetup setup;
  ASSERT_NO_FATAL_FAILURE(PrepareAtomicMove(setup));
  auto states = [&] { return SlotMigrationStates(setup.source); };
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "100000"}));
  auto move = StartAtomicMove(setup, {});
  ASSERT_TRUE(WaitUntil([&] { return states().size() == 1; }, 30s, 5ms));
  ASSERT_EQ(kill(move->pid(), SIGKILL), 0);
  move->WaitForExit(10s);
  // 100 ms a key: the job left runs ~4 s more, through the start of the run again.
  ASSERT_NE(states(), std::vector<std::string>{"success"}) << "the job ended before the rerun";

  const std::string slot = std::to_string(setup.slot);
  auto again = OnDeployment("move-slots",
                            {slot + "-" + slot, "--to", std::to_string(1 - setup.source_shard)});
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  ASSERT_TRUE(QueryRedis(setup.source, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  EXPECT_EQ(KeysInSlot(base_port() + 1 - setup.source_shard, setup.slot), 40);
  EXPECT_EQ(TotalKeys(2), 40);
  EXPECT_FALSE(AgreedSlotMap(2).empty()) << "no slot left open";
}

// A source primary killed (kill -9) mid-move, with AOF fsynced on every write and no replica: the
// move fails naming the node, the supervisor restarts the shard from its AOF, the open slots it
// left are finished by the next run, and no acknowledged write is lost.
TEST_F(ReshardTest, SourceKilledMidMoveLosesNoAckedWrite) {
  auto up = Up(3, {"--persistence", "aof", "--appendfsync", "always", "--proxy-port",
                   std::to_string(ProxyPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  Populate(40000);
  const long long keys = TotalKeys(3);
  AckedWriter cluster = StartAckedWriter("--cluster", base_port(), "c");
  AckedWriter proxied = StartAckedWriter("--plain", ProxyPort(), "p");
  auto on_shard0 = QueryRedis(base_port(), {"DBSIZE"});
  ASSERT_TRUE(on_shard0);
  WaitForWrites(base_port(), static_cast<int>(on_shard0->integer) + 200);

  auto move =
      StartOnDeployment("move-slots", {"0-5460", "--to", "2", "--migration", "migrate"}, "move");
  ASSERT_TRUE(WaitUntil([&] { return OwnedSlots(2) > 5461; }, 60s, 5ms));
  json before = Status();
  ASSERT_TRUE(before["shards"][0]["pid"].is_number()) << before.dump(2);
  ASSERT_EQ(kill(before["shards"][0]["pid"].get<pid_t>(), SIGKILL), 0);
  auto code = move->WaitForExit(90s);
  const std::string err = ReadFileText(scratch_dir() / "move.err");
  EXPECT_EQ(code, std::optional<int>(1)) << err;
  EXPECT_NE(err.find("127.0.0.1:" + std::to_string(base_port())), std::string::npos)
      << "names the node that failed: " << err;

  // Restarted by the supervisor with its data; then the same command finishes the job.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto ping = QueryRedis(base_port(), {"PING"});
        return ping && ping->text == "PONG";
      },
      60s, 50ms));
  FinishMoveOfShard0ToShard2();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(OwnedSlots(2), 5461 + 5461);
  for (const auto& [writer, who] :
       {std::pair{&cluster, "cluster client"}, std::pair{&proxied, "client through shardproxy"}}) {
    json verdict = StopAckedWriter(*writer);
    EXPECT_GT(verdict.value("acked", 0), 100) << who << ": " << verdict.dump();
    EXPECT_EQ(verdict.value("lost", -1), 0) << who << ": " << verdict.dump();
    EXPECT_EQ(verdict.value("wrong", -1), 0) << who << ": " << verdict.dump();
  }
  EXPECT_GE(TotalKeys(3), keys) << "the populated keys all survive";
  int status_code = -1;
  ASSERT_TRUE(WaitUntil(
      [&] {
        Status(&status_code);
        return status_code == 0;
      },
      30s, 200ms));
}

// A target stopped mid-move (SIGSTOP: the stand-in for a hung shard) timed every MIGRATE out while
// the source waited on it, unable to answer anyone: a key-by-key retry kept the source silent past
// its supervisor's hang limit, which killed it too, losing the writes it had not saved, and the
// error named the source. Now the move stops at the first timeout the target does not answer a
// PING after, naming the target; the source keeps running; the next run finishes the move.
TEST_F(ReshardTest, ATargetStoppedMidMoveStopsTheMoveAndTheSourceKeepsRunning) {
  ASSERT_EQ(Up(3).exit_code, 0);
  Populate(20000);
  // A 100 MB string in the moved range: its MIGRATE holds the source long enough to be seen
  // (PING unanswered), and the target is stopped right then.
  std::string big;
  for (int n = 0; big.empty() || common::KeySlot(big) > 5000; ++n) big = "big:" + std::to_string(n);
  auto set = QueryRedis(base_port(), {"SETRANGE", big, "104857599", "x"});
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->integer, 104857600) << set->text;
  const long long keys = TotalKeys(3);
  ASSERT_GT(keys, 19000);
  const json before = Status();
  const pid_t source = before["shards"][0]["pid"].get<pid_t>();
  const pid_t target = before["shards"][2]["pid"].get<pid_t>();
  auto move =
      StartOnDeployment("move-slots", {"0-5460", "--to", "2", "--migration", "migrate"}, "move");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const auto asked = std::chrono::steady_clock::now();
        QueryRedis(base_port(), {"PING"});
        return std::chrono::steady_clock::now() - asked > 150ms;
      },
      60s, 1ms))
      << "the source was never busy in a MIGRATE";
  ASSERT_EQ(kill(target, SIGSTOP), 0);
  const auto stopped_at = std::chrono::steady_clock::now();
  auto code = move->WaitForExit(60s);
  const auto took = std::chrono::steady_clock::now() - stopped_at;
  kill(target, SIGCONT);
  const std::string err = ReadFileText(scratch_dir() / "move.err");
  EXPECT_EQ(code, std::optional<int>(1)) << err;
  EXPECT_NE(
      err.find("the target, 127.0.0.1:" + std::to_string(base_port() + 2) + ", does not answer"),
      std::string::npos)
      << err;
  // The MIGRATEs in flight time out (the source blocked up to 4 x 5 s, below the supervisor's 33 s
  // hang limit), then the target gets 10 s to answer a PING (the source serves meanwhile).
  EXPECT_LT(took, 40s) << "the source was kept waiting on the stopped target: " << err;
  std::cout << "[ measure  ] target stopped inside a MIGRATE: the move stopped after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms\n";
  EXPECT_EQ(Status()["shards"][0]["pid"], source) << "the source was killed";

  FinishMoveOfShard0ToShard2();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(OwnedSlots(2), 5461 + 5461);
  EXPECT_EQ(TotalKeys(3), keys);
  EXPECT_FALSE(AgreedSlotMap(3).empty()) << "no slot left MIGRATING or IMPORTING";
}

}  // namespace
}  // namespace shardctl::integration
