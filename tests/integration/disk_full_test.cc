// A shard whose disk fills up (AOF with appendfsync always on a small tmpfs): Redis exits on the
// failed write; the supervisor says so once, shows the shard as disk-full, does not crash-loop it,
// and restarts it by itself once space is freed, with every acknowledged write. `down` of an RDB
// deployment whose disk is full stops nothing and loses nothing. Needs root (mount).
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class DiskFullTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    disk_ = scratch_dir() / "disk";
    fs::create_directories(disk_);
    if (geteuid() != 0 || mount("tmpfs", disk_.c_str(), "tmpfs", 0, "size=48m") != 0) {
      GTEST_SKIP() << "needs root to mount a 48 MB tmpfs as the full disk";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) {
      auto down = OnDisk({"down", "--purge"});
      EXPECT_EQ(down.exit_code, 0) << down.Describe();
      umount2(disk_.c_str(), MNT_DETACH);
    }
    ShardctlTest::TearDown();
  }

  CommandResult OnDisk(std::vector<std::string> args) {
    args.insert(args.begin(), ShardctlBinary());
    args.insert(args.end(), {"--name", "full", "--state-dir", disk_.string()});
    return RunCommand(args, 90s);
  }
  json ShardState() {
    auto status = OnDisk({"status", "--json"});
    json parsed = json::parse(status.out, nullptr, /*allow_exceptions=*/false);
    return parsed.is_object() ? parsed["shards"][0] : json();
  }

  fs::path disk_;
  bool mounted_ = false;
};

TEST_F(DiskFullTest, AFullDiskIsReportedNotCrashLoopedAndHealsWhenSpaceIsFreed) {
  auto up = OnDisk({"up", "--shards", "1", "--base-port", std::to_string(base_port()),
                    "--persistence", "aof", "--appendfsync", "always"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const fs::path filler = disk_ / "filler";
  std::ofstream(filler) << std::string(20 << 20, '\0');  // freed later to let the shard back

  const std::string value(10000, 'v');
  int acked = 0;
  for (; acked < 5000; ++acked) {  // 48 MB cannot take 5000 x 10 KB
    auto reply = QueryRedis(base_port(), {"SET", "k" + std::to_string(acked), value});
    if (!reply || reply->kind != RedisReply::Kind::kString) break;
  }
  ASSERT_GT(acked, 100);
  ASSERT_LT(acked, 5000) << "the disk never filled";

  ASSERT_TRUE(
      WaitUntil([&] { return ShardState().value("health", "") == "disk-full"; }, 20s, 200ms))
      << ShardState().dump();
  const int restarts = ShardState().value("restarts", -1);
  std::this_thread::sleep_for(3s);  // no crash loop: it is left down, not restarted again
  EXPECT_EQ(ShardState().value("restarts", -2), restarts);
  EXPECT_EQ(ShardState().value("health", ""), "disk-full");
  auto status = OnDisk({"status"});
  EXPECT_NE(status.exit_code, 0) << status.Describe();
  const std::string log = ReadFileText(disk_ / "full/supervisor.log");
  EXPECT_NE(log.find("/shards/0 is full ("), std::string::npos) << log;
  EXPECT_NE(log.find("bytes free); not restarting it until space is freed"), std::string::npos)
      << log;

  fs::remove(filler);
  ASSERT_TRUE(WaitUntil([&] { return OnDisk({"status"}).exit_code == 0; }, 40s, 500ms))
      << OnDisk({"status"}).Describe();
  for (int i = 0; i < acked; i += 97) {
    auto length = QueryRedis(base_port(), {"STRLEN", "k" + std::to_string(i)});
    ASSERT_TRUE(length);
    EXPECT_EQ(length->integer, 10000) << "k" << i;
  }
  auto size = QueryRedis(base_port(), {"DBSIZE"});
  ASSERT_TRUE(size);
  EXPECT_GE(size->integer, acked) << "acknowledged writes were lost";
}

// `down` of a deployment with persistence rdb saves every shard before it stops any: with no room
// left for the save, it stops nothing and says so (exit 1), writes go on; with room again, and a
// shard stopped with SIGSTOP meanwhile, every acknowledged key comes back with `up`. Before, the
// shutdown's own save failed, the shard was killed after the stop's 10 s grace, and down said
// "stopped", exit 0: 3,000 of 10,001 keys gone (found by a sweep of operator mistakes).
TEST_F(DiskFullTest, DownOfAnRdbDeploymentWithNoRoomToSaveStopsNothing) {
  const std::vector<std::string> shape = {
      "--shards", "2", "--base-port", std::to_string(base_port()), "--persistence", "rdb"};
  std::vector<std::string> up_args = {"up"};
  up_args.insert(up_args.end(), shape.begin(), shape.end());
  auto up = OnDisk(up_args);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const std::vector<int> ports = {base_port(), base_port() + 1};
  const std::string value(1000, 'v');
  auto write = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string key = "k{" + std::to_string(i % 2) + "}" + std::to_string(i);
      auto reply = QueryRedis(base_port(), {"SET", key, value});
      if (reply && reply->kind == RedisReply::Kind::kError && reply->text.starts_with("MOVED")) {
        reply = QueryRedis(base_port() + 1, {"SET", key, value});
      }
      ASSERT_TRUE(reply);
      ASSERT_EQ(reply->kind, RedisReply::Kind::kString) << key << ": " << reply->text;
    }
  };
  ASSERT_NO_FATAL_FAILURE(write(0, 3000));
  ASSERT_EQ(OnDisk({"save"}).exit_code, 0);
  // No room for another snapshot; writes still succeed (the shards save only when asked).
  const fs::path filler = disk_ / "filler";
  const auto room = fs::space(disk_).available;
  ASSERT_GT(room, 64u << 10);
  std::ofstream(filler) << std::string(room - (16u << 10), '\0');
  ASSERT_NO_FATAL_FAILURE(write(3000, 3500));
  ASSERT_EQ(KeysAt(ports), 3500);

  auto refused = OnDisk({"down"});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  EXPECT_NE(refused.err.find("keys failed"), std::string::npos) << refused.Describe();
  EXPECT_NE(refused.err.find("nothing was stopped"), std::string::npos) << refused.Describe();
  EXPECT_EQ(KeysAt(ports), 3500) << "a shard stopped";
  ASSERT_NO_FATAL_FAILURE(write(3500, 3600));  // writes are neither held nor refused
  // So status says degraded, the shard whose snapshot failed on the full disk as disk-full (it
  // said the cluster failed, exit 2, while it served every write).
  auto status = OnDisk({"status", "--json"});
  EXPECT_EQ(status.exit_code, 1) << status.Describe();
  const json report = json::parse(status.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << status.Describe();
  EXPECT_EQ(report.value("cluster_state", ""), "degraded") << report.dump(2);
  EXPECT_NE(report["shards"].dump().find("\"disk-full\""), std::string::npos) << report.dump(2);

  fs::remove(filler);
  auto stopped_shard = ReadPidFile(disk_ / "full/shards/1/pid");
  ASSERT_TRUE(stopped_shard);
  ASSERT_EQ(::kill(stopped_shard->pid, SIGSTOP), 0);
  auto down = OnDisk({"down"});
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  up = OnDisk(up_args);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(KeysAt(ports), 3600) << "acknowledged keys were lost across down and up";
  // With no room again, --no-save stops at once without saving (the shards would not exit while
  // their save at shutdown failed); nothing was written since the last save, so up has it all.
  std::ofstream(filler) << std::string(fs::space(disk_).available - (16u << 10), '\0');
  auto no_save = OnDisk({"down", "--no-save"});
  EXPECT_EQ(no_save.exit_code, 0) << no_save.Describe();
  EXPECT_LT(no_save.elapsed, 8s) << "a shard was left to its failing save until killed";
  fs::remove(filler);
  up = OnDisk(up_args);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(KeysAt(ports), 3600);
}

}  // namespace
}  // namespace shardctl::integration
