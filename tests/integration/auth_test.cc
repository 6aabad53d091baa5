// `up --password-file`: every shard, the proxy and every shardctl command log in with one
// password that never appears on a command line; the state is its owner's alone; a password file
// others can read, and a bind beyond loopback without a password, are refused leaving nothing.
#include <sys/stat.h>

#include <fstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassword = "b7e1c0ffee5ecret";

class AuthTest : public ShardctlTest {
 protected:
  int ProxyPort() const { return base_port() + 40; }

  fs::path WritePasswordFile(const std::string& text, fs::perms perms) {
    fs::path path = scratch_dir() / "pass";
    std::ofstream(path) << text;
    fs::permissions(path, perms);
    return path;
  }
  fs::path OwnerOnly(const std::string& text) {
    return WritePasswordFile(text, fs::perms::owner_read | fs::perms::owner_write);
  }

  // redis-cli logged in with the password; `input` (commands, one per line) goes to its stdin.
  CommandResult Cli(int port, const std::vector<std::string>& args, bool cluster = false,
                    const std::string& input = "") {
    std::string command = "redis-cli --no-auth-warning -a " + std::string(kPassword) +
                          (cluster ? " -c" : "") + " -p " + std::to_string(port);
    for (const auto& arg : args) command += " " + arg;
    if (!input.empty()) {
      const fs::path file = scratch_dir() / "input.txt";
      std::ofstream(file) << input;
      command += " < " + file.string();
    }
    return RunCommand({"sh", "-c", command}, 60s);
  }

  static std::string ModeOf(const fs::path& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return "missing";
    char text[8];
    snprintf(text, sizeof text, "%04o", info.st_mode & 07777);
    return text;
  }
};

TEST_F(AuthTest, EveryShardTheProxyAndEveryCommandUseThePassword) {
  const fs::path pass = OwnerOnly("# the shards' password\n" + std::string(kPassword) + "\n");
  auto up = Up(3, {"--replicas", "1", "--password-file", pass.string(), "--proxy-port",
                   std::to_string(ProxyPort()), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();

  // Without the password every shard and the proxy refuse; with it they serve.
  for (int port : {base_port(), base_port() + 5, ProxyPort()}) {
    auto refused = QueryRedis(port, {"GET", "k"});
    ASSERT_TRUE(refused) << port;
    EXPECT_EQ(refused->kind, RedisReply::Kind::kError) << port;
    EXPECT_EQ(refused->text.rfind("NOAUTH", 0), 0u) << port << ": " << refused->text;
  }
  EXPECT_NE(Cli(base_port() + 4, {"CLUSTER", "INFO"}).out.find("cluster_state:ok"),
            std::string::npos);
  auto role = Cli(base_port() + 3, {"ROLE"});  // a replica: it logged in to its primary
  EXPECT_NE(role.out.find("connected"), std::string::npos) << role.Describe();
  EXPECT_EQ(Cli(ProxyPort(), {"SET", "through-proxy", "1"}).out, "OK\n");

  // The password is in no command line and no record but the owner-only files that need it.
  const std::vector<RecordedProcess> processes = PidFilesUnder(state_root());
  ASSERT_GE(processes.size(), 7u);  // 6 shards, the supervisor, the proxy
  for (const auto& process : processes) {
    const std::string cmdline = ReadFileText("/proc/" + std::to_string(process.pid) + "/cmdline");
    EXPECT_FALSE(cmdline.empty()) << process.pid;
    EXPECT_EQ(cmdline.find(kPassword), std::string::npos) << process.pid << ": " << cmdline;
  }
  EXPECT_EQ(ReadFileText(deployment_dir() / "deployment.json").find(kPassword), std::string::npos);
  EXPECT_EQ(ModeOf(deployment_dir()), "0700");
  for (const fs::path& file :
       {deployment_dir() / "password", deployment_dir() / "proxy.auth",
        deployment_dir() / "shards/0/redis.conf", deployment_dir() / "deployment.json"}) {
    EXPECT_EQ(ModeOf(file), "0600") << file;
  }
  EXPECT_NE(ReadFileText(deployment_dir() / "shards/0/redis.conf").find("masterauth"),
            std::string::npos);

  // Later commands read the password from the state dir: status, a scale that moves keys with
  // MIGRATE (the source logs in to the target), and `up` of the same spec.
  std::string sets;
  for (int i = 0; i < 300; ++i)
    sets += "SET key:" + std::to_string(i) + " v" + std::to_string(i) + "\n";
  ASSERT_EQ(Cli(base_port(), {}, /*cluster=*/true, sets).exit_code, 0);
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0);
  auto scaled = OnDeployment("scale", {"--shards", "4", "--json"});
  ASSERT_EQ(scaled.exit_code, 0) << scaled.Describe();
  std::string gets;
  for (int i = 0; i < 300; ++i) gets += "GET key:" + std::to_string(i) + "\n";
  auto read = Cli(base_port(), {}, /*cluster=*/true, gets);
  std::vector<std::string> values;  // redis-cli -c also prints "-> Redirected to slot ..."
  for (const auto& line : SplitLines(read.out)) {
    if (!line.starts_with("-> ")) values.push_back(line);
  }
  ASSERT_EQ(values.size(), 300u) << read.Describe();
  for (int i = 0; i < 300; ++i) EXPECT_EQ(values[i], "v" + std::to_string(i));
  auto four = Cli(base_port() + 6, {"CLUSTER", "COUNTKEYSINSLOT", "0"});  // a new primary answers
  EXPECT_EQ(four.exit_code, 0) << four.Describe();

  // The same spec again changes nothing; another password is a difference, never shown.
  auto other = OwnerOnly("another-password\n");
  auto again = Up(4, {"--replicas", "1", "--password-file", other.string(), "--proxy-port",
                      std::to_string(ProxyPort()), "--proxy-threads", "1"});
  EXPECT_EQ(again.exit_code, 2) << again.Describe();
  EXPECT_NE(again.err.find("password-file: holds another password"), std::string::npos)
      << again.Describe();
  EXPECT_EQ(again.err.find("another-password"), std::string::npos) << again.Describe();

  // bench logs in too; a wrong password is one clear line.
  auto bench =
      Shardctl({"bench", "run", "--cluster", "127.0.0.1:" + std::to_string(base_port()),
                "--password-file", other.string(), "--requests", "100", "--connections", "1"});
  EXPECT_NE(bench.exit_code, 0);
  EXPECT_NE(bench.err.find("WRONGPASS"), std::string::npos) << bench.Describe();
  OwnerOnly(std::string(kPassword) + "\n");
  auto good =
      Shardctl({"bench", "run", "--json", "--cluster", "127.0.0.1:" + std::to_string(base_port()),
                "--password-file", pass.string(), "--requests", "2000", "--connections", "2"});
  ASSERT_EQ(good.exit_code, 0) << good.Describe();
  EXPECT_NE(good.out.find("\"errors\": 0"), std::string::npos) << good.out;
}

TEST_F(AuthTest, UnsafeSettingsAreRefusedLeavingNothing) {
  auto readable = WritePasswordFile(std::string(kPassword) + "\n",
                                    fs::perms::owner_read | fs::perms::owner_write |
                                        fs::perms::group_read | fs::perms::others_read);
  auto shared = Up(2, {"--password-file", readable.string()});
  EXPECT_EQ(shared.exit_code, 2) << shared.Describe();
  EXPECT_NE(shared.err.find("the group or others may access it (it holds a password: chmod 600 " +
                            readable.string() + ")"),
            std::string::npos)
      << shared.Describe();

  auto open = Up(2, {"--bind", "0.0.0.0"});
  EXPECT_EQ(open.exit_code, 2) << open.Describe();
  EXPECT_NE(open.err.find("--bind: 0.0.0.0 is reachable from other hosts"), std::string::npos)
      << open.Describe();
  auto empty = Up(2, {"--password-file", OwnerOnly("\n# nothing\n").string()});
  EXPECT_EQ(empty.exit_code, 2) << empty.Describe();
  EXPECT_NE(empty.err.find("holds no password"), std::string::npos) << empty.Describe();
  EXPECT_FALSE(fs::exists(deployment_dir() / "deployment.json"));
  ExpectNothingRunning("after refused starts");

  // A proxy's auth file others can read is refused too.
  auto proxy = RunCommand({SHARDPROXY_BINARY, "--cluster", "127.0.0.1:1", "--auth-file",
                           WritePasswordFile("requirepass x\n", fs::perms::all).string()},
                          10s);
  EXPECT_EQ(proxy.exit_code, 2) << proxy.Describe();
  EXPECT_NE(proxy.err.find("the group or others may access it"), std::string::npos)
      << proxy.Describe();
}

}  // namespace
}  // namespace shardctl::integration
