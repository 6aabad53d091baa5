// SlotMap: an immutable snapshot of which primary serves each of the 16384 slots.
//
// Pure: built from the bytes of a CLUSTER SLOTS reply or the text of CLUSTER NODES, no I/O. The
// proxy's topology refresher builds a new map and swaps it in whole (a shared_ptr<const SlotMap>);
// sessions and backends only read it, so no locks are needed on the hot path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/slots.h"

namespace shardctl::proxy {

// One primary the proxy routes to.
struct BackendAddress {
  std::string host;
  int port = 0;
  std::string node_id;  // 40 hex characters; empty when the reply did not say
  friend bool operator==(const BackendAddress&, const BackendAddress&) = default;
};

class SlotMap {
 public:
  // Index into backends() meaning "no primary serves this slot" (the proxy answers CLUSTERDOWN).
  static constexpr int kNoBackend = -1;

  // From one complete CLUSTER SLOTS reply frame, RESP2 or RESP3 (Redis 7 sends the per-node
  // metadata as a map over RESP3). The first node of each range is its primary, the others its
  // replicas (ReplicasOf()).
  // Errors name the problem ("CLUSTER SLOTS: range 3: slot 16384 out of range").
  // An empty host in the reply stands for `asked_host`, the address the reply came from.
  static common::Result<SlotMap> FromClusterSlots(std::string_view reply,
                                                  std::string_view asked_host = "");

  // From the text of CLUSTER NODES. Primaries' slot ranges are used, and replicas (flag "slave",
  // not "fail") are attached to their primary; "[slot->-id]" and
  // "[slot-<-id]" migration markers are skipped: a slot being migrated still belongs to its
  // source until SETSLOT NODE, and the proxy follows ASK/MOVED for the keys already moved.
  static common::Result<SlotMap> FromClusterNodes(std::string_view text);

  // The index into backends() of the primary serving `slot` (0..16383), or kNoBackend.
  int BackendFor(int slot) const { return owner_[static_cast<size_t>(slot)]; }

  // Each primary serving at least one slot, once, in the order first seen.
  const std::vector<BackendAddress>& backends() const { return backends_; }

  // The replicas of backends()[backend], in the order the cluster listed them; empty when it has
  // none (or the map came from a reply that did not list them).
  const std::vector<BackendAddress>& ReplicasOf(size_t backend) const;

  // Slots with no primary.
  int UnassignedSlots() const;

 private:
  SlotMap();
  // Adds (or finds) `backend` and assigns first..last to it.
  common::Status Assign(int first, int last, const BackendAddress& backend);

  std::array<int16_t, common::kSlotCount> owner_;
  std::vector<BackendAddress> backends_;
  std::vector<std::vector<BackendAddress>> replicas_;  // parallel to backends_
};

}  // namespace shardctl::proxy
