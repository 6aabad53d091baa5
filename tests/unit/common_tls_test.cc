// TlsSession with no sockets: a client and a server session hand each other's wire() bytes
// directly, in whatever pieces a network might cut them into. The CA and certificates are made
// in-process with OpenSSL (EC keys, one day), written as PEM to a temporary directory.
#include <gtest/gtest.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "common/tls.h"
#include "common/tls_check.h"

namespace shardctl::common {
namespace {

namespace fs = std::filesystem;

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

// A certificate for `name`, signed by `issuer` (itself when null), with its key.
std::pair<Cert, Key> MakeCertificate(const std::string& name, X509* issuer, EVP_PKEY* issuer_key,
                                     bool ca) {
  Key key(EVP_EC_gen("P-256"));
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : subject);
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer != nullptr ? issuer : cert.get(), cert.get(), nullptr, nullptr,
                 0);
  X509_EXTENSION* constraints = X509V3_EXT_conf_nid(nullptr, &context, NID_basic_constraints,
                                                    ca ? "critical,CA:TRUE" : "CA:FALSE");
  X509_add_ext(cert.get(), constraints, -1);
  X509_EXTENSION_free(constraints);
  X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key.get(), EVP_sha256());
  return {std::move(cert), std::move(key)};
}

void WritePem(const fs::path& path, X509* cert, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr) << path;
  if (cert != nullptr) PEM_write_X509(file, cert);
  if (key != nullptr) PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(file);
  chmod(path.c_str(), 0600);
}

class TlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/shardctl-tls-unit.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    auto [ca, ca_key] = MakeCertificate("test CA", nullptr, nullptr, /*ca=*/true);
    auto [other_ca, other_key] = MakeCertificate("other CA", nullptr, nullptr, /*ca=*/true);
    auto [server, server_key] = MakeCertificate("127.0.0.1", ca.get(), ca_key.get(), false);
    WritePem(dir_ / "ca.crt", ca.get(), nullptr);
    WritePem(dir_ / "other-ca.crt", other_ca.get(), nullptr);
    WritePem(dir_ / "server.crt", server.get(), nullptr);
    WritePem(dir_ / "server.key", nullptr, server_key.get());
    WritePem(dir_ / "other.key", nullptr, other_key.get());
  }
  void TearDown() override { fs::remove_all(dir_); }

  TlsFiles Files(const std::string& ca = "ca.crt") const {
    return {.cert_file = (dir_ / "server.crt").string(),
            .key_file = (dir_ / "server.key").string(),
            .ca_file = (dir_ / ca).string()};
  }

  // Moves `from`'s wire() into `to` in pieces of `piece` bytes; returns what `to` opened, or
  // the error as "error: ...".
  static std::string Deliver(TlsSession& from, TlsSession& to, size_t piece) {
    std::string bytes = std::exchange(from.wire(), {});
    std::string opened;
    for (size_t at = 0; at < bytes.size(); at += piece) {
      auto plain = to.Open(std::string_view(bytes).substr(at, piece));
      if (!plain) return "error: " + plain.error().message();
      opened += *plain;
    }
    return opened;
  }

  // Runs the handshake to its end (or its failure, returned).
  static std::string Handshake(TlsSession& client, TlsSession& server, size_t piece) {
    for (int round = 0; round < 10 && !(client.established() && server.established() &&
                                        !client.HasWire() && !server.HasWire());
         ++round) {
      if (std::string got = Deliver(client, server, piece); got.starts_with("error")) return got;
      if (std::string got = Deliver(server, client, piece); got.starts_with("error")) return got;
    }
    return client.established() && server.established() ? "" : "error: no handshake";
  }

  fs::path dir_;
};

TEST_F(TlsSessionTest, RequestsAndRepliesCrossInAnyPieces) {
  auto server_context = TlsContext::ForServer(Files(), TlsClientCertificates::kNo);
  auto client_context = TlsContext::ForClient({.ca_file = (dir_ / "ca.crt").string()});
  ASSERT_TRUE(server_context) << server_context.error().message();
  ASSERT_TRUE(client_context) << client_context.error().message();
  for (size_t piece : {size_t{1}, size_t{7}, size_t{1500}, size_t{1} << 20}) {
    TlsSession client(**client_context);
    TlsSession server(**server_context);
    EXPECT_TRUE(client.HasWire()) << "the ClientHello is ready at once";
    EXPECT_FALSE(server.HasWire());
    // Queued before the handshake ends: kept, not lost, and not sealed yet.
    std::string early = "*1\r\n$4\r\nPING\r\n";
    ASSERT_TRUE(client.Seal(early));
    EXPECT_EQ(early, "*1\r\n$4\r\nPING\r\n");
    ASSERT_EQ(Handshake(client, server, piece), "") << "piece " << piece;
    ASSERT_TRUE(client.Seal(early));
    EXPECT_TRUE(early.empty());
    EXPECT_EQ(Deliver(client, server, piece), "*1\r\n$4\r\nPING\r\n") << "piece " << piece;
    // A reply bigger than a TLS record (16 KiB) and than one read chunk.
    std::string reply(300 * 1024, 'v');
    reply[12345] = 'x';
    const std::string sent = reply;
    ASSERT_TRUE(server.Seal(reply));
    EXPECT_EQ(Deliver(server, client, piece), sent) << "piece " << piece;
  }
}

TEST_F(TlsSessionTest, RequestsThatCameWithCloseNotifyAreStillDelivered) {
  auto server_context = TlsContext::ForServer(Files(), TlsClientCertificates::kNo);
  auto client_context = TlsContext::ForClient({.ca_file = (dir_ / "ca.crt").string()});
  ASSERT_TRUE(server_context && client_context);
  TlsSession client(**client_context);
  TlsSession server(**server_context);
  ASSERT_EQ(Handshake(client, server, 4096), "");
  std::string last = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
  ASSERT_TRUE(client.Seal(last));
  client.SendCloseNotify();
  EXPECT_FALSE(server.peer_closed());
  EXPECT_EQ(Deliver(client, server, 1 << 20), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_TRUE(server.peer_closed());
}

TEST_F(TlsSessionTest, AServerFromAnotherCaIsRefused) {
  auto server_context = TlsContext::ForServer(Files(), TlsClientCertificates::kNo);
  auto client_context = TlsContext::ForClient({.ca_file = (dir_ / "other-ca.crt").string()});
  ASSERT_TRUE(server_context && client_context);
  TlsSession client(**client_context);
  TlsSession server(**server_context);
  const std::string outcome = Handshake(client, server, 4096);
  EXPECT_NE(outcome.find("certificate verify failed"), std::string::npos) << outcome;
}

TEST_F(TlsSessionTest, AServerThatRequiresClientCertificatesRefusesAnonymousClients) {
  auto server_context = TlsContext::ForServer(Files(), TlsClientCertificates::kYes);
  auto anonymous = TlsContext::ForClient({.ca_file = (dir_ / "ca.crt").string()});
  auto known = TlsContext::ForClient(Files());
  ASSERT_TRUE(server_context && anonymous && known);
  {
    TlsSession client(**anonymous);
    TlsSession server(**server_context);
    const std::string outcome = Handshake(client, server, 4096);
    EXPECT_TRUE(outcome.starts_with("error")) << outcome;
  }
  TlsSession client(**known);
  TlsSession server(**server_context);
  EXPECT_EQ(Handshake(client, server, 4096), "");
}

TEST_F(TlsSessionTest, GarbageInsteadOfTlsIsAnErrorNotAHang) {
  auto server_context = TlsContext::ForServer(Files(), TlsClientCertificates::kNo);
  ASSERT_TRUE(server_context);
  TlsSession server(**server_context);
  auto opened = server.Open("*1\r\n$4\r\nPING\r\n");
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("TLS handshake"), std::string::npos)
      << opened.error().message();
}

TEST_F(TlsSessionTest, FilesThatDoNotLoadNameTheFlagAndTheFile) {
  TlsFiles files = Files();
  files.key_file = (dir_ / "other.key").string();
  auto mismatch = TlsContext::ForServer(files, TlsClientCertificates::kNo);
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().message().find("--tls-key " + files.key_file +
                                            ": not the key of --tls-cert"),
            std::string::npos)
      << mismatch.error().message();

  files = Files("absent.crt");
  auto no_ca = TlsContext::ForClient(files);
  ASSERT_FALSE(no_ca);
  EXPECT_NE(no_ca.error().message().find("--tls-ca " + files.ca_file + ": "), std::string::npos)
      << no_ca.error().message();

  files = Files();
  files.cert_file = (dir_ / "server.key").string();  // a key where the certificate belongs
  auto not_a_cert = TlsContext::ForServer(files, TlsClientCertificates::kNo);
  ASSERT_FALSE(not_a_cert);
  EXPECT_NE(not_a_cert.error().message().find("--tls-cert " + files.cert_file), std::string::npos)
      << not_a_cert.error().message();
}

// CheckCertificate sees what a peer will refuse, which loading the files does not: the dates
// (checked at a given time, so no expired file is needed) and the chain to the CA.
TEST_F(TlsSessionTest, CertificatesAreCheckedAsAPeerWillCheckThem) {
  const std::time_t now = std::time(nullptr);
  EXPECT_TRUE(CheckCertificate(Files(), now).ok())
      << CheckCertificate(Files(), now).error().message();

  auto expired = CheckCertificate(Files(), now + 2 * 86400);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.error().message().rfind("--tls-cert " + Files().cert_file + ": expired on ", 0),
            0u)
      << expired.error().message();
  EXPECT_NE(expired.error().message().find("(renew it"), std::string::npos);

  auto early = CheckCertificate(Files(), now - 86400);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().message().find(": not valid before "), std::string::npos)
      << early.error().message();

  auto other_ca = CheckCertificate(Files("other-ca.crt"), now);
  ASSERT_FALSE(other_ca.ok());
  EXPECT_NE(other_ca.error().message().find("does not verify it"), std::string::npos)
      << other_ca.error().message();

  EXPECT_TRUE(CaVerifies(Files().ca_file, Files().cert_file, now, "the certificate in use").ok());
  auto untrusted = CaVerifies((dir_ / "other-ca.crt").string(), Files().cert_file, now,
                              "the certificate in use");
  ASSERT_FALSE(untrusted.ok());
  EXPECT_NE(untrusted.error().message().find("does not verify the certificate in use"),
            std::string::npos)
      << untrusted.error().message();
}

TEST(TlsClientCertificatesTest, ParsesRedisWords) {
  EXPECT_EQ(ParseTlsClientCertificates("no"), TlsClientCertificates::kNo);
  EXPECT_EQ(ParseTlsClientCertificates("yes"), TlsClientCertificates::kYes);
  EXPECT_EQ(ParseTlsClientCertificates("optional"), TlsClientCertificates::kOptional);
  EXPECT_EQ(ParseTlsClientCertificates("true"), std::nullopt);
}

}  // namespace
}  // namespace shardctl::common
