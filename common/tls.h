// TLS for everything of ours that speaks RESP to a shard or serves it: the certificate files a
// program is given (`--tls-cert`, `--tls-key`, `--tls-ca`), loaded once into a TlsContext, and
// TlsSession, one connection's TLS state with no socket of its own (OpenSSL memory BIOs): bytes
// from the network go in, application bytes come out, and what must go back on the wire is left
// in wire(). Event loops (shardproxy's libuv workers) and blocking callers (node_query) drive it
// the same way; the launcher's blocking control links hand OpenSSL the socket instead.
//
// Certificates are checked against the CA; names are not (shards are reached by address, and
// their certificates need not list every address), as redis-cli --tls and Redis' own cluster bus
// do.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX
struct ssl_st;      // OpenSSL's SSL
struct bio_st;      // OpenSSL's BIO

namespace shardctl::common {

// PEM files. A client context needs only the CA (and a certificate and key for servers that ask
// for one); a server context needs the certificate and key, and the CA when it checks clients.
struct TlsFiles {
  std::string cert_file;  // --tls-cert
  std::string key_file;   // --tls-key
  std::string ca_file;    // --tls-ca
};

// Whether a server asks its clients for a certificate (Redis' tls-auth-clients).
enum class TlsClientCertificates {
  kNo,        // never asked for
  kYes,       // required, and checked against the CA
  kOptional,  // checked when sent
};

// "no", "yes", "optional"; nullopt for anything else.
std::optional<TlsClientCertificates> ParseTlsClientCertificates(std::string_view text);

class TlsContext {
 public:
  // Errors name the flag and the file: "--tls-key server.key: cannot load it, or it is not the
  // key of --tls-cert (...)".
  static Result<std::shared_ptr<const TlsContext>> ForServer(const TlsFiles& files,
                                                             TlsClientCertificates clients);
  static Result<std::shared_ptr<const TlsContext>> ForClient(const TlsFiles& files);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* native() const { return context_; }
  bool server() const { return server_; }

 private:
  TlsContext(ssl_ctx_st* context, bool server) : context_(context), server_(server) {}
  ssl_ctx_st* context_;
  bool server_;
};

// The TLS library's reason for its last failure on this thread ("certificate verify failed"),
// or `fallback` when it recorded none. Clears the thread's error queue.
std::string TlsErrorText(const std::string& fallback);

class TlsSession {
 public:
  // A client session has its ClientHello in wire() at once; a server session waits for one.
  explicit TlsSession(const TlsContext& context);
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Takes bytes read from the network. Returns the application bytes they completed (a view
  // valid until the next call; often empty during the handshake), or why the connection cannot
  // go on (a failed handshake, a bad record). Check HasWire() after: the handshake and key
  // updates answer the peer, and a failure leaves its alert there; and peer_closed().
  Result<std::string_view> Open(std::string_view network_bytes);
  // Encrypts `plain` into wire() and clears it. Before the handshake is done it leaves `plain`
  // as it is (the caller keeps queueing; Seal it again once established()). An error (a session
  // that already failed) ends the connection.
  Status Seal(std::string& plain);
  // Puts a close_notify in wire(): the peer learns the end was meant, not a truncation.
  void SendCloseNotify();
  // True when wire() has bytes to write.
  bool HasWire() const;
  // The bytes to write to the network, in order. The caller writes them and erases what was
  // written (or swaps the string out).
  std::string& wire();
  bool established() const { return established_; }
  // The peer sent close_notify: after the bytes Open() returned with it, nothing more comes
  // (handle them, then close, as after a TCP EOF).
  bool peer_closed() const { return peer_closed_; }

 private:
  Status Handshake();

  ssl_st* ssl_;
  bio_st* network_in_;   // bytes from the peer, for OpenSSL to read
  bio_st* network_out_;  // bytes OpenSSL wrote, for us to send
  std::string wire_;
  std::string plain_;  // what Open() returns
  bool established_ = false;
  bool peer_closed_ = false;
};

}  // namespace shardctl::common
