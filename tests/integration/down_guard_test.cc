// `down` and the commands it could cut short, from a sweep: a down typed while a move-slots ran
// stopped the shards under it (the move failed blaming the connection, down's save met the shards
// the move held), and a down interrupted (Ctrl-C) while it saved the primaries died at once,
// leaving every write of the cluster held for 30 s. Keys are counted before and after.
#include <signal.h>

#include <chrono>
#include <thread>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class DownGuardTest : public ShardctlTest {
 protected:
  std::vector<pid_t> Pids() {
    std::vector<pid_t> pids;
    const json status = Status();  // a range over a temporary's member would dangle
    for (const auto& shard : status["shards"]) {
      pids.push_back(shard["pid"].is_number() ? shard["pid"].get<pid_t>() : 0);
    }
    return pids;
  }
};

TEST_F(DownGuardTest, DownIsRefusedWhileAMoveRunsAndTheMoveFinishes) {
  ASSERT_EQ(Up(3).exit_code, 0);
  auto filled = Shardctl({"bench", "run", "--cluster", "127.0.0.1:" + std::to_string(base_port()),
                          "--keyspace", "60000", "--ratio", "0:1", "--value-size", "100",
                          "--populate", "--requests", "1", "--pipeline", "64"},
                         120s);
  ASSERT_EQ(filled.exit_code, 0) << filled.Describe();
  const long long keys = TotalKeys(KeysOnPrimaries());
  ASSERT_GT(keys, 59000);
  const auto pids = Pids();
  auto move =
      StartOnDeployment("move-slots", {"0-5460", "--to", "2", "--migration", "migrate"}, "move");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return fs::exists(deployment_dir() / "data.lock") &&
               !ReadFileText(deployment_dir() / "data.lock").empty();
      },
      20s, 5ms));
  auto down = OnDeployment("down", {}, 60s);
  EXPECT_EQ(down.exit_code, 2) << down.Describe();
  EXPECT_NE(down.err.find("shardctl move-slots): down would stop the shards under it"),
            std::string::npos)
      << down.Describe();
  EXPECT_NE(down.err.find("nothing was stopped"), std::string::npos) << down.Describe();
  EXPECT_EQ(move->WaitForExit(120s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "move.err");
  EXPECT_EQ(Pids(), pids) << "a shard was stopped";
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys);
  auto after = OnDeployment("down", {}, 60s);
  EXPECT_EQ(after.exit_code, 0) << after.Describe();
}

// A down typed while an up forms the cluster: the supervisor, busy starting, let the stop wait, the
// down stopped the shards from their pid files, and the up then said the cluster was healthy, exit
// 0, of a deployment left stopped. Now the down is refused and the up finishes.
TEST_F(DownGuardTest, DownIsRefusedWhileAnUpStartsTheDeployment) {
  auto up =
      StartOnDeployment("up", {"--shards", "3", "--base-port", std::to_string(base_port())}, "up");
  ASSERT_TRUE(
      WaitUntil([&] { return fs::exists(deployment_dir() / "shards" / "2" / "pid"); }, 20s, 2ms))
      << ReadFileText(scratch_dir() / "up.err");
  auto down = OnDeployment("down", {}, 60s);
  EXPECT_EQ(down.exit_code, 2) << down.Describe();
  EXPECT_NE(down.err.find("a shardctl up of this deployment is running"), std::string::npos)
      << down.Describe();
  EXPECT_EQ(up->WaitForExit(60s), std::optional<int>(0)) << ReadFileText(scratch_dir() / "up.err");
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0) << "the deployment up said it started is not healthy";
  auto after = OnDeployment("down", {}, 60s);
  EXPECT_EQ(after.exit_code, 0) << after.Describe();
}

// A save made slow on purpose (rdb-key-save-delay, Redis' own test knob): Ctrl-C while down
// waits for it lifts the pause at once, stops nothing, exits 130.
TEST_F(DownGuardTest, CtrlCWhileDownSavesResumesWritesAndStopsNothing) {
  ASSERT_EQ(Up(2, {"--persistence", "rdb"}).exit_code, 0);
  WriteKeys(400);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 401);
  const auto pids = Pids();
  for (int shard = 0; shard < 2; ++shard) {
    auto slowed = QueryRedis(base_port() + shard, {"CONFIG", "SET", "rdb-key-save-delay", "50000"});
    ASSERT_TRUE(slowed.has_value() && slowed->text == "OK");
  }
  auto down = StartOnDeployment("down", {}, "down");
  // Saving: the first primary's writes are held (a write waits).
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = QueryRedis(base_port(), {"INFO", "persistence"});
        return info && info->text.find("rdb_bgsave_in_progress:1") != std::string::npos;
      },
      20s, 10ms));
  std::this_thread::sleep_for(300ms);
  const auto interrupted_at = Clock::now();
  ASSERT_EQ(::kill(down->pid(), SIGINT), 0);
  EXPECT_EQ(down->WaitForExit(30s), std::optional<int>(130))
      << ReadFileText(scratch_dir() / "down.err");
  const std::string err = ReadFileText(scratch_dir() / "down.err");
  EXPECT_NE(err.find("interrupted while saving the primaries: nothing was stopped, and writes "
                     "resumed"),
            std::string::npos)
      << err;
  SendThroughCluster("SET after:0 1\nSET after:1 1\n");
  // Lifted, not lapsed: the pause down renews lasts 10 s.
  EXPECT_LT(Clock::now() - interrupted_at, 5s) << "writes stayed held after the Ctrl-C";
  EXPECT_EQ(Pids(), pids) << "a shard was stopped";
  for (int shard = 0; shard < 2; ++shard) {
    (void)QueryRedis(base_port() + shard, {"CONFIG", "SET", "rdb-key-save-delay", "0"});
  }
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), TotalKeys(before) + 2);
}

}  // namespace
}  // namespace shardctl::integration
