// Cluster routing for the load generator: which primary serves each slot, read from CLUSTER
// SLOTS at the start and corrected by the MOVED redirects the generator follows. Each generator
// thread owns its own copy, so nothing is shared or locked on the request path. The table, the
// endpoint type and the MOVED/ASK reader are the shared ones of common/cluster_text.h.
#pragma once

#include <chrono>
#include <string>

#include "common/cluster_text.h"
#include "common/result.h"
#include "common/tls.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

using common::Endpoint;
using common::ParseRedirect;
using common::Redirect;
using common::SlotTable;

// Reads CLUSTER SLOTS from host:port (blocking, `timeout` for connect and reply), logging in and
// speaking TLS as `access` says. Errors say what failed: cannot connect, a refused login, not a
// cluster, slots without an owner.
common::Result<SlotTable> FetchSlotTable(const Access& access, const std::string& host, int port,
                                         std::chrono::milliseconds timeout);

}  // namespace shardctl::launcher
