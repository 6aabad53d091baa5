#include "common/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>

namespace shardctl::common {
namespace {

// Application bytes are read out of OpenSSL in pieces of this size.
constexpr size_t kReadChunk = 16 * 1024;

// Loads the certificate and its key into `context`; errors name the flag, the file and why.
Status LoadCertificate(SSL_CTX* context, const TlsFiles& files) {
  if (SSL_CTX_use_certificate_chain_file(context, files.cert_file.c_str()) != 1) {
    return Error("--tls-cert " + files.cert_file + ": " + TlsErrorText("cannot load it"));
  }
  // OpenSSL checks the key against the certificate as it loads it: "key values mismatch".
  const bool loaded =
      SSL_CTX_use_PrivateKey_file(context, files.key_file.c_str(), SSL_FILETYPE_PEM) == 1;
  const bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
  if (!loaded && !mismatch) {
    return Error("--tls-key " + files.key_file + ": cannot load it (" +
                 TlsErrorText("not a PEM private key") + ")");
  }
  if (!loaded || SSL_CTX_check_private_key(context) != 1) {
    return Error("--tls-key " + files.key_file + ": not the key of --tls-cert " + files.cert_file +
                 " (" + TlsErrorText("key values mismatch") + ")");
  }
  return Ok();
}

Status LoadCa(SSL_CTX* context, const TlsFiles& files) {
  if (SSL_CTX_load_verify_locations(context, files.ca_file.c_str(), nullptr) != 1) {
    return Error("--tls-ca " + files.ca_file + ": " + TlsErrorText("cannot load it"));
  }
  return Ok();
}

}  // namespace

std::optional<TlsClientCertificates> ParseTlsClientCertificates(std::string_view text) {
  if (text == "no") return TlsClientCertificates::kNo;
  if (text == "yes") return TlsClientCertificates::kYes;
  if (text == "optional") return TlsClientCertificates::kOptional;
  return std::nullopt;
}

std::string TlsErrorText(const std::string& fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return fallback;
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  // "error:0A000086:SSL routines::certificate verify failed" -> "certificate verify failed"
  const char* reason = std::strrchr(text, ':');
  return reason != nullptr ? reason + 1 : text;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::ForServer(const TlsFiles& files,
                                                                TlsClientCertificates clients) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  if (context == nullptr) return Error("TLS: " + TlsErrorText("cannot create a context"));
  std::shared_ptr<const TlsContext> owned(new TlsContext(context, /*server=*/true));
  if (auto loaded = LoadCertificate(context, files); !loaded) return loaded.error();
  // Without it OpenSSL refuses to resume a session of a server that checks client
  // certificates ("session id context uninitialized"): every reconnect of a client with a
  // session cache would fail.
  static constexpr unsigned char kSessionContext[] = "shardctl";
  SSL_CTX_set_session_id_context(context, kSessionContext, sizeof kSessionContext - 1);
  if (clients != TlsClientCertificates::kNo) {
    if (auto loaded = LoadCa(context, files); !loaded) return loaded.error();
    // The CA's name goes in the CertificateRequest, so clients with several pick the right one.
    SSL_CTX_set_client_CA_list(context, SSL_load_client_CA_file(files.ca_file.c_str()));
    SSL_CTX_set_verify(context,
                       clients == TlsClientCertificates::kYes
                           ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                           : SSL_VERIFY_PEER,
                       nullptr);
  }
  return owned;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::ForClient(const TlsFiles& files) {
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  if (context == nullptr) return Error("TLS: " + TlsErrorText("cannot create a context"));
  std::shared_ptr<const TlsContext> owned(new TlsContext(context, /*server=*/false));
  SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
  if (auto loaded = LoadCa(context, files); !loaded) return loaded.error();
  if (!files.cert_file.empty()) {
    if (auto loaded = LoadCertificate(context, files); !loaded) return loaded.error();
  }
  return owned;
}

TlsContext::~TlsContext() { SSL_CTX_free(context_); }

TlsSession::TlsSession(const TlsContext& context)
    : ssl_(SSL_new(context.native())),
      network_in_(BIO_new(BIO_s_mem())),
      network_out_(BIO_new(BIO_s_mem())) {
  // An empty input BIO means "wait for more", not end of stream.
  BIO_set_mem_eof_return(network_in_, -1);
  SSL_set_bio(ssl_, network_in_, network_out_);  // the SSL owns both BIOs now
  if (context.server()) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
    (void)Handshake();  // the ClientHello, into wire()
  }
}

TlsSession::~TlsSession() { SSL_free(ssl_); }

Status TlsSession::Handshake() {
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) {
    established_ = true;
    return Ok();
  }
  const int reason = SSL_get_error(ssl_, rc);
  if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) return Ok();
  return Error("TLS handshake: " + TlsErrorText("the peer ended it"));
}

Result<std::string_view> TlsSession::Open(std::string_view network_bytes) {
  plain_.clear();
  while (!network_bytes.empty()) {
    const int wrote = BIO_write(network_in_, network_bytes.data(),
                                static_cast<int>(std::min<size_t>(network_bytes.size(), 1 << 30)));
    if (wrote <= 0) return Error("TLS: out of memory");
    network_bytes.remove_prefix(static_cast<size_t>(wrote));
  }
  if (!established_) {
    if (auto done = Handshake(); !done) return done.error();
    if (!established_) return std::string_view();
  }
  // One buffer per thread: a session per connection would hold it for every idle client.
  thread_local char chunk[kReadChunk];
  for (;;) {
    ERR_clear_error();
    const int got = SSL_read(ssl_, chunk, static_cast<int>(kReadChunk));
    if (got > 0) {
      plain_.append(chunk, static_cast<size_t>(got));
      continue;
    }
    const int reason = SSL_get_error(ssl_, got);
    if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) break;
    if (reason == SSL_ERROR_ZERO_RETURN) {
      peer_closed_ = true;  // what came with its close_notify is still the peer's
      break;
    }
    return Error("TLS: " + TlsErrorText("bad record from the peer"));
  }
  return std::string_view(plain_);
}

Status TlsSession::Seal(std::string& plain) {
  if (!established_ || plain.empty()) return Ok();
  std::string_view rest = plain;
  while (!rest.empty()) {
    ERR_clear_error();
    // A memory BIO takes everything, so a write fails only when memory does, or after a fatal
    // alert.
    const int wrote =
        SSL_write(ssl_, rest.data(), static_cast<int>(std::min<size_t>(rest.size(), 1 << 30)));
    if (wrote <= 0) return Error("TLS: " + TlsErrorText("cannot encrypt"));
    rest.remove_prefix(static_cast<size_t>(wrote));
  }
  plain.clear();
  return Ok();
}

void TlsSession::SendCloseNotify() {
  ERR_clear_error();
  if (established_) SSL_shutdown(ssl_);
  ERR_clear_error();
}

bool TlsSession::HasWire() const { return !wire_.empty() || BIO_ctrl_pending(network_out_) > 0; }

std::string& TlsSession::wire() {
  const size_t pending = BIO_ctrl_pending(network_out_);
  if (pending > 0) {
    const size_t had = wire_.size();
    wire_.resize(had + pending);
    const int got = BIO_read(network_out_, wire_.data() + had, static_cast<int>(pending));
    wire_.resize(had + static_cast<size_t>(got > 0 ? got : 0));
  }
  return wire_;
}

}  // namespace shardctl::common
