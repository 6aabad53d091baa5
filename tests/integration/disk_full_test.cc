// A shard whose disk fills up (AOF with appendfsync always on a small tmpfs): Redis exits on the
// failed write; the supervisor says so once, shows the shard as disk-full, does not crash-loop it,
// and restarts it by itself once space is freed, with every acknowledged write. Needs root (mount).
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <thread>

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

}  // namespace
}  // namespace shardctl::integration
