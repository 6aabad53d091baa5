// The control plane's TLS (launcher/cluster/control_link.h), against a real redis-server serving
// only TLS: a throwaway CA and certificates made with openssl in a temp dir. The client that
// trusts the CA is served; one that trusts another CA, or speaks plain RESP, is refused; with
// tls-auth-clients yes it must present a certificate of its own.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "launcher/cluster/redis_client.h"
#include "tests/integration/harness.h"
#include "tests/integration/test_certs.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;
using launcher::ControlTls;
using launcher::RedisConnection;

// A reply's text, or the error it was, for comparisons that show what came back.
std::string TextOf(const common::Result<std::string>& reply) {
  return reply.ok() ? *reply : "error: " + reply.error().message();
}

class ControlTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ports_ = PortBlock::Reserve();
    ASSERT_NE(ports_, nullptr);
    MakeCa("ca");
    MakeCa("other-ca");
    MakeCertificate("server", "ca");
    MakeCertificate("client", "ca");
  }
  void TearDown() override {
    if (server_ > 0) {
      kill(server_, SIGKILL);
      waitpid(server_, nullptr, 0);
    }
  }

  fs::path File(const std::string& name) const { return dir_.path() / name; }
  void MakeCa(const std::string& name) { MakeTestCa(dir_.path(), name); }
  void MakeCertificate(const std::string& name, const std::string& ca) {
    MakeTestCertificate(dir_.path(), name, ca);
  }

  // redis-server on 127.0.0.1 serving TLS only, on the first port of this test's block (plain
  // RESP only there when `auth_clients` is empty).
  void StartServer(const std::string& auth_clients) {
    const fs::path config = File("redis.conf");
    std::ofstream out(config);
    if (auth_clients.empty()) {
      out << "port " << port() << "\n";
    } else {
      out << "port 0\ntls-port " << port() << "\n"
          << "tls-cert-file " << File("server.crt").string() << "\n"
          << "tls-key-file " << File("server.key").string() << "\n"
          << "tls-ca-cert-file " << File("ca.crt").string() << "\n"
          << "tls-auth-clients " << auth_clients << "\n";
    }
    out << "bind 127.0.0.1\nsave \"\"\nappendonly no\ndir " << dir_.path().string() << "\n"
        << "logfile " << File("server.log").string() << "\n";
    out.close();
    server_ = fork();
    if (server_ == 0) {
      execlp("redis-server", "redis-server", config.c_str(), nullptr);
      _exit(127);
    }
    ASSERT_GT(server_, 0);
    ASSERT_TRUE(WaitUntil([&] { return !PortBindable(port()); }, 10s))
        << "redis-server did not listen (built without TLS?): " << ReadFileText(File("server.log"));
  }
  int port() const { return ports_->base(); }

  TempDir dir_;
  std::unique_ptr<PortBlock> ports_;
  pid_t server_ = -1;
};

TEST_F(ControlTlsTest, TrustingTheCaIsServedAnotherCaAndPlainRespAreNot) {
  StartServer("no");
  auto trusting = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("ca.crt")});
  ASSERT_TRUE(trusting.ok()) << trusting.error().message();
  auto connection = RedisConnection::Connect(*trusting, "127.0.0.1", port(), 2000ms);
  ASSERT_TRUE(connection.ok()) << connection.error().message();
  EXPECT_EQ(TextOf(connection->Run({"SET", "k", std::string(100000, 'v')})), "OK");
  auto replies = connection->Pipeline({{"PING"}, {"STRLEN", "k"}, {"NO-SUCH-COMMAND"}});
  ASSERT_TRUE(replies.ok()) << replies.error().message();
  EXPECT_EQ(TextOf((*replies)[0]), "PONG");
  EXPECT_EQ(TextOf((*replies)[1]), "100000");
  EXPECT_FALSE((*replies)[2].ok()) << "an error reply stays an error over TLS";

  // Each access is a value of its own: another CA in the same process changes nothing for the
  // connection already open, nor for a later one made with the first access.
  auto other = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("other-ca.crt")});
  ASSERT_TRUE(other.ok()) << other.error().message();
  auto stranger = RedisConnection::Connect(*other, "127.0.0.1", port(), 2000ms);
  ASSERT_FALSE(stranger.ok());
  EXPECT_NE(stranger.error().message().find("certificate verify failed"), std::string::npos)
      << stranger.error().message();
  auto plain = RedisConnection::Connect(launcher::Access{}, "127.0.0.1", port(), 1000ms);
  if (plain.ok()) {
    EXPECT_FALSE(plain->Run({"PING"}).ok()) << "plain RESP on a TLS port must not be served";
  }
  EXPECT_EQ(TextOf(connection->Run({"STRLEN", "k"})), "100000");
  auto again = RedisConnection::Connect(*trusting, "127.0.0.1", port(), 2000ms);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(TextOf(again->Run({"PING"})), "PONG");
}

// TLS options given for a server that serves plain RESP (an import's --tls-ca for a plain
// source): one line saying so (before: "TLS handshake: Resource temporarily unavailable").
TEST_F(ControlTlsTest, APlainServerIsSaidNotToServeTls) {
  StartServer("");
  auto trusting = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("ca.crt")});
  ASSERT_TRUE(trusting.ok()) << trusting.error().message();
  auto connection = RedisConnection::Connect(*trusting, "127.0.0.1", port(), 1000ms);
  ASSERT_FALSE(connection.ok());
  EXPECT_NE(connection.error().message().find("does not serve TLS on this port"), std::string::npos)
      << connection.error().message();
}

TEST(SharedAccessTest, ReplacingItLeavesWhatWasTakenBeforeIntact) {
  launcher::SharedAccess shared(launcher::Access{.password = "old", .tls = nullptr});
  auto before = shared.Current();
  shared.Replace(launcher::Access{.password = "new", .tls = nullptr});
  EXPECT_EQ(before->password, "old") << "a connect under way keeps the access it started with";
  EXPECT_EQ(shared.Current()->password, "new");
}

TEST_F(ControlTlsTest, AServerThatDemandsClientCertificatesGetsOurs) {
  StartServer("yes");
  auto anonymous_access = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("ca.crt")});
  ASSERT_TRUE(anonymous_access.ok()) << anonymous_access.error().message();
  auto anonymous = RedisConnection::Connect(*anonymous_access, "127.0.0.1", port(), 2000ms);
  EXPECT_TRUE(!anonymous.ok() || !anonymous->Run({"PING"}).ok())
      << "a client without a certificate is refused";
  auto with_certificate =
      launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("ca.crt"),
                                                    .cert_file = File("client.crt"),
                                                    .key_file = File("client.key")});
  ASSERT_TRUE(with_certificate.ok()) << with_certificate.error().message();
  auto known = RedisConnection::Connect(*with_certificate, "127.0.0.1", port(), 2000ms);
  ASSERT_TRUE(known.ok()) << known.error().message();
  EXPECT_EQ(TextOf(known->Run({"PING"})), "PONG");
}

TEST_F(ControlTlsTest, FilesThatDoNotLoadAreNamed) {
  auto missing = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("nope.crt")});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("--tls-ca"), std::string::npos);
  auto mismatched = launcher::MakeAccess("", launcher::ControlTls{.ca_file = File("ca.crt"),
                                                                  .cert_file = File("client.crt"),
                                                                  .key_file = File("server.key")});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.error().message().find("--tls-key"), std::string::npos)
      << mismatched.error().message();
}

}  // namespace
}  // namespace shardctl::integration
