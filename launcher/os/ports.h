// Checking that TCP ports are free before anything starts.
#pragma once

#include <string>
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

}  // namespace shardctl::launcher
