// Checking that TCP ports are free before anything starts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

// The ports of `ports` that cannot be bound on `address` right now. Binds with SO_REUSEADDR, as
// Redis does, so sockets in TIME_WAIT from a previous run do not count as taken.
std::vector<int> TakenPorts(const std::string& address, const std::vector<int>& ports);

// Ok when `address` is one of this host's (a socket binds to it); otherwise the error names
// the flag and the fix: "--bind 10.9.9.9: not an address of this host (...)". A taken port is
// a different fault (TakenPorts), so this binds port 0.
common::Status CheckAddressOnHost(const std::string& address, const std::string& flag);

// "port(s) 7000, 17000 on 127.0.0.1 are in use by another process (`fix`)" for the taken ones
// among `ports`, at most 8 named; Ok when all are free.
common::Status RequirePortsFree(const std::string& address, const std::vector<int>& ports,
                                const std::string& fix);

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick), for a short-lived
// server of our own; it may be taken by the time it is used, which the server then reports.
common::Result<int> UnusedLoopbackPort();

// A port on 127.0.0.1 bound by this process and never listened on, for as long as the object
// lives: a connect to it is refused, and no other process can take it meanwhile. A scratch server
// told to replicate from it stays a replica that never syncs (ops/scratch_server.h).
class ClosedLoopbackPort {
 public:
  static common::Result<ClosedLoopbackPort> Open();
  ClosedLoopbackPort(ClosedLoopbackPort&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}
  ClosedLoopbackPort& operator=(ClosedLoopbackPort&&) = delete;
  ~ClosedLoopbackPort();

  int port() const { return port_; }

 private:
  ClosedLoopbackPort(int fd, int port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace shardctl::launcher
