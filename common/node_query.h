// One blocking request/reply exchange with a Redis node that returns the raw reply frames, for
// control planes that read replies with common/cluster_text.h (the proxy's slot-map refresher,
// the load generator's slot table). Never on a data path: it blocks its thread up to `timeout`.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "common/tls.h"

namespace shardctl::common {

// Connects to `node` (resolving its host), sends the RESP requests in `commands` (each a list of
// arguments) in one write, and returns one complete reply frame per command. Errors name the node
// and what failed ("127.0.0.1:7000: connection refused", "...: no reply within 1s"). With `tls`
// (a client context), the exchange runs in TLS; the handshake counts against `timeout`.
Result<std::vector<std::string>> QueryNode(const Endpoint& node,
                                           std::span<const std::vector<std::string_view>> commands,
                                           std::chrono::milliseconds timeout,
                                           const TlsContext* tls = nullptr);

}  // namespace shardctl::common
