// How this process reaches one deployment's nodes: the password it logs in with and the TLS it
// speaks. Built once from the deployment record (or from bench's flags) and passed to whatever
// connects, so no connection depends on process-wide state or on the order of earlier calls.
//
//   deployment record ──AccessFor──▶ Access ──▶ RedisConnection::Connect(…, access)
//                                       └──▶ SharedAccess (the supervisor: reload-tls swaps it)
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/tls.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {

// What the control plane's TLS connections present and trust (`up --tls-*`): the CA that signed
// the shards' certificates and, for shards that demand client certificates
// (tls-auth-clients yes), a certificate and key of our own. Paths to PEM files.
struct ControlTls {
  std::string ca_file;
  std::string cert_file;  // "" for none
  std::string key_file;   // "" for none
};

struct Access {
  std::string password;                           // AUTH on every connection; "" for none
  std::shared_ptr<const common::TlsContext> tls;  // null: plain TCP
  // What a refused AUTH means for whoever gave the password (a deployment's shards by default).
  std::string wrong_password_hint =
      "the deployment's password file no longer matches the shards' requirepass";

  bool uses_tls() const { return tls != nullptr; }
};

// The access `password` and `tls` give (plain TCP without `tls`). Errors name the TLS file that
// does not load, or a certificate that does not match its key.
common::Result<Access> MakeAccess(std::string password, const std::optional<ControlTls>& tls);

// The access a deployment's record asks for: its password, and TLS with its CA and certificate
// when it has TLS.
common::Result<Access> AccessFor(const Deployment& deployment);

// One Access that threads read while another replaces it (the supervisor's health, metrics and
// fork threads; reload-tls renews the TLS files). Connections already open keep what they
// started with.
class SharedAccess {
 public:
  explicit SharedAccess(Access access)
      : current_(std::make_shared<const Access>(std::move(access))) {}

  // The access to connect with now; hold the pointer for the length of the connect.
  std::shared_ptr<const Access> Current() const;
  void Replace(Access access);

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Access> current_;
};

}  // namespace shardctl::launcher
