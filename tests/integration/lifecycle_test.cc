// The life of a deployment: idempotent and concurrent `up`, status exit codes as the supervisor
// and shards die, down from pid files, signals to a foreground supervisor, Ctrl-C during `up`.
// (Restarts and adoption by the supervisor are in healing_test.cc.)
#include <signal.h>

#include <map>
#include <memory>
#include <set>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class LifecycleTest : public ShardctlTest {
 protected:
  // Brings up `shards` shards and returns their status; fails the test when `up` fails.
  json UpHealthy(int shards) {
    auto up = Up(shards);
    EXPECT_EQ(up.exit_code, 0) << up.Describe();
    int code = -1;
    json status = Status(&code);
    EXPECT_EQ(code, 0) << status.dump(2);
    EXPECT_EQ(status.value("cluster_state", ""), "ok") << status.dump(2);
    return status;
  }
};

std::vector<pid_t> ShardPids(const json& status) {
  std::vector<pid_t> pids;
  for (const auto& shard : status.value("shards", json::array())) {
    pids.push_back(shard["pid"].is_number_integer() ? shard["pid"].get<pid_t>() : 0);
  }
  return pids;
}

pid_t SupervisorPid(const json& status) {
  const json& pid = status.value("supervisor", json::object()).value("pid", json());
  return pid.is_number_integer() ? pid.get<pid_t>() : 0;
}

TEST_F(LifecycleTest, UpIsIdempotentAndRefusesADifferentSpec) {
  json first = UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  std::vector<pid_t> pids = ShardPids(first);
  pid_t supervisor = SupervisorPid(first);
  ASSERT_GT(supervisor, 0) << first.dump(2);

  auto again = Up(3);
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_NE(again.out.find("already running"), std::string::npos) << again.Describe();

  auto more = Up(4);
  EXPECT_EQ(more.exit_code, 2) << more.Describe();
  EXPECT_NE(more.err.find("shards: 3 -> 4"), std::string::npos) << more.Describe();
  EXPECT_TRUE(PortBindable(base_port() + 3)) << "a fourth shard was started";

  auto policy = Up(3, {"--maxmemory-policy", "allkeys-lru"});
  EXPECT_EQ(policy.exit_code, 2) << policy.Describe();
  EXPECT_NE(policy.err.find("maxmemory-policy: noeviction -> allkeys-lru"), std::string::npos)
      << policy.Describe();

  int code = -1;
  json after = Status(&code);
  EXPECT_EQ(code, 0) << after.dump(2);
  EXPECT_EQ(ShardPids(after), pids) << "shards were restarted";
  EXPECT_EQ(SupervisorPid(after), supervisor) << "the supervisor was replaced";

  auto down = OnDeployment("down");
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_NE(down.out.find("3 shard(s)"), std::string::npos) << down.Describe();
  for (pid_t pid : pids) EXPECT_FALSE(IsAlive(pid)) << "shard pid " << pid << " survived down";
  EXPECT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 10s)) << "supervisor survived down";
  // A supervisor that exits cleanly removes its pid file and socket.
  EXPECT_FALSE(fs::exists(deployment_dir() / "supervisor.pid"));
  EXPECT_FALSE(fs::exists(deployment_dir() / "control.sock"));
  LiveDescendants();  // reaps the supervisor (this process is its reaper) and notes a crash
  EXPECT_EQ(TakeCrashes(), std::vector<std::string>{}) << "the supervisor crashed on down";
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(PortBindable(base_port() + i)) << "port still taken";

  auto down_again = OnDeployment("down");
  EXPECT_EQ(down_again.exit_code, 0) << down_again.Describe();
  EXPECT_NE(down_again.out.find("nothing was running"), std::string::npos) << down_again.Describe();

  // Stopped but not purged: the deployment is known and reported down.
  json stopped = Status(&code);
  EXPECT_EQ(code, 2) << stopped.dump(2);
  EXPECT_TRUE(fs::exists(deployment_dir() / "deployment.json"));

  auto purge = OnDeployment("down", {"--purge"});
  EXPECT_EQ(purge.exit_code, 0) << purge.Describe();
  EXPECT_FALSE(fs::exists(deployment_dir())) << "down --purge left " << deployment_dir();

  auto unknown = OnDeployment("status");
  EXPECT_EQ(unknown.exit_code, 3) << unknown.Describe();
  EXPECT_NE(unknown.err.find("no deployment"), std::string::npos) << unknown.Describe();
  // `down` of what is not there succeeds (scripts rerun it) but says so: a mistyped --name or
  // --state-dir used to read "nothing was running".
  auto none = OnDeployment("down", {"--purge"});
  EXPECT_EQ(none.exit_code, 0) << none.Describe();
  EXPECT_NE(none.out.find("there is none in " + deployment_dir().string()), std::string::npos)
      << none.Describe();
  auto none_json = OnDeployment("down", {"--json"});
  EXPECT_EQ(json::parse(none_json.out, nullptr, false).value("found", true), false)
      << none_json.Describe();
  ExpectNothingRunning("after down --purge");
}

// Without a supervisor nothing heals: status must see the dead supervisor and then a dead shard,
// and `down` must still stop the rest from the pid files.
TEST_F(LifecycleTest, StatusReportsADeadSupervisorAndADeadShardAndDownStillStopsThem) {
  json healthy = UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  std::vector<pid_t> pids = ShardPids(healthy);
  pid_t supervisor = SupervisorPid(healthy);
  ASSERT_GT(supervisor, 0) << healthy.dump(2);
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 5s));

  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 1) << status.dump(2);
  EXPECT_EQ(status["supervisor"].value("running", true), false) << status.dump(2);
  EXPECT_EQ(ShardPids(status), pids) << "shards must outlive their supervisor";
  for (const auto& shard : status["shards"]) EXPECT_EQ(shard.value("health", ""), "ok");
  auto human = OnDeployment("status");
  EXPECT_EQ(human.exit_code, 1) << human.Describe();
  EXPECT_NE(human.out.find("supervisor DOWN"), std::string::npos) << human.Describe();

  ASSERT_EQ(kill(pids[1], SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(pids[1]); }, 5s));
  status = Status(&code);
  // One of three primaries gone: degraded until cluster-node-timeout, then the cluster fails.
  EXPECT_TRUE(code == 1 || code == 2) << "exit " << code << "\n" << status.dump(2);
  EXPECT_NE(status.value("cluster_state", ""), "ok") << status.dump(2);
  EXPECT_EQ(status["shards"][1].value("health", ""), "down") << status["shards"][1].dump();
  EXPECT_TRUE(status["shards"][1]["pid"].is_null()) << status["shards"][1].dump();
  for (int i : {0, 2}) {
    std::string health = status["shards"][i].value("health", "");
    EXPECT_TRUE(health == "ok" || health == "cluster_fail") << status["shards"][i].dump();
  }

  auto down = OnDeployment("down");
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_NE(down.out.find("2 shard(s) stopped from the pid files"), std::string::npos)
      << down.Describe();
  for (pid_t pid : pids) EXPECT_FALSE(IsAlive(pid)) << "shard pid " << pid << " survived down";
  ExpectNothingRunning("after down without a supervisor");
}

// A supervisor that holds its lock but answers nothing (SIGSTOP here; a hang looks the same)
// heals nothing: status says so with exit 1, and down does not wait on it.
TEST_F(LifecycleTest, AFrozenSupervisorIsReportedAndDownDoesNotWaitForIt) {
  json healthy = UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  std::vector<pid_t> pids = ShardPids(healthy);
  pid_t supervisor = SupervisorPid(healthy);
  ASSERT_GT(supervisor, 0) << healthy.dump(2);
  ASSERT_EQ(kill(supervisor, SIGSTOP), 0);

  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 1) << status.dump(2);
  EXPECT_EQ(status["supervisor"].value("answering", true), false) << status.dump(2);
  auto human = OnDeployment("status");
  EXPECT_EQ(human.exit_code, 1) << human.Describe();
  EXPECT_NE(human.out.find("NOT ANSWERING"), std::string::npos) << human.Describe();

  auto down = OnDeployment("down", {}, 30s);
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_LT(down.elapsed, 15s) << "down waited on a frozen supervisor: " << down.Describe();
  EXPECT_NE(down.out.find("the supervisor did not answer"), std::string::npos) << down.Describe();
  EXPECT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 5s));
  for (pid_t pid : pids) EXPECT_FALSE(IsAlive(pid)) << "shard pid " << pid << " survived down";
  ExpectNothingRunning("after down of a frozen supervisor");
}

// Two `up`s racing for one deployment (a retrying script, systemd and an operator): one starts
// it, the other waits for it and then finds it running, both exit 0, and the deployment ends up
// healthy and managed. A few rounds are tried, since the race window is milliseconds wide.
TEST_F(LifecycleTest, ConcurrentUpsLeaveOneHealthyDeployment) {
  for (int round = 0; round < 3 && !HasFailure(); ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto log_of = [&](int i) { return "up-" + std::to_string(round) + "-" + std::to_string(i); };
    std::vector<std::unique_ptr<BackgroundCommand>> ups;
    for (int i = 0; i < 2; ++i) {
      ups.push_back(StartOnDeployment(
          "up", {"--shards", "3", "--base-port", std::to_string(base_port())}, log_of(i)));
    }
    int succeeded = 0;
    std::string outputs;
    for (int i = 0; i < 2; ++i) {
      std::string log = log_of(i);
      std::optional<int> code = ups[i]->WaitForExit(60s);
      ASSERT_TRUE(code) << "up " << i << " hangs";
      std::string err = ReadFileText(scratch_dir() / (log + ".err"));
      outputs += "up " + std::to_string(i) + ": exit " + std::to_string(*code) + "\n" +
                 ReadFileText(scratch_dir() / (log + ".out")) + err;
      succeeded += *code == 0;
      if (*code != 0) {  // lost the race: says so, touches nothing
        EXPECT_EQ(*code, 1) << err;
        EXPECT_TRUE(err.find("already has a supervisor") != std::string::npos ||
                    err.find("in use") != std::string::npos)
            << err;
      }
    }
    EXPECT_EQ(succeeded, 2) << outputs;
    int code = -1;
    json status = Status(&code);
    EXPECT_EQ(code, 0) << "the deployment is not healthy after two concurrent ups:\n"
                       << outputs << status.dump(2);
    auto down = OnDeployment("down");
    EXPECT_EQ(down.exit_code, 0) << down.Describe();
    ExpectNothingRunning("after down of a deployment two ups raced for\n" + outputs);
  }
}

class ForegroundSignalTest : public LifecycleTest, public ::testing::WithParamInterface<int> {};

TEST_P(ForegroundSignalTest, StopsEveryShardAndExitsZero) {
  const int signal_number = GetParam();
  auto up_process = StartOnDeployment(
      "up", {"--foreground", "--shards", "2", "--base-port", std::to_string(base_port())}, "up");
  BackgroundCommand& up = *up_process;
  std::optional<json> status;
  int code = -1;
  bool healthy = WaitUntil(
      [&] {
        if (up.WaitForExit(0ms)) return true;  // ended early: reported below
        status = TryStatus(&code);
        // supervisor.pid is written just after formation, so status can briefly report a
        // running supervisor without its pid: wait for both.
        return code == 0 && status && status->value("cluster_state", "") == "ok" &&
               SupervisorPid(*status) != 0;
      },
      60s, 50ms);
  ASSERT_TRUE(healthy && !up.WaitForExit(0ms))
      << "foreground up did not become healthy\n"
      << ReadFileText(scratch_dir() / "up.out") << ReadFileText(scratch_dir() / "up.err");
  EXPECT_EQ(SupervisorPid(*status), up.pid()) << "--foreground must supervise in-process";
  std::vector<pid_t> pids = ShardPids(*status);

  ASSERT_EQ(kill(up.pid(), signal_number), 0);
  std::optional<int> exit_code = up.WaitForExit(30s);
  ASSERT_TRUE(exit_code) << "up --foreground ignored signal " << signal_number;
  EXPECT_EQ(*exit_code, 0) << ReadFileText(scratch_dir() / "up.err");
  EXPECT_NE(ReadFileText(scratch_dir() / "up.out").find("running in the foreground"),
            std::string::npos);
  for (pid_t pid : pids) EXPECT_FALSE(IsAlive(pid)) << "shard pid " << pid << " survived";
  ExpectNothingRunning("after signal " + std::to_string(signal_number));
  json after = Status(&code);
  EXPECT_EQ(code, 2) << after.dump(2);
  EXPECT_EQ(after["supervisor"].value("running", true), false);
}

std::string SignalName(const ::testing::TestParamInfo<int>& param) {
  return param.param == SIGTERM ? "SIGTERM" : "SIGINT";
}

INSTANTIATE_TEST_SUITE_P(Signals, ForegroundSignalTest, ::testing::Values(SIGTERM, SIGINT),
                         SignalName);

TEST_F(LifecycleTest, CtrlCDuringUpStopsWhatWasStarted) {
  auto up_process =
      StartOnDeployment("up", {"--shards", "3", "--base-port", std::to_string(base_port())}, "up");
  BackgroundCommand& up = *up_process;
  // Formation takes about 2 s after the shards spawn: interrupt inside that window.
  bool spawned =
      WaitUntil([&] { return fs::exists(deployment_dir() / "shards" / "2" / "pid"); }, 20s, 2ms);
  ASSERT_TRUE(spawned) << ReadFileText(scratch_dir() / "up.err");
  ASSERT_EQ(kill(up.pid(), SIGINT), 0);
  std::optional<int> exit_code = up.WaitForExit(30s);
  ASSERT_TRUE(exit_code) << "up ignored SIGINT";
  std::string err = ReadFileText(scratch_dir() / "up.err");
  EXPECT_EQ(*exit_code, 130) << err;  // as every command stopped by Ctrl-C
  EXPECT_NE(err.find("interrupted"), std::string::npos) << err;
  ExpectNothingRunning("after SIGINT during up");
  auto status = OnDeployment("status");
  EXPECT_EQ(status.exit_code, 3) << "a failed up must not leave a deployment behind\n"
                                 << status.Describe();
}

}  // namespace
}  // namespace shardctl::integration
