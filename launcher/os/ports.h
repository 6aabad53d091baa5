// Checking that TCP ports are free before anything starts.
#pragma once

#include <string>
#include <vector>

namespace shardctl::launcher {

// The ports of `ports` that cannot be bound on `address` right now. Binds with SO_REUSEADDR, as
// Redis does, so sockets in TIME_WAIT from a previous run do not count as taken.
std::vector<int> TakenPorts(const std::string& address, const std::vector<int>& ports);

}  // namespace shardctl::launcher
