#include "common/cluster_text.h"

#include <algorithm>

#include "common/numbers.h"
#include "common/reply_tree.h"

namespace shardctl::common {
namespace {

constexpr int kMaxPort = 65535;

// The non-empty pieces of `text` between `separator`s.
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

std::string_view FirstLine(std::string_view text) {
  return text.substr(0, text.find_first_of("\r\n"));
}

// "ip:port@cport[,hostname[,key=value...]]" (nodes.conf of Valkey adds "tls-port=0,shard-id=..."
// after the hostname, which may be empty). Unlike a redirect's target, port 0 is valid here: a
// node still in handshake, or one that lost its address ("noaddr"), prints ":0@0".
Status ParseNodeAddress(std::string_view field, NodeLine& node) {
  const auto bad = [&] { return Error("bad address '" + std::string(field) + "'"); };
  const size_t comma = field.find(',');
  if (comma != std::string_view::npos) {
    std::string_view hostname = field.substr(comma + 1);
    hostname = hostname.substr(0, hostname.find(','));
    if (hostname.find('=') == std::string_view::npos) node.hostname = std::string(hostname);
  }
  std::string_view address = field.substr(0, comma);
  const size_t at = address.find('@');
  if (at != std::string_view::npos) {
    std::optional<int> bus = ParseIntegerIn(address.substr(at + 1), 0, kMaxPort);
    if (!bus) return bad();
    node.bus_port = *bus;
    address = address.substr(0, at);
  }
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad();
  std::optional<int> port = ParseIntegerIn(address.substr(colon + 1), 0, kMaxPort);
  if (!port) return bad();
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  node.address = {std::string(host), *port};
  return Ok();
}

// "93->-<id>" (migrating to id) or "93-<-<id>" (importing from id), without the brackets.
Status ParseMigration(std::string_view marker, NodeLine& node) {
  for (const auto& [arrow, importing] : {std::pair{"->-", false}, std::pair{"-<-", true}}) {
    const size_t at = marker.find(arrow);
    if (at == std::string_view::npos) continue;
    std::optional<int> slot = ParseIntegerIn(marker.substr(0, at), 0, kSlotCount - 1);
    if (!slot) break;
    node.migrations.push_back({*slot, importing, std::string(marker.substr(at + 3))});
    return Ok();
  }
  return Error("bad migration marker '[" + std::string(marker) + "]'");
}

// "0-5460" or "100".
Status ParseSlotRange(std::string_view text, NodeLine& node) {
  const size_t dash = text.find('-');
  std::optional<int> first = ParseIntegerIn(text.substr(0, dash), 0, kSlotCount - 1);
  std::optional<int> last = dash == std::string_view::npos
                                ? first
                                : ParseIntegerIn(text.substr(dash + 1), 0, kSlotCount - 1);
  if (!first || !last || *first > *last) {
    return Error("bad slot range '" + std::string(text) + "'");
  }
  node.slots.push_back({*first, *last});
  return Ok();
}

Result<NodeLine> ParseNodeLine(std::string_view line) {
  const std::vector<std::string_view> fields = SplitOn(line, ' ');
  if (fields.size() < 8) return Error("expected at least 8 fields");
  NodeLine node;
  node.id = std::string(fields[0]);
  if (auto parsed = ParseNodeAddress(fields[1], node); !parsed) return parsed.error();
  node.flags = std::string(fields[2]);
  node.master_id = std::string(fields[3]);
  std::optional<uint64_t> epoch = ParseInteger<uint64_t>(fields[6]);
  if (!epoch) return Error("bad config epoch '" + std::string(fields[6]) + "'");
  node.config_epoch = *epoch;
  node.link_state = std::string(fields[7]);
  for (size_t i = 8; i < fields.size(); ++i) {
    std::string_view slot = fields[i];
    Status parsed = slot.starts_with('[') && slot.ends_with(']')
                        ? ParseMigration(slot.substr(1, slot.size() - 2), node)
                        : ParseSlotRange(slot, node);
    if (!parsed) return parsed.error();
  }
  return node;
}

// One node of a CLUSTER SLOTS range: [host, port, id, ...].
Result<NodeAddress> SlotsEntryNode(const ReplyNode& node, std::string_view asked_host) {
  if (node.type != '*' || node.elements.size() < 2 || node.elements[1].type != ':') {
    return Error("node is not a [host, port, ...] array");
  }
  NodeAddress address;
  address.host = std::string(node.elements[0].text);
  // Redis: an empty endpoint means "the address you asked me on" (a node that has not learnt
  // its own IP yet, e.g. a one-node cluster); "?" means its preferred endpoint is unknown.
  const bool placeholder = address.host.empty() || address.host == "?";
  if (placeholder) address.host = std::string(asked_host);
  if (node.elements[1].integer < 0 || node.elements[1].integer > kMaxPort) {
    return Error("port " + std::to_string(node.elements[1].integer) + " out of range");
  }
  address.port = static_cast<int>(node.elements[1].integer);
  if (node.elements.size() >= 3) address.id = std::string(node.elements[2].text);
  if (node.elements.size() >= 4 && node.elements[3].IsAggregate()) {
    const auto& metadata = node.elements[3].elements;  // key, value, key, value, ...
    for (size_t k = 0; k + 1 < metadata.size(); k += 2) {
      const std::string value(metadata[k + 1].text);
      if (metadata[k].text == "hostname") address.name = value;
      if (metadata[k].text == "ip" && !value.empty()) {
        // The preferred endpoint was a name (or unknown): keep the name, route by the IP.
        if (!placeholder && address.host != value) address.name = address.host;
        address.host = value;
      }
    }
  }
  return address;
}

}  // namespace

std::optional<Redirect> ParseRedirect(std::string_view error, std::string_view default_host) {
  if (error.starts_with('-')) error.remove_prefix(1);
  error = FirstLine(error);
  Redirect redirect;
  if (error.starts_with("MOVED ")) {
    error.remove_prefix(6);
  } else if (error.starts_with("ASK ")) {
    redirect.ask = true;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const std::vector<std::string_view> words = SplitOn(error, ' ');
  if (words.size() != 2) return std::nullopt;
  std::optional<int> slot = ParseIntegerIn(words[0], 0, kSlotCount - 1);
  std::optional<Endpoint> target = ParseServerEndpoint(words[1]);
  if (!slot || !target) return std::nullopt;
  redirect.slot = *slot;
  redirect.target = std::move(*target);
  if (redirect.target.host.empty()) redirect.target.host = std::string(default_host);
  return redirect;
}

bool NodeLine::HasFlag(std::string_view flag) const {
  for (std::string_view one : SplitOn(flags, ',')) {
    if (one == flag) return true;
  }
  return false;
}

Result<std::vector<NodeLine>> ParseClusterNodes(std::string_view text) {
  std::vector<NodeLine> nodes;
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(' ') == std::string_view::npos || line.starts_with("vars ")) {
      continue;
    }
    auto node = ParseNodeLine(line);
    if (!node) return node.error().Context("line " + std::to_string(line_number));
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

const NodeLine* FindMyself(const std::vector<NodeLine>& nodes) {
  auto found =
      std::find_if(nodes.begin(), nodes.end(), [](const NodeLine& n) { return n.IsMyself(); });
  return found == nodes.end() ? nullptr : &*found;
}

const NodeLine* FindNode(const std::vector<NodeLine>& nodes, std::string_view id) {
  auto found =
      std::find_if(nodes.begin(), nodes.end(), [&](const NodeLine& n) { return n.id == id; });
  return found == nodes.end() ? nullptr : &*found;
}

SlotTable::SlotTable() { owner_.fill(static_cast<int16_t>(kNoNode)); }

std::optional<std::string> SlotTable::AddressOfName(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  for (size_t i = 0; i < primaries_.size(); ++i) {
    if (primaries_[i].name == name) return primaries_[i].host;
    for (const auto& replica : replicas_[i]) {
      if (replica.name == name) return replica.host;
    }
  }
  return std::nullopt;
}

int SlotTable::AddPrimary(const NodeAddress& node) {
  auto found = std::find_if(primaries_.begin(), primaries_.end(), [&](const NodeAddress& known) {
    return known.host == node.host && known.port == node.port;
  });
  if (found != primaries_.end()) return static_cast<int>(found - primaries_.begin());
  primaries_.push_back(node);
  replicas_.emplace_back();
  return static_cast<int>(primaries_.size()) - 1;
}

Status SlotTable::Assign(int first, int last, const NodeAddress& node) {
  if (first < 0 || last >= kSlotCount || first > last) {
    return Error("slot range " + std::to_string(first) + "-" + std::to_string(last) +
                 " out of 0-16383");
  }
  const auto index = static_cast<int16_t>(AddPrimary(node));
  std::fill(owner_.begin() + first, owner_.begin() + last + 1, index);
  return Ok();
}

void SlotTable::AddReplica(size_t primary, const NodeAddress& replica) {
  std::vector<NodeAddress>& replicas = replicas_[primary];
  if (std::find(replicas.begin(), replicas.end(), replica) == replicas.end()) {
    replicas.push_back(replica);
  }
}

const std::vector<NodeAddress>& SlotTable::ReplicasOf(size_t primary) const {
  return replicas_.at(primary);
}

int SlotTable::Unassigned() const {
  return static_cast<int>(std::count(owner_.begin(), owner_.end(), kNoNode));
}

Result<SlotTable> SlotTable::FromClusterSlots(std::string_view reply, std::string_view asked_host) {
  auto root = DecodeReply(reply);
  if (!root) return root.error().Context("CLUSTER SLOTS");
  if (root->type == '-') return Error("CLUSTER SLOTS: " + std::string(root->text));
  if (root->type != '*') return Error("CLUSTER SLOTS: reply is not an array");
  SlotTable table;
  for (size_t i = 0; i < root->elements.size(); ++i) {
    const ReplyNode& entry = root->elements[i];
    const std::string where = "CLUSTER SLOTS: range " + std::to_string(i);
    if (entry.type != '*' || entry.elements.size() < 3) {
      return Error(where + ": not a [first, last, node...] array");
    }
    if (entry.elements[0].type != ':' || entry.elements[1].type != ':') {
      return Error(where + ": slot bounds are not integers");
    }
    auto primary = SlotsEntryNode(entry.elements[2], asked_host);
    if (!primary) return primary.error().Context(where + ": primary");
    auto assigned = table.Assign(static_cast<int>(entry.elements[0].integer),
                                 static_cast<int>(entry.elements[1].integer), *primary);
    if (!assigned) return assigned.error().Context(where);
    const auto index = static_cast<size_t>(table.AddPrimary(*primary));
    for (size_t at = 3; at < entry.elements.size(); ++at) {
      auto replica = SlotsEntryNode(entry.elements[at], asked_host);
      if (!replica) return replica.error().Context(where + ": replica");
      table.AddReplica(index, *replica);
    }
  }
  return table;
}

Result<SlotTable> SlotTable::FromNodeLines(const std::vector<NodeLine>& nodes) {
  SlotTable table;
  for (const NodeLine& node : nodes) {
    if (!node.IsPrimary()) continue;
    for (const SlotRange& range : node.slots) {
      auto assigned = table.Assign(range.first, range.last, {node.address, node.id, node.hostname});
      if (!assigned) return assigned.error().Context("node " + node.id);
    }
  }
  for (const NodeLine& node : nodes) {
    if (!node.IsReplica() || node.HasFlag("fail")) continue;
    for (size_t i = 0; i < table.primaries_.size(); ++i) {
      if (table.primaries_[i].id == node.master_id)
        table.AddReplica(i, {node.address, node.id, node.hostname});
    }
  }
  return table;
}

Result<SlotTable> SlotTable::FromClusterNodes(std::string_view text) {
  auto nodes = ParseClusterNodes(text);
  if (!nodes) return nodes.error().Context("CLUSTER NODES");
  return FromNodeLines(*nodes);
}

std::string InfoField(std::string_view info, std::string_view field) {
  for (size_t at = info.find(field); at != std::string_view::npos; at = info.find(field, at + 1)) {
    const size_t colon = at + field.size();
    if ((at == 0 || info[at - 1] == '\n') && colon < info.size() && info[colon] == ':') {
      return std::string(info.substr(colon + 1, info.find_first_of("\r\n", colon) - colon - 1));
    }
  }
  return "";
}

}  // namespace shardctl::common
