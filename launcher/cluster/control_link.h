// The byte stream under RedisConnection: a TCP connection to a node, in TLS when the caller's
// Access says so, with blocking reads and writes bounded by a timeout. No RESP here.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/tls.h"

namespace shardctl::launcher {

class ControlLink {
 public:
  // Connects to host:port (a name or an address) within `timeout`, then runs the TLS handshake
  // with `tls` unless it is null; every later read and write may take `timeout`. Errors are the
  // system's words ("Connection refused") or the TLS library's ("certificate verify failed").
  static common::Result<ControlLink> Open(const std::string& host, int port,
                                          std::chrono::milliseconds timeout,
                                          const common::TlsContext* tls);
  ControlLink(ControlLink&&) noexcept;
  ControlLink& operator=(ControlLink&&) noexcept;
  ~ControlLink();

  // Writes all of `bytes`.
  common::Status WriteAll(std::string_view bytes);
  // Reads what is there (at least one byte, at most `size`); 0 bytes read is an error (closed).
  common::Result<size_t> ReadSome(char* buffer, size_t size);
  // True when a read would return at once (bytes, or the peer closing), within `wait`.
  bool WaitReadable(std::chrono::milliseconds wait);

 private:
  struct State;
  explicit ControlLink(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace shardctl::launcher
