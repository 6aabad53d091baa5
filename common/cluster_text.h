// The one reader of what Redis Cluster nodes say about the cluster, for launcher, proxy and bench
// alike (a second parser of the same wire text is a bug waiting to diverge):
//
//   -MOVED 3999 127.0.0.1:6381         ParseRedirect: the slot lives elsewhere now
//   -ASK 3999 [::1]:6381               ParseRedirect: this key is being imported there
//   CLUSTER SLOTS (RESP2 or RESP3)     SlotTable::FromClusterSlots
//   CLUSTER NODES, nodes.conf          ParseClusterNodes -> NodeLine, SlotTable::FromClusterNodes
//
// Pure: text in, values out. Hosts are kept without IPv6 brackets (common/endpoint.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "common/slots.h"

namespace shardctl::common {

// ---------------------------------------------------------------------------------------------
// MOVED / ASK

struct Redirect {
  bool ask = false;  // ASK: send ASKING first, once; MOVED: the slot has a new owner
  int slot = 0;
  Endpoint target;
  friend bool operator==(const Redirect&, const Redirect&) = default;
};

// Parses an error reply's text, "MOVED 3999 127.0.0.1:6381" or "ASK 3999 [::1]:6381", with or
// without the leading '-' and the trailing CRLF. Older servers print an IPv6 target without
// brackets ("::1:6381"): the port is always after the last colon. An empty host (":6381", a node
// that does not know its own address) becomes `default_host`. nullopt for any other error, or a
// MOVED/ASK whose slot or port is not valid (the caller then passes Redis' error on as it is).
std::optional<Redirect> ParseRedirect(std::string_view error, std::string_view default_host = "");

// ---------------------------------------------------------------------------------------------
// CLUSTER NODES

// A slot in the middle of a move, as CLUSTER NODES marks it on the source ("[93->-<target id>]")
// and on the target ("[93-<-<source id>]").
struct SlotMigration {
  int slot = 0;
  bool importing = false;  // false: migrating away to peer_id
  std::string peer_id;
  friend bool operator==(const SlotMigration&, const SlotMigration&) = default;
};

// One node line: <id> <ip:port@cport[,hostname]> <flags> <master> <ping> <pong> <epoch> <link>
// <slot>...
struct NodeLine {
  std::string id;
  Endpoint address;       // the client address; host "" when the node does not know it yet
  int bus_port = 0;       // 0 when the line has no "@cport"
  std::string hostname;   // after the ',' (Redis 7+), "" when absent
  std::string flags;      // "myself,master", "slave", "master,fail?", "handshake,noaddr" ...
  std::string master_id;  // "-" for primaries
  uint64_t config_epoch = 0;
  std::string link_state;        // "connected" / "disconnected"
  std::vector<SlotRange> slots;  // owned ranges; migration markers are not owned slots
  std::vector<SlotMigration> migrations;

  // True when `flag` is one of the comma-separated flags, not merely part of one ("fail" is not
  // in "slave,nofailover").
  bool HasFlag(std::string_view flag) const;
  bool IsPrimary() const { return HasFlag("master"); }
  bool IsReplica() const { return HasFlag("slave"); }
  bool IsMyself() const { return HasFlag("myself"); }
  bool Failing() const { return HasFlag("fail") || HasFlag("fail?") || HasFlag("noaddr"); }
  bool HasSlots() const { return !slots.empty(); }
};

// Parses CLUSTER NODES output or a nodes.conf file (whose "vars ..." line is skipped, as are blank
// lines). Errors name the line and what is wrong in it ("CLUSTER NODES: line 3: bad slot range
// 'x'").
Result<std::vector<NodeLine>> ParseClusterNodes(std::string_view text);

// The node marked "myself", or nullptr.
const NodeLine* FindMyself(const std::vector<NodeLine>& nodes);

// The node with this ID, or nullptr.
const NodeLine* FindNode(const std::vector<NodeLine>& nodes, std::string_view id);

// ---------------------------------------------------------------------------------------------
// The slot table

// A node the table routes to: its address and, when the reply said, its 40-hex-digit ID.
struct NodeAddress : Endpoint {
  std::string id;
  // The node's host name when the cluster gives one (cluster-announce-hostname); `host` is then
  // still its IP address. With cluster-preferred-endpoint-type hostname, redirects name this.
  std::string name;
  friend bool operator==(const NodeAddress&, const NodeAddress&) = default;
};

// Which primary serves each of the 16384 slots, and each primary's replicas. Primaries are
// numbered in the order first seen and identified by their address. Built whole from one node's
// answer; a load generator may also Assign() what MOVED redirects teach it.
class SlotTable {
 public:
  // PrimaryFor() of a slot no primary serves.
  static constexpr int kNoNode = -1;

  SlotTable();

  // From one complete CLUSTER SLOTS reply frame, RESP2 or RESP3 (Redis 7 sends the per-node
  // metadata as a map over RESP3): [first, last, primary, replica...] per range, each node
  // [endpoint, port, id, {ip|hostname: ...}]. With cluster-preferred-endpoint-type hostname the
  // endpoint is a host name and the metadata holds the IP: the table keeps the IP as `host` and
  // the name as `name`, so routing never needs DNS. An empty host, or "?" (the node's preferred
  // endpoint is unknown), stands for `asked_host`, the address the reply came from. Errors name the
  // range and the problem
  // ("CLUSTER SLOTS: range 3: slot range 0-16384 out of 0-16383").
  static Result<SlotTable> FromClusterSlots(std::string_view reply,
                                            std::string_view asked_host = "");

  // From parsed CLUSTER NODES lines: primaries' owned ranges, and replicas ("slave", not failing)
  // attached to their primary. A slot being migrated still belongs to its source until SETSLOT
  // NODE; clients follow ASK/MOVED for the keys already moved.
  static Result<SlotTable> FromNodeLines(const std::vector<NodeLine>& nodes);
  // ParseClusterNodes + FromNodeLines.
  static Result<SlotTable> FromClusterNodes(std::string_view text);

  // The index into primaries() of the node serving `slot` (0..16383), or kNoNode.
  int PrimaryFor(int slot) const { return owner_[static_cast<size_t>(slot)]; }
  // Each primary serving at least one slot (or added), once, in the order first seen.
  const std::vector<NodeAddress>& primaries() const { return primaries_; }
  // The replicas of primaries()[primary], in the order the cluster listed them.
  const std::vector<NodeAddress>& ReplicasOf(size_t primary) const;
  // Slots no primary serves.
  int Unassigned() const;
  // The IP address of the node (primary or replica) whose host name is `name`, for redirects
  // that name hosts; nullopt when no node of the table has that name.
  std::optional<std::string> AddressOfName(std::string_view name) const;

  // The index of the primary at `node`'s address, adding it when new.
  int AddPrimary(const NodeAddress& node);
  // Routes first..last (inclusive) to `node`, adding it when new. Errors when the range is not
  // within 0..16383.
  Status Assign(int first, int last, const NodeAddress& node);

 private:
  void AddReplica(size_t primary, const NodeAddress& replica);

  std::array<int16_t, kSlotCount> owner_;
  std::vector<NodeAddress> primaries_;
  std::vector<std::vector<NodeAddress>> replicas_;  // parallel to primaries_
};

// ---------------------------------------------------------------------------------------------
// INFO, CLUSTER INFO

// Value of `field` in INFO / CLUSTER INFO text ("field:value\r\n" lines), or "" when absent.
std::string InfoField(std::string_view info, std::string_view field);

}  // namespace shardctl::common
