#include "proxy/slot_map.h"

#include <algorithm>
#include <charconv>

#include "proxy/reply_tree.h"

namespace shardctl::proxy {
namespace {

using common::Error;
using common::Result;
using common::Status;

bool ParseInt(std::string_view text, int& out) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

bool HasFlag(std::string_view flags, std::string_view flag) {
  const std::vector<std::string_view> all = SplitOn(flags, ',');
  return std::find(all.begin(), all.end(), flag) != all.end();
}

// "host:port@cport[,hostname]"; the host may be an IPv6 address with colons of its own.
Result<BackendAddress> ParseNodeAddress(std::string_view field) {
  field = field.substr(0, field.find('@'));
  const size_t colon = field.rfind(':');
  BackendAddress address;
  if (colon == std::string_view::npos || !ParseInt(field.substr(colon + 1), address.port)) {
    return Error("bad address '" + std::string(field) + "'");
  }
  address.host = std::string(field.substr(0, colon));
  return address;
}

// "0-5460" or "100"; migration markers "[...]" are the caller's to skip.
Status ParseRange(std::string_view text, int& first, int& last) {
  const size_t dash = text.find('-');
  const bool ok = dash == std::string_view::npos ? ParseInt(text, first) && ParseInt(text, last)
                                                 : ParseInt(text.substr(0, dash), first) &&
                                                       ParseInt(text.substr(dash + 1), last);
  if (!ok) return Error("bad slot range '" + std::string(text) + "'");
  return {};
}

Result<BackendAddress> SlotsEntryNode(const ReplyNode& entry, size_t at,
                                      std::string_view asked_host) {
  if (entry.type != '*' || entry.elements.size() < 3)
    return Error("not a [first, last, node] array");
  const ReplyNode& node = entry.elements[at];
  if (node.type != '*' || node.elements.size() < 2 || node.elements[1].type != ':') {
    return Error("primary is not a [host, port, ...] array");
  }
  BackendAddress address;
  address.host = std::string(node.elements[0].text);
  // Redis: an empty endpoint means "the address you asked me on" (a node that has not learnt
  // its own IP yet, e.g. a one-node cluster).
  if (address.host.empty()) address.host = std::string(asked_host);
  address.port = static_cast<int>(node.elements[1].integer);
  if (node.elements.size() >= 3) address.node_id = std::string(node.elements[2].text);
  return address;
}

}  // namespace

SlotMap::SlotMap() { owner_.fill(static_cast<int16_t>(kNoBackend)); }

Status SlotMap::Assign(int first, int last, const BackendAddress& backend) {
  if (first < 0 || last >= common::kSlotCount || first > last) {
    return Error("slot range " + std::to_string(first) + "-" + std::to_string(last) +
                 " out of 0-16383");
  }
  auto it = std::find(backends_.begin(), backends_.end(), backend);
  const auto index = static_cast<int16_t>(it - backends_.begin());
  if (it == backends_.end()) {
    backends_.push_back(backend);
    replicas_.emplace_back();
  }
  std::fill(owner_.begin() + first, owner_.begin() + last + 1, index);
  return {};
}

int SlotMap::UnassignedSlots() const {
  return static_cast<int>(std::count(owner_.begin(), owner_.end(), kNoBackend));
}

Result<SlotMap> SlotMap::FromClusterSlots(std::string_view reply, std::string_view asked_host) {
  auto root = DecodeReply(reply);
  if (!root) return root.error().Context("CLUSTER SLOTS");
  if (root->type == '-') return Error("CLUSTER SLOTS: " + std::string(root->text));
  if (root->type != '*') return Error("CLUSTER SLOTS: reply is not an array");
  SlotMap map;
  for (size_t i = 0; i < root->elements.size(); ++i) {
    const ReplyNode& entry = root->elements[i];
    const std::string where = "CLUSTER SLOTS: range " + std::to_string(i);
    auto primary = SlotsEntryNode(entry, 2, asked_host);
    if (!primary) return primary.error().Context(where);
    if (entry.elements[0].type != ':' || entry.elements[1].type != ':') {
      return Error(where + ": slot bounds are not integers");
    }
    auto assigned = map.Assign(static_cast<int>(entry.elements[0].integer),
                               static_cast<int>(entry.elements[1].integer), *primary);
    if (!assigned) return assigned.error().Context(where);
    const size_t index =
        std::find(map.backends_.begin(), map.backends_.end(), *primary) - map.backends_.begin();
    for (size_t at = 3; at < entry.elements.size(); ++at) {
      auto replica = SlotsEntryNode(entry, at, asked_host);
      if (!replica) return replica.error().Context(where + ": replica");
      auto& replicas = map.replicas_[index];
      if (std::find(replicas.begin(), replicas.end(), *replica) == replicas.end()) {
        replicas.push_back(*replica);
      }
    }
  }
  return map;
}

const std::vector<BackendAddress>& SlotMap::ReplicasOf(size_t backend) const {
  return replicas_.at(backend);
}

Result<SlotMap> SlotMap::FromClusterNodes(std::string_view text) {
  SlotMap map;
  std::vector<std::pair<std::string, BackendAddress>> replicas;  // primary id, replica
  int line_number = 0;
  for (std::string_view line : SplitOn(text, '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const std::string where = "CLUSTER NODES: line " + std::to_string(line_number);
    // id addr flags master ping pong epoch link-state slot...
    const std::vector<std::string_view> fields = SplitOn(line, ' ');
    if (fields.size() < 8) return Error(where + ": expected at least 8 fields");
    auto address = ParseNodeAddress(fields[1]);
    if (!address) return address.error().Context(where);
    if (HasFlag(fields[2], "slave") && !HasFlag(fields[2], "fail")) {
      address->node_id = std::string(fields[0]);
      replicas.emplace_back(std::string(fields[3]), *address);
      continue;
    }
    if (!HasFlag(fields[2], "master")) continue;
    address->node_id = std::string(fields[0]);
    for (size_t i = 8; i < fields.size(); ++i) {
      if (fields[i].front() == '[') continue;
      int first = 0;
      int last = 0;
      auto parsed = ParseRange(fields[i], first, last);
      if (parsed) parsed = map.Assign(first, last, *address);
      if (!parsed) return parsed.error().Context(where);
    }
  }
  for (auto& [primary_id, replica] : replicas) {
    for (size_t i = 0; i < map.backends_.size(); ++i) {
      if (map.backends_[i].node_id == primary_id) map.replicas_[i].push_back(replica);
    }
  }
  return map;
}

}  // namespace shardctl::proxy
