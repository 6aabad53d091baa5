// `up` of a deployment that is stopped or lost its supervisor: resumed as recorded, whatever
// shape `scale` gave it; refused before anything starts when asked for another shape, with the
// record and the data left exactly as they were. Keys are counted before and after.
#include <signal.h>
#include <unistd.h>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class ResumeTest : public ShardctlTest {};

TEST_F(ResumeTest, AnotherShapeIsRefusedAndTheRecordAndDataStay) {
  auto up = Up(3, {"--persistence", "rdb"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(TotalKeys(before), 301);
  auto down = OnDeployment("down");
  ASSERT_EQ(down.exit_code, 0) << down.Describe();
  const std::string record = ReadFileText(deployment_dir() / "deployment.json");

  for (int shards : {2, 4}) {
    SCOPED_TRACE("up --shards " + std::to_string(shards));
    auto other = Up(shards, {"--persistence", "rdb"});
    EXPECT_EQ(other.exit_code, 2) << other.Describe();
    EXPECT_NE(other.err.find("shards: 3 -> " + std::to_string(shards) +
                             " (live: shardctl scale --shards " + std::to_string(shards) +
                             " --name " + name() + " --state-dir " + state_root().string() + ")"),
              std::string::npos)
        << other.Describe();
    EXPECT_NE(other.err.find("nothing was started or changed"), std::string::npos);
    EXPECT_EQ(other.err.find("--purge"), std::string::npos) << "a hint toward losing the data";
    EXPECT_EQ(ReadFileText(deployment_dir() / "deployment.json"), record)
        << "a refused up rewrote the deployment record";
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(PortBindable(base_port() + i)) << "a shard started";
  }
  // Each refused before anything starts, the record kept, with every line expected in its error.
  const auto expect_refused = [&](const std::vector<std::string>& flags,
                                  const std::vector<std::string>& lines) {
    auto refused = Up(3, flags);
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    for (const auto& line : lines) {
      EXPECT_NE(refused.err.find(line), std::string::npos) << line << "\n" << refused.Describe();
    }
    EXPECT_EQ(ReadFileText(deployment_dir() / "deployment.json"), record);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(PortBindable(base_port() + i)) << "a shard started";
  };
  // An rdb deployment resumed as aof would start from an empty AOF: its keys hidden, and lost
  // with the next down + up.
  expect_refused({"--persistence", "aof"},
                 {"persistence: rdb -> aof", "recorded: 3 shards, 0 replicas"});
  expect_refused({"--persistence", "rdb", "--engine", "valkey"},
                 {"live: shardctl restart --rolling --engine"});
  // Less memory, or another eviction policy (a flag left out goes back to its default), would
  // evict the keys as they load (a sweep lost 22,773 of 50,000 keys that way, exit 0).
  expect_refused(
      {"--persistence", "rdb", "--shard-memory", "8mb", "--maxmemory-policy", "allkeys-lru"},
      {"maxmemory-policy: noeviction -> allkeys-lru", "memory: shard 0 maxmemory "});

  // `up` naming only the deployment resumes it as recorded, with every key.
  auto resumed = OnDeployment("up");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_NE(resumed.out.find("resumed"), std::string::npos) << resumed.Describe();
  EXPECT_EQ(KeysOnPrimaries(), before) << "the resume lost keys";
}

// After `scale`, the record has a shape no spec flag gives; a supervisor killed then must be
// replaceable by `up` alone (the hint status and scale print), with every shard and key.
TEST_F(ResumeTest, AScaledDeploymentWhoseSupervisorDiedIsAdoptedByUpAlone) {
  auto up = Up(2);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  WriteKeys(300);
  // A port the new shard needs is taken: a runtime fault (exit 1), as for up; nothing changes.
  const int taken = ListenOn(base_port() + 2);
  ASSERT_GE(taken, 0);
  auto busy = OnDeployment("scale", {"--shards", "3"}, 120s);
  close(taken);
  EXPECT_EQ(busy.exit_code, 1) << busy.Describe();
  EXPECT_NE(busy.err.find("in use by another process"), std::string::npos) << busy.Describe();
  EXPECT_EQ(KeysOnPrimaries().size(), 2u);
  auto scaled = OnDeployment("scale", {"--shards", "3"}, 120s);
  ASSERT_EQ(scaled.exit_code, 0) << scaled.Describe();
  const auto before = KeysOnPrimaries();
  ASSERT_EQ(before.size(), 3u);
  ASSERT_EQ(TotalKeys(before), 301);

  json status = Status();
  const pid_t supervisor = status["supervisor"]["pid"].get<pid_t>();
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 5s));

  auto refused = OnDeployment("scale", {"--shards", "4"});
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("shardctl up --name " + name()), std::string::npos)
      << "the hint names the command that works: " << refused.Describe();

  auto adopted = OnDeployment("up");
  ASSERT_EQ(adopted.exit_code, 0) << adopted.Describe();
  EXPECT_NE(adopted.out.find("adopted 3 running shards"), std::string::npos) << adopted.Describe();
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(KeysOnPrimaries(), before) << "the adoption lost keys";
}

}  // namespace
}  // namespace shardctl::integration
