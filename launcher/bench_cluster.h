// Cluster routing for the load generator: which primary serves each slot, read from CLUSTER
// SLOTS at the start and corrected by the MOVED redirects the generator follows. Each generator
// thread owns its own copy, so nothing is shared or locked on the request path.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/slots.h"

namespace shardctl::launcher {

// A server address.
struct Endpoint {
  std::string host;
  int port = 0;
  std::string ToString() const { return host + ":" + std::to_string(port); }
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// Slot -> node index; nodes are numbered in the order first seen.
class SlotTable {
 public:
  static constexpr int kNoNode = -1;

  SlotTable() { owner_.fill(kNoNode); }
  // The index of `node`, adding it when new.
  int NodeIndex(const Endpoint& node);
  // Routes first..last (inclusive, within 0..16383) to `node`.
  void Assign(int first, int last, const Endpoint& node);
  // The node index serving `slot`, or kNoNode.
  int NodeFor(int slot) const { return owner_[static_cast<size_t>(slot)]; }
  const std::vector<Endpoint>& nodes() const { return nodes_; }
  // Slots no node serves.
  int Unassigned() const;

 private:
  std::array<int16_t, common::kSlotCount> owner_;
  std::vector<Endpoint> nodes_;
};

// A MOVED or ASK error reply, parsed.
struct Redirect {
  bool ask = false;  // ASK: send ASKING first, once; MOVED: the slot has a new owner
  int slot = 0;
  Endpoint target;
  friend bool operator==(const Redirect&, const Redirect&) = default;
};

// Parses "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381"; nullopt for any other error
// text. An empty host (":6381", a node that does not know its address) becomes `default_host`.
std::optional<Redirect> ParseRedirect(std::string_view error, const std::string& default_host);

// Reads CLUSTER SLOTS from host:port (blocking, `timeout` for connect and reply). Errors say
// what failed: cannot connect, not a cluster, slots without an owner.
common::Result<SlotTable> FetchSlotTable(const std::string& host, int port,
                                         std::chrono::milliseconds timeout);

}  // namespace shardctl::launcher
