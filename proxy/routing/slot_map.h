// SlotMap: the proxy's name for an immutable snapshot of the cluster's slot table.
//
// The table itself, and the one reader of CLUSTER SLOTS / CLUSTER NODES that builds it, are
// common::SlotTable (common/cluster_text.h), shared with the launcher and the load generator. The
// proxy's topology refresher builds a new table and swaps it in whole (a
// shared_ptr<const SlotMap>); sessions and backends only read it, so the hot path takes no locks.
#pragma once

#include "common/cluster_text.h"

namespace shardctl::proxy {

using SlotMap = common::SlotTable;

}  // namespace shardctl::proxy
