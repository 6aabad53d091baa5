// The supervisor heals: crashed shards come back as themselves, crash loops back off, hung shards
// are noticed and replaced, a crashed supervisor is replaced without touching the shards, and
// operators restart shards on purpose (one, or rolling with an engine switch).
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/slots.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/data_lock.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class HealingTest : public ShardctlTest {
 protected:
  json UpHealthy(int shards, const std::vector<std::string>& extra = {}) {
    auto up = Up(shards, extra);
    EXPECT_EQ(up.exit_code, 0) << up.Describe();
    int code = -1;
    json status = Status(&code);
    EXPECT_EQ(code, 0) << status.dump(2);
    return status;
  }

  json Shard(int index) { return Status()["shards"][index]; }

  // SIGSTOPs shard 0 (a primary) until a peer marks it failed and the supervisor's fail check
  // has had its ticks, then SIGCONTs it: it must have been left alive and resume with `before`.
  void ExpectAStoppedPrimaryKeptAlive(int nodes, const std::map<int, long long>& before,
                                      const std::string& which) {
    const pid_t stopped = PidOf(0);
    ASSERT_EQ(kill(stopped, SIGSTOP), 0);
    const bool marked = WaitUntil(
        [&] {
          auto listing = QueryRedis(base_port() + 1, {"CLUSTER", "NODES"});
          return listing && listing->text.find("master,fail ") != std::string::npos;
        },
        10s, 50ms);
    std::this_thread::sleep_for(4s);  // the fail check runs every health tick once silent
    const bool alive = IsAlive(stopped);
    kill(stopped, SIGCONT);
    ASSERT_TRUE(marked) << "no peer marked the stopped primary failed";
    EXPECT_TRUE(alive) << "the supervisor killed a primary " << which;
    EXPECT_TRUE(WaitUntil([&] { return EveryNodeOk(nodes); }, 20s));
    EXPECT_EQ(PidOf(0), stopped);
    EXPECT_EQ(KeysOnPrimaries(), before) << "keys were lost";
  }

  pid_t PidOf(int index) {
    json pid = Shard(index)["pid"];
    return pid.is_number_integer() ? pid.get<pid_t>() : 0;
  }

  bool EveryNodeOk(int shards) {
    for (int i = 0; i < shards; ++i) {
      auto reply = QueryRedis(base_port() + i, {"CLUSTER", "INFO"});
      if (!reply || reply->text.find("cluster_state:ok") == std::string::npos) return false;
    }
    return true;
  }

  // Waits until shard `index` runs as a process other than `old_pid`, answers, and every node
  // reports cluster_state:ok. Returns how long that took.
  std::chrono::milliseconds WaitForRecovery(int index, pid_t old_pid, int shards,
                                            Clock::time_point since) {
    bool recovered = WaitUntil(
        [&] {
          pid_t pid = PidOf(index);
          return pid != 0 && pid != old_pid && Shard(index)["health"] == "ok" &&
                 EveryNodeOk(shards);
        },
        30s, 10ms);
    EXPECT_TRUE(recovered) << Status().dump(2);
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since);
  }

  fs::path WriteCrashableEngine() {
    fs::path script = scratch_dir() / "crashable-redis-server";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "if [ -e " << (scratch_dir() / "crash").string() << " ]; then\n"
                          << "  echo 'crashable-redis-server: refusing to start (test)'; exit 1\n"
                          << "fi\n"
                          << "exec redis-server \"$@\"\n";
    fs::permissions(script, fs::perms::owner_all);
    return script;
  }
};

TEST_F(HealingTest, KilledShardComesBackAsItselfAndTheClusterHeals) {
  json before = UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  json shard = before["shards"][1];
  pid_t old_pid = shard["pid"].get<pid_t>();
  auto killed_at = Clock::now();
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  auto took = WaitForRecovery(1, old_pid, 3, killed_at);
  std::cout << "[ measure  ] kill -9 -> shard restarted and every node cluster_state:ok: "
            << took.count() << " ms\n";
  json after = Shard(1);
  EXPECT_EQ(after["node_id"], shard["node_id"]) << "the shard came back with a new node ID";
  EXPECT_EQ(after["port"], shard["port"]);
  EXPECT_EQ(after["cpus"], shard["cpus"]);
  EXPECT_EQ(after["pinned_cpus"], shard["cpus"]) << after.dump(2);
  EXPECT_EQ(after["numa_node"], shard["numa_node"]);
  EXPECT_EQ(after["restarts"], 1) << after.dump(2);
  EXPECT_NE(after["last_exit"].get<std::string>().find("signal 9"), std::string::npos)
      << after.dump(2);
  EXPECT_EQ(ProcStatusField(after["pid"].get<pid_t>(), "Cpus_allowed_list"),
            std::to_string(shard["cpus"][0].get<int>()));
}

TEST_F(HealingTest, CrashLoopBacksOffAndRecoversWhenTheCauseIsGone) {
  fs::path engine = WriteCrashableEngine();
  UpHealthy(3, {"--engine", engine.string()});
  ASSERT_FALSE(HasFailure());
  pid_t supervisor = Status()["supervisor"]["pid"].get<pid_t>();
  std::ofstream(scratch_dir() / "crash") << "1";
  pid_t old_pid = PidOf(2);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return Shard(2)["health"] == "crashloop"; }, 10s))
      << Status().dump(2);
  json looping = Shard(2);
  EXPECT_NE(looping["last_exit"].get<std::string>().find("status 1"), std::string::npos)
      << looping.dump(2);
  EXPECT_NE(looping.value("log_tail", "").find("refusing to start"), std::string::npos)
      << looping.dump(2);
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 1) << "a crash-looping shard makes the deployment degraded";

  // Backoff: 0, 250, 500, 1000, 2000 ms... so in 3 more seconds only a handful of attempts.
  int restarts_then = Shard(2)["restarts"].get<int>();
  std::this_thread::sleep_for(3s);
  int attempts = Shard(2)["restarts"].get<int>() - restarts_then;
  EXPECT_LE(attempts, 3) << "restarts are not backing off";
  auto stat = SplitLines(ReadFileText("/proc/" + std::to_string(supervisor) + "/stat"));
  ASSERT_FALSE(stat.empty());
  std::istringstream fields(stat[0].substr(stat[0].rfind(')') + 2));
  std::string field;
  long long ticks = 0;
  for (int i = 3; i <= 15; ++i) {
    fields >> field;
    if (i == 14 || i == 15) ticks += std::stoll(field);  // utime + stime
  }
  EXPECT_LT(ticks, 2 * sysconf(_SC_CLK_TCK)) << "the supervisor is spinning a core";

  // Fixed: an operator's restart skips the remaining backoff.
  fs::remove(scratch_dir() / "crash");
  auto restart = OnDeployment("restart", {"2"});
  EXPECT_EQ(restart.exit_code, 0) << restart.Describe();
  EXPECT_TRUE(WaitUntil([&] { return Shard(2)["health"] == "ok" && EveryNodeOk(3); }, 20s))
      << Status().dump(2);
}

TEST_F(HealingTest, HungShardIsReportedThenReplaced) {
  UpHealthy(3, {"--health-timeout", "1s", "--hang-grace", "2s"});
  ASSERT_FALSE(HasFailure());
  pid_t hung = PidOf(0);
  auto stopped_at = Clock::now();
  ASSERT_EQ(kill(hung, SIGSTOP), 0);
  EXPECT_TRUE(WaitUntil([&] { return Shard(0)["health"] == "unresponsive"; }, 5s))
      << Status().dump(2);
  auto noticed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped_at);
  std::cout << "[ measure  ] SIGSTOP -> reported unresponsive: " << noticed.count() << " ms\n";
  auto took = WaitForRecovery(0, hung, 3, stopped_at);
  std::cout << "[ measure  ] SIGSTOP -> killed, restarted, cluster ok: " << took.count() << " ms\n";
  EXPECT_FALSE(IsAlive(hung)) << "the hung process was not killed";
}

// The early kill of a silent primary the cluster marked failed exists so a replaced primary
// cannot acknowledge writes it will drop; with no replica to replace it, it would only lose keys.
// So such a primary is left alone until its hang grace, and resumes with every key.
TEST_F(HealingTest, AStoppedPrimaryNoReplicaCanReplaceIsNotKilledWhenMarkedFailed) {
  UpHealthy(3, {"--health-timeout", "1s", "--hang-grace", "60s", "--cluster-node-timeout", "1s"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  ExpectAStoppedPrimaryKeptAlive(3, before, "no replica could replace");
}

// The same with a replica that cannot replace it: restarted, it is still waiting for its first
// full sync (held back by repl-diskless-sync-delay on the primary), so it holds none of the keys.
TEST_F(HealingTest, AStoppedPrimaryWhoseReplicaHasNotSyncedIsNotKilledWhenMarkedFailed) {
  UpHealthy(3, {"--replicas", "1", "--health-timeout", "1s", "--hang-grace", "60s",
                "--cluster-node-timeout", "1s"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  const int replica_port = Status()["shards"][3]["port"].get<int>();  // shard 3 replicates 0
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"repl-diskless-sync", "yes"}, {"repl-diskless-sync-delay", "60"}}) {
    auto set = QueryRedis(base_port(), {"CONFIG", "SET", name, value});
    ASSERT_TRUE(set && set->text == "OK") << name;
  }
  // Without the snapshot its last full sync left, the restarted replica cannot resync partially.
  std::filesystem::remove(deployment_dir() / "shards" / "3" / "dump.rdb");
  const pid_t replica = PidOf(3);
  ASSERT_EQ(kill(replica, SIGKILL), 0);
  auto replication = [&](const std::string& field) {
    auto info = QueryRedis(replica_port, {"INFO", "replication"});
    const std::string text = info ? info->text : "";
    const size_t at = text.find(field + ":");
    if (at == std::string::npos) return std::string();
    const size_t from = at + field.size() + 1;
    return text.substr(from, text.find('\r', from) - from);
  };
  ASSERT_TRUE(WaitUntil(
      [&] {
        return PidOf(3) != replica && replication("master_port") == std::to_string(base_port()) &&
               replication("master_link_down_since_seconds") == "-1";
      },
      20s))
      << replication("master_port") << " " << replication("master_link_down_since_seconds");

  ExpectAStoppedPrimaryKeptAlive(6, before, "whose replica holds none of its keys");
  const std::string log = ReadFileText(deployment_dir() / "supervisor.log");
  EXPECT_NE(log.find("none that has finished a sync with it"), std::string::npos) << log;
}

// A replica a placed restore holds from failing over (cluster-replica-no-failover yes, while the
// restore holds the restart lock) is not promoted when its primary dies: it has not resynced
// from the primary's new data, and the primary comes back with its own files (a sweep saw an
// empty replica take the slots of a primary killed just after its placed load). The same setting
// without a restore running (left by a killed one, or set by hand) does not stop the takeover:
// the replica's copy is worth more than a primary that may come back empty.
TEST_F(HealingTest, AReplicaARestoreHoldsIsNotPromotedWhenItsPrimaryDies) {
  UpHealthy(3, {"--replicas", "1", "--persistence", "rdb"});
  ASSERT_FALSE(HasFailure());
  WriteKeys(300);
  const auto before = KeysOnPrimaries();
  const int replica_port = Status()["shards"][3]["port"].get<int>();  // shard 3 replicates 0
  auto role_of_replica = [&] {
    auto role = QueryRedis(replica_port, {"ROLE"});
    return role && !role->elements.empty() ? role->elements[0].text : std::string();
  };
  ASSERT_EQ(role_of_replica(), "slave");
  auto saved = QueryRedis(base_port(), {"SAVE"});
  ASSERT_TRUE(saved && saved->text == "OK");
  auto held = QueryRedis(replica_port, {"CONFIG", "SET", "cluster-replica-no-failover", "yes"});
  ASSERT_TRUE(held && held->text == "OK");
  {
    const launcher::DeploymentDir dir(state_root(), name());
    auto restoring = launcher::DataLock::Take(dir, "restore", launcher::DataLock::Kind::kRestarts);
    ASSERT_TRUE(restoring.ok()) << restoring.error().message();
    const pid_t old_pid = PidOf(0);
    ASSERT_EQ(kill(old_pid, SIGKILL), 0);
    WaitForRecovery(0, old_pid, 6, Clock::now());
    EXPECT_EQ(role_of_replica(), "slave") << "the held replica was promoted";
    EXPECT_EQ(KeysOnPrimaries(), before) << "keys were lost";
    const std::string log = ReadFileText(deployment_dir() / "supervisor.log");
    EXPECT_NE(log.find("a placed restore holds it from failing over"), std::string::npos) << log;
  }
  const pid_t old_pid = PidOf(0);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  WaitForRecovery(0, old_pid, 6, Clock::now());
  EXPECT_EQ(role_of_replica(), "master") << "no restore runs: the replica takes over\n"
                                         << ReadFileText(deployment_dir() / "supervisor.log");
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), TotalKeys(before)) << "keys were lost";
}

// Without persistence a crashed shard starts empty. A snapshot `restart` carried and left in the
// shard's directory (the command, or the supervisor, killed after its SAVE: found by a sweep with
// kill -9 and SIGHUP) used to be loaded at the next crash: acknowledged writes reverted, deleted
// keys back, and `status` healthy. Here the SAVE is asked by hand, as `restart` does. At a crash
// the snapshot is deleted; at `up` after the supervisor died too, one the shard's last process
// had already loaded (older than its pid file) is.
TEST_F(HealingTest, ACrashDoesNotLoadASnapshotARestartLeftBehind) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  const int port = base_port();  // shard 0 owns slot 100
  const std::string tag = "{" + std::string(common::TagForSlot(100)) + "}:";
  auto run = [&](std::vector<std::string> command) { return QueryRedis(port, command); };
  const auto snapshot = deployment_dir() / "shards" / "0" / "dump.rdb";
  ASSERT_TRUE(run({"SET", tag + "kept-as", "old"}));
  ASSERT_TRUE(run({"SET", tag + "deleted", "old"}));
  ASSERT_EQ(run({"SAVE"})->text, "OK");
  ASSERT_TRUE(fs::exists(snapshot));
  ASSERT_TRUE(run({"SET", tag + "kept-as", "new"}));
  ASSERT_EQ(run({"DEL", tag + "deleted"})->integer, 1);
  auto other = QueryRedis(base_port() + 1, {"DBSIZE"});
  ASSERT_TRUE(other);

  pid_t old_pid = PidOf(0);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  WaitForRecovery(0, old_pid, 2, Clock::now());
  EXPECT_EQ(run({"EXISTS", tag + "deleted"})->integer, 0) << "a deleted key came back";
  EXPECT_NE(run({"GET", tag + "kept-as"})->text, "old") << "a write was reverted";
  EXPECT_EQ(run({"DBSIZE"})->integer, 0) << "without persistence a crash starts it empty";
  EXPECT_FALSE(fs::exists(snapshot));
  EXPECT_EQ(QueryRedis(base_port() + 1, {"DBSIZE"})->integer, other->integer);

  // While the restart that saved it runs (its marker names a live process, here this test), the
  // snapshot is the shard's data and is loaded (a restart whose new engine crashes rolls back
  // with it).
  const auto marker = deployment_dir() / "shards" / "0" / "restart.pid";
  ASSERT_TRUE(launcher::WriteProcessId(marker, *launcher::IdentifyProcess(getpid())).ok());
  ASSERT_TRUE(run({"SET", tag + "carried", "yes"}));
  ASSERT_EQ(run({"SAVE"})->text, "OK");
  old_pid = PidOf(0);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  WaitForRecovery(0, old_pid, 2, Clock::now());
  EXPECT_EQ(run({"GET", tag + "carried"})->text, "yes") << "the carried snapshot was not loaded";
  fs::remove(marker);
  ASSERT_EQ(run({"FLUSHALL"})->text, "OK");
  fs::remove(snapshot);

  // The supervisor gone too: a snapshot older than the shard's last start is not loaded by `up`.
  ASSERT_TRUE(run({"SET", tag + "deleted", "old"}));
  ASSERT_EQ(run({"SAVE"})->text, "OK");
  fs::last_write_time(snapshot, fs::last_write_time(snapshot) - std::chrono::hours(1));
  ASSERT_EQ(run({"DEL", tag + "deleted"})->integer, 1);
  const pid_t supervisor = Status()["supervisor"]["pid"].get<pid_t>();
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 5s));
  old_pid = PidOf(0);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(old_pid); }, 5s));
  auto adopt = Up(2);
  ASSERT_EQ(adopt.exit_code, 0) << adopt.Describe();
  WaitForRecovery(0, old_pid, 2, Clock::now());
  EXPECT_EQ(run({"EXISTS", tag + "deleted"})->integer, 0) << "a deleted key came back";
  EXPECT_FALSE(fs::exists(snapshot));
  EXPECT_EQ(QueryRedis(base_port() + 1, {"DBSIZE"})->integer, other->integer);
}

TEST_F(HealingTest, SupervisorCrashLeavesShardsServingAndUpAdoptsThem) {
  json before = UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  auto set =
      RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "set", "k", "v"}, 10s);
  ASSERT_EQ(set.exit_code, 0) << set.Describe();
  pid_t supervisor = before["supervisor"]["pid"].get<pid_t>();
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !IsAlive(supervisor); }, 5s));

  int code = -1;
  json orphaned = Status(&code);
  EXPECT_EQ(code, 1) << orphaned.dump(2);
  EXPECT_EQ(orphaned["supervisor"]["running"], false);
  EXPECT_EQ(orphaned["cluster_state"], "ok");
  auto get = RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "get", "k"}, 10s);
  EXPECT_EQ(get.out, "v\n") << get.Describe();

  auto adopt = Up(3);
  EXPECT_EQ(adopt.exit_code, 0) << adopt.Describe();
  EXPECT_NE(adopt.out.find("adopted 3 running shards"), std::string::npos) << adopt.Describe();
  json adopted = Status(&code);
  EXPECT_EQ(code, 0) << adopted.dump(2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(adopted["shards"][i]["pid"], before["shards"][i]["pid"]) << "shard restarted";
    EXPECT_EQ(adopted["shards"][i]["adopted"], true);
  }
  get = RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "get", "k"}, 10s);
  EXPECT_EQ(get.out, "v\n") << "the key was lost: " << get.Describe();

  // The new supervisor heals the adopted shards too.
  pid_t old_pid = adopted["shards"][2]["pid"].get<pid_t>();
  auto killed_at = Clock::now();
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  WaitForRecovery(2, old_pid, 3, killed_at);
}

TEST_F(HealingTest, RestartOneAndRollingWithEngineSwitch) {
  json before = UpHealthy(3);
  ASSERT_FALSE(HasFailure());
  auto one = OnDeployment("restart", {"1", "--json"});
  ASSERT_EQ(one.exit_code, 0) << one.Describe();
  json result = json::parse(one.out);
  EXPECT_EQ(result["restarted"][0]["old_pid"], before["shards"][1]["pid"]);
  json after_one = Status();
  EXPECT_NE(after_one["shards"][1]["pid"], before["shards"][1]["pid"]);
  EXPECT_EQ(after_one["shards"][1]["node_id"], before["shards"][1]["node_id"]);
  EXPECT_EQ(after_one["shards"][0]["pid"], before["shards"][0]["pid"]) << "restarted too much";

  auto rolling = OnDeployment("restart", {"--rolling", "--engine", "valkey"});
  ASSERT_EQ(rolling.exit_code, 0) << rolling.Describe();
  EXPECT_EQ(SplitLines(rolling.out).size(), 3u) << rolling.Describe();
  int code = -1;
  json after = Status(&code);
  EXPECT_EQ(code, 0) << after.dump(2);
  EXPECT_EQ(after["engine"], "valkey") << after.dump(2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(after["shards"][i]["node_id"], before["shards"][i]["node_id"]);
    auto info = QueryRedis(base_port() + i, {"INFO", "server"});
    ASSERT_TRUE(info.has_value());
    EXPECT_NE(info->text.find("valkey_version"), std::string::npos) << "shard " << i;
  }

  auto bad = OnDeployment("restart", {"7"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
  EXPECT_NE(bad.err.find("no shard 7"), std::string::npos) << bad.Describe();
}

TEST_F(HealingTest, LogsShowSupervisorAndShardLogs) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  auto supervisor = OnDeployment("logs", {"--lines", "5"});
  EXPECT_EQ(supervisor.exit_code, 0) << supervisor.Describe();
  EXPECT_NE(supervisor.out.find("ready"), std::string::npos) << supervisor.Describe();
  EXPECT_LE(SplitLines(supervisor.out).size(), 5u);
  auto shard = OnDeployment("logs", {"1"});
  EXPECT_EQ(shard.exit_code, 0) << shard.Describe();
  EXPECT_NE(shard.out.find("Ready to accept connections"), std::string::npos) << shard.Describe();
  auto missing = OnDeployment("logs", {"9"});
  EXPECT_EQ(missing.exit_code, 1) << missing.Describe();

  // -f keeps printing what is appended: a restart writes new supervisor lines. It follows from
  // the end it saw before printing the last line, so once that line is out nothing new is missed.
  auto followed = scratch_dir() / "follow.out";
  BackgroundCommand follow({ShardctlBinary(), "logs", "-f", "--lines", "1", "--name", name(),
                            "--state-dir", state_root().string()},
                           followed, scratch_dir() / "follow.err");
  ASSERT_TRUE(WaitUntil([&] { return !ReadFileText(followed).empty(); }, 10s))
      << ReadFileText(scratch_dir() / "follow.err");
  auto restart = OnDeployment("restart", {"0"});
  ASSERT_EQ(restart.exit_code, 0) << restart.Describe();
  EXPECT_TRUE(WaitUntil(
      [&] { return ReadFileText(followed).find("restart of shard 0") != std::string::npos; }, 5s))
      << ReadFileText(followed);
  kill(follow.pid(), SIGTERM);
  EXPECT_TRUE(follow.WaitForExit(5s).has_value());
}

TEST_F(HealingTest, ControlSocketSpeaksJsonLines) {
  UpHealthy(2);
  ASSERT_FALSE(HasFailure());
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string path = (deployment_dir() / "control.sock").string();
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string requests = "{\"cmd\":\"ping\"}\n{\"cmd\":\"fly\"}\nnot json\n{\"cmd\":\"status\"}\n";
  ASSERT_EQ(write(fd, requests.data(), requests.size()), static_cast<ssize_t>(requests.size()));
  std::string replies;
  char buffer[4096];
  while (std::count(replies.begin(), replies.end(), '\n') < 4) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    ASSERT_GT(n, 0) << "got only: " << replies;
    replies.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  auto lines = SplitLines(replies);
  ASSERT_EQ(lines.size(), 4u) << replies;
  EXPECT_EQ(json::parse(lines[0])["ok"], true);
  EXPECT_EQ(json::parse(lines[1])["ok"], false);
  EXPECT_NE(json::parse(lines[1])["error"].get<std::string>().find("unknown command"),
            std::string::npos);
  EXPECT_EQ(json::parse(lines[2])["ok"], false);
  EXPECT_EQ(json::parse(lines[3])["shards"].size(), 2u);
}

}  // namespace
}  // namespace shardctl::integration
