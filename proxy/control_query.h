// One blocking request/reply exchange with a cluster node, for the proxy's control plane (the
// slot-map refresher). Never used on the data path: it blocks its thread for up to `timeout`.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "proxy/options.h"

namespace shardctl::proxy {

// Connects to `node` (resolving its host), sends the RESP requests in `commands` (each a list of
// arguments) in one write, and returns one complete reply frame per command. Errors name the node
// and what failed ("127.0.0.1:7000: connection refused", "...: no reply within 1s").
common::Result<std::vector<std::string>> QueryNode(
    const Endpoint& node, std::span<const std::vector<std::string_view>> commands,
    std::chrono::milliseconds timeout);

}  // namespace shardctl::proxy
