// shardproxy's passwords (--auth-file): clients must log in when the file has users, the proxy
// logs in to password-protected shards with backend-password, and a listener beyond loopback
// without a password is refused.
#include <signal.h>

#include <fstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class ProxyAuthTest : public ShardctlTest {
 protected:
  void TearDown() override {
    StopProxy();
    ShardctlTest::TearDown();
  }

  int ProxyPort() const { return base_port() + 45; }

  fs::path WriteAuthFile(const std::string& text) {
    fs::path path = scratch_dir() / "auth.conf";
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
    return path;
  }

  // Starts shardproxy and waits until it answers (NOAUTH counts as an answer).
  void StartProxy(int cluster_port, const fs::path& auth_file) {
    proxy_ = std::make_unique<BackgroundCommand>(
        std::vector<std::string>{SHARDPROXY_BINARY, "--cluster",
                                 "127.0.0.1:" + std::to_string(cluster_port), "--listen",
                                 "127.0.0.1:" + std::to_string(ProxyPort()), "--threads", "1",
                                 "--auth-file", auth_file.string()},
        scratch_dir() / "proxy.out", scratch_dir() / "proxy.err");
    const bool up = WaitUntil(
        [&] {
          auto reply = QueryRedis(ProxyPort(), {"PING"});
          return reply.has_value() || proxy_->WaitForExit(0ms).has_value();
        },
        10s, 50ms);
    ASSERT_TRUE(up && !proxy_->WaitForExit(0ms)) << ReadFileText(scratch_dir() / "proxy.err");
  }

  void StopProxy() {
    if (!proxy_) return;
    kill(proxy_->pid(), SIGTERM);
    EXPECT_EQ(proxy_->WaitForExit(10s), std::optional<int>(0))
        << ReadFileText(scratch_dir() / "proxy.err");
    proxy_.reset();
  }

  std::unique_ptr<BackgroundCommand> proxy_;
};

TEST_F(ProxyAuthTest, ClientsMustLogInWhenTheProxyHasUsers) {
  auto up = Up(2);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  StartProxy(base_port(), WriteAuthFile("requirepass pw\nuser app app-pw\n"));
  ASSERT_FALSE(HasFailure());
  // One connection through the whole conversation: the login sticks to it.
  CommandResult session = RunCommand(
      {"sh", "-c",
       "printf 'GET k\\r\\nHELLO 3\\r\\nAUTH wrong\\r\\nAUTH pw\\r\\nSET k v\\r\\nGET k\\r\\n"
       "RESET\\r\\nGET k\\r\\nHELLO 3 AUTH app app-pw\\r\\nGET k\\r\\n' | "
       "redis-cli -p " +
           std::to_string(ProxyPort())},
      20s);
  ASSERT_EQ(session.exit_code, 0) << session.Describe();
  const auto lines = SplitLines(session.out);
  ASSERT_GE(lines.size(), 9u) << session.out;
  EXPECT_EQ(lines[0], "NOAUTH Authentication required.");
  EXPECT_EQ(lines[1].rfind("NOAUTH HELLO must be called", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2], "WRONGPASS invalid username-password pair or user is disabled.");
  EXPECT_EQ(lines[3], "OK");
  EXPECT_EQ(lines[4], "OK");
  EXPECT_EQ(lines[5], "v");
  EXPECT_EQ(lines[6], "RESET");
  EXPECT_EQ(lines[7], "NOAUTH Authentication required.");
  EXPECT_NE(session.out.find("proto"), std::string::npos) << session.out;  // the HELLO map
  EXPECT_EQ(lines.back(), "v");
}

TEST_F(ProxyAuthTest, TheProxyLogsInToPasswordProtectedShards) {
  // A one-node cluster with a password, which shardctl itself does not configure.
  const int port = base_port();
  TempDir data;
  BackgroundCommand server(
      {"redis-server", "--port", std::to_string(port), "--bind", "127.0.0.1", "--cluster-enabled",
       "yes", "--cluster-config-file", (data.path() / "nodes.conf").string(), "--dir",
       data.path().string(), "--requirepass", "shard-secret", "--save", "", "--appendonly", "no"},
      data.path() / "out", data.path() / "err");
  auto cli = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"redis-cli",         "-p", std::to_string(port),
                                     "--no-auth-warning", "-a", "shard-secret"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, 10s);
  };
  ASSERT_TRUE(WaitUntil([&] { return cli({"PING"}).out == "PONG\n"; }, 10s, 50ms));
  ASSERT_EQ(cli({"CLUSTER", "ADDSLOTSRANGE", "0", "16383"}).out, "OK\n");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return cli({"CLUSTER", "INFO"}).out.find("cluster_state:ok") != std::string::npos;
      },
      10s, 50ms));

  // A wrong backend password: the proxy does not start, and never prints the password.
  CommandResult refused =
      RunCommand({SHARDPROXY_BINARY, "--cluster", "127.0.0.1:" + std::to_string(port), "--listen",
                  "127.0.0.1:" + std::to_string(ProxyPort()), "--auth-file",
                  WriteAuthFile("backend-password not-it\n").string()},
                 15s);
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(refused.err.find("login refused"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("not-it"), std::string::npos) << "the password was printed";

  StartProxy(port, WriteAuthFile("backend-password shard-secret\n"));
  ASSERT_FALSE(HasFailure());
  auto set = QueryRedis(ProxyPort(), {"MSET", "a", "1", "b", "2", "c", "3"});
  ASSERT_TRUE(set);
  EXPECT_EQ(set->text, "OK");
  auto get = QueryRedis(ProxyPort(), {"MGET", "c", "a"});
  ASSERT_TRUE(get);
  ASSERT_EQ(get->elements.size(), 2u);
  EXPECT_EQ(get->elements[0].text, "3");
  auto info = QueryRedis(ProxyPort(), {"INFO"});
  ASSERT_TRUE(info);
  EXPECT_EQ(info->text.find("shard-secret"), std::string::npos);
  StopProxy();
  kill(server.pid(), SIGTERM);
  EXPECT_TRUE(server.WaitForExit(10s).has_value());
}

TEST_F(ProxyAuthTest, ListeningBeyondLoopbackWithoutAPasswordIsRefused) {
  CommandResult refused = RunCommand({SHARDPROXY_BINARY, "--cluster", "127.0.0.1:1", "--listen",
                                      "0.0.0.0:" + std::to_string(ProxyPort())},
                                     10s);
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find("refusing to listen on 0.0.0.0:" + std::to_string(ProxyPort()) +
                             " without a client password"),
            std::string::npos)
      << refused.err;
  CommandResult missing = RunCommand(
      {SHARDPROXY_BINARY, "--cluster", "127.0.0.1:1", "--auth-file", "/nonexistent/auth.conf"},
      10s);
  EXPECT_EQ(missing.exit_code, 2) << missing.Describe();
  EXPECT_NE(missing.err.find("--auth-file /nonexistent/auth.conf: cannot read it"),
            std::string::npos)
      << missing.err;
}

}  // namespace
}  // namespace shardctl::integration
