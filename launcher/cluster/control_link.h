// The byte stream under RedisConnection: a TCP connection to a node, in TLS when the process was
// told to (UseControlTls), with blocking reads and writes bounded by a timeout. No RESP here.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::launcher {

// What the control plane's TLS connections present and trust (`up --tls-*`): the CA that signed
// the shards' certificates and, for shards that demand client certificates
// (tls-auth-clients yes), a certificate and key of our own. Paths to PEM files.
struct ControlTls {
  std::string ca_file;
  std::string cert_file;  // "" for none
  std::string key_file;   // "" for none
};

// Every later ControlLink of this process speaks TLS with `tls` (a CA that does not load, or a
// certificate that does not match its key, is the error). Any thread, any time: links already
// open keep what they started with (reload-tls calls it again with renewed files).
common::Status UseControlTls(const ControlTls& tls);

// True after a successful UseControlTls.
bool ControlTlsEnabled();

// Later ControlLinks are plain TCP again (tests that try several settings in one process).
void UsePlainControl();

class ControlLink {
 public:
  // Connects to host:port (a name or an address) within `timeout`, then runs the TLS handshake
  // when enabled; every later read and write may take `timeout`. Errors are the system's words
  // ("Connection refused") or the TLS library's ("certificate verify failed").
  static common::Result<ControlLink> Open(const std::string& host, int port,
                                          std::chrono::milliseconds timeout);
  ControlLink(ControlLink&&) noexcept;
  ControlLink& operator=(ControlLink&&) noexcept;
  ~ControlLink();

  // Writes all of `bytes`.
  common::Status WriteAll(std::string_view bytes);
  // Reads what is there (at least one byte, at most `size`); 0 bytes read is an error (closed).
  common::Result<size_t> ReadSome(char* buffer, size_t size);

 private:
  struct State;
  explicit ControlLink(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace shardctl::launcher
