// shardproxy --tls-cert --tls-key --tls-ca: TLS to its clients (redis-cli --tls, redis-py
// ssl=True) and to shards that serve only TLS; --tls-to-shards no for plain shards; client
// certificates with --tls-auth-clients yes. A throwaway CA and certificates from openssl.
#include <sys/stat.h>

#include "tests/integration/proxy_fixture.h"
#include "tests/integration/test_certs.h"

namespace shardctl::integration {
namespace {

class ProxyTlsTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    MakeTestCa(scratch_dir(), "ca");
    MakeTestCa(scratch_dir(), "other-ca");
    MakeTestCertificate(scratch_dir(), "server", "ca");
    MakeTestCertificate(scratch_dir(), "proxy", "ca");
    MakeTestCertificate(scratch_dir(), "client", "ca");
  }
  std::string File(const std::string& name) const { return (scratch_dir() / name).string(); }
  std::vector<std::string> ProxyTlsFlags() const {
    return {"--tls-cert",      File("proxy.crt"), "--tls-key",
            File("proxy.key"), "--tls-ca",        File("ca.crt")};
  }
  // redis-cli -p <proxy> --tls trusting `ca` (no cluster mode: the proxy is one server).
  CommandResult ProxyCli(const std::string& ca, std::vector<std::string> args,
                         std::vector<std::string> client_files = {}) {
    std::vector<std::string> command = {"redis-cli", "-p", std::to_string(proxy_port())};
    if (!ca.empty()) command.insert(command.end(), {"--tls", "--cacert", File(ca)});
    command.insert(command.end(), client_files.begin(), client_files.end());
    command.insert(command.end(), args.begin(), args.end());
    return RunCommand(command, 20s);
  }
  std::function<bool()> AnswersTls(std::vector<std::string> client_files = {}) {
    return
        [this, client_files] { return ProxyCli("ca.crt", {"PING"}, client_files).out == "PONG\n"; };
  }
};

TEST_F(ProxyTlsTest, TlsClientsReachTlsShardsThroughTheProxy) {
  auto up = Up(3, {"--tls-cert", File("server.crt"), "--tls-key", File("server.key"), "--tls-ca",
                   File("ca.crt")});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  StartProxy(ProxyTlsFlags(), AnswersTls());
  EXPECT_NE(ProxyStderr().find("(TLS)"), std::string::npos) << ProxyStderr();

  EXPECT_EQ(ProxyCli("ca.crt", {"MSET", "a", "1", "b", "2", "c", "3", "d", "4"}).out, "OK\n");
  EXPECT_EQ(ProxyCli("ca.crt", {"MGET", "a", "b", "c", "d"}).out, "1\n2\n3\n4\n")
      << "a split MGET over TLS shard connections";
  // redis-py with ssl=True: ~1000 pipelined commands over many slots (RESP2), pub/sub through
  // the subscriber links (RESP3), every reply checked by the script.
  for (const auto& [scenario, protocol] :
       std::vector<std::pair<std::string, int>>{{"pipeline", 2}, {"pubsub", 3}, {"families", 3}}) {
    auto run = RunPythonScenario(scenario, protocol, {"--tls-ca", File("ca.crt")});
    EXPECT_EQ(run.exit_code, 0) << scenario << ": " << run.Describe();
  }

  auto stranger = ProxyCli("other-ca.crt", {"PING"});
  EXPECT_EQ(stranger.out.find("PONG"), std::string::npos) << "another CA: " << stranger.Describe();
  auto plain = QueryRedis(proxy_port(), {"PING"});
  EXPECT_FALSE(plain && plain->text == "PONG") << "plain RESP reached a TLS-only proxy";
  // The refused handshakes are counted, and the proxy still serves.
  auto info = ProxyCli("ca.crt", {"INFO", "proxy"});
  const size_t at = info.out.find("tls_errors:");
  ASSERT_NE(at, std::string::npos) << info.Describe();
  EXPECT_GE(std::stoll(info.out.substr(at + 11)), 2) << info.out;
  EXPECT_EQ(ProxyCli("ca.crt", {"SET", "after", "refusals"}).out, "OK\n");
  EXPECT_EQ(ProxyCli("ca.crt", {"GET", "after"}).out, "refusals\n");

  // Over --max-clients, a TLS client still finishes its handshake and hears why it is refused
  // (it is not left hanging with its socket open).
  StopProxy();
  auto limited = ProxyTlsFlags();
  limited.insert(limited.end(), {"--max-clients", "1"});
  StartProxy(limited, AnswersTls());
  // The one admitted client: an openssl s_client that stays connected. A connection that closed
  // just before (StartProxy's PING) may still hold the place for a moment, refusing the holder
  // itself; a refused holder hears why and exits, and another takes its turn.
  std::unique_ptr<BackgroundCommand> holder;
  int holders = 0;
  auto hold = [&] {
    ++holders;
    return std::make_unique<BackgroundCommand>(
        std::vector<std::string>{"openssl", "s_client", "-connect",
                                 "127.0.0.1:" + std::to_string(proxy_port()), "-CAfile",
                                 File("ca.crt"), "-quiet", "-ign_eof"},
        scratch_dir() / ("holder" + std::to_string(holders) + ".out"),
        scratch_dir() / ("holder" + std::to_string(holders) + ".err"));
  };
  std::string refusal;
  ASSERT_TRUE(WaitUntil(
      [&] {
        if (!holder || holder->WaitForExit(0ms)) holder = hold();
        refusal = ProxyCli("ca.crt", {"PING"}).out;
        return refusal.find("max number of clients") != std::string::npos;
      },
      20s, 100ms))
      << refusal << " (" << holders << " holder(s))";
}

TEST_F(ProxyTlsTest, ClientCertificatesAndPlainShards) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  // A TLS proxy meets plain shards: refused at start with the fix, nothing left listening.
  auto binary = ShardproxyBinary();
  std::vector<std::string> argv = {binary, "--cluster",
                                   "127.0.0.1:" + std::to_string(shard_port(0)), "--listen",
                                   "127.0.0.1:" + std::to_string(proxy_port())};
  auto flags = ProxyTlsFlags();
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto mismatch = RunCommand(argv, 30s);
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.Describe();
  EXPECT_NE(mismatch.err.find("--tls-to-shards no"), std::string::npos) << mismatch.err;

  flags.insert(flags.end(), {"--tls-to-shards", "no", "--tls-auth-clients", "yes"});
  const std::vector<std::string> client_files = {"--cert", File("client.crt"), "--key",
                                                 File("client.key")};
  StartProxy(flags, AnswersTls(client_files));
  auto anonymous = ProxyCli("ca.crt", {"PING"});
  EXPECT_EQ(anonymous.out.find("PONG"), std::string::npos) << anonymous.Describe();
  EXPECT_EQ(ProxyCli("ca.crt", {"SET", "k", "v"}, client_files).out, "OK\n");
  auto run = RunPythonScenario("pipeline", 3,
                               {"--tls-ca", File("ca.crt"), "--tls-cert", File("client.crt"),
                                "--tls-key", File("client.key")});
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  // Clients resume sessions (a session id context is set: OpenSSL refuses resumption without
  // one when client certificates are checked).
  const std::string s_client =
      "openssl s_client -tls1_2 -connect 127.0.0.1:" + std::to_string(proxy_port()) + " -CAfile " +
      File("ca.crt") + " -cert " + File("client.crt") + " -key " + File("client.key");
  const std::string session = File("session.pem");
  auto resumed = RunCommand({"bash", "-c",
                             s_client + " -sess_out " + session + " </dev/null >/dev/null 2>&1; " +
                                 s_client + " -sess_in " + session + " </dev/null 2>&1"},
                            20s);
  EXPECT_NE(resumed.out.find("Reused, TLSv1.2"), std::string::npos) << resumed.Describe();
  // The shards themselves stayed plain.
  auto direct = QueryRedis(shard_port(0), {"PING"});
  EXPECT_TRUE(direct && direct->text == "PONG");
}

TEST_F(ProxyTlsTest, BadTlsFlagsAreRefusedWithTheFix) {
  const std::string binary = ShardproxyBinary();
  const std::vector<std::string> base = {binary, "--cluster", "127.0.0.1:1", "--listen",
                                         "127.0.0.1:" + std::to_string(proxy_port())};
  auto run = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv = base;
    argv.insert(argv.end(), flags.begin(), flags.end());
    return RunCommand(argv, 10s);
  };
  auto partial = run({"--tls-cert", File("proxy.crt"), "--tls-ca", File("ca.crt")});
  EXPECT_EQ(partial.exit_code, 2) << partial.Describe();
  EXPECT_NE(partial.err.find("go together"), std::string::npos) << partial.err;

  auto mode = run({"--tls-auth-clients", "sometimes"});
  EXPECT_EQ(mode.exit_code, 2) << mode.Describe();
  EXPECT_NE(mode.err.find("expected no, yes or optional"), std::string::npos) << mode.err;

  chmod(File("proxy.key").c_str(), 0644);
  auto open_key = run(ProxyTlsFlags());
  EXPECT_EQ(open_key.exit_code, 2) << open_key.Describe();
  EXPECT_NE(open_key.err.find("chmod 600"), std::string::npos) << open_key.err;
  chmod(File("proxy.key").c_str(), 0600);

  auto wrong_key = run({"--tls-cert", File("proxy.crt"), "--tls-key", File("other-ca.key"),
                        "--tls-ca", File("ca.crt")});
  EXPECT_EQ(wrong_key.exit_code, 2) << wrong_key.Describe();
  EXPECT_NE(wrong_key.err.find("not the key of --tls-cert"), std::string::npos) << wrong_key.err;

  // Loads fine, yet no client would accept it: refused at start, not at every handshake.
  MakeTestCertificate(scratch_dir(), "expired", "ca", /*days=*/-1);
  auto expired = run({"--tls-cert", File("expired.crt"), "--tls-key", File("expired.key"),
                      "--tls-ca", File("ca.crt")});
  EXPECT_EQ(expired.exit_code, 2) << expired.Describe();
  EXPECT_NE(expired.err.find("expired on"), std::string::npos) << expired.err;

  auto missing_ca = run({"--tls-cert", File("proxy.crt"), "--tls-key", File("proxy.key"),
                         "--tls-ca", File("absent.crt")});
  EXPECT_EQ(missing_ca.exit_code, 2) << missing_ca.Describe();
  EXPECT_NE(missing_ca.err.find("--tls-ca " + File("absent.crt")), std::string::npos)
      << missing_ca.err;
}

}  // namespace
}  // namespace shardctl::integration
