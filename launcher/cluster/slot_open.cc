// Slots an interrupted move left MIGRATING or IMPORTING: found from each primary's own markers in
// CLUSTER NODES, and finished toward their target.
#include <map>

#include "common/cluster_text.h"
#include "launcher/cluster/slot_mover_internal.h"

namespace shardctl::launcher {

common::Result<std::vector<OpenSlot>> FindOpenSlots(const Access& access,
                                                    const std::vector<MoveNode>& primaries,
                                                    std::chrono::milliseconds timeout) {
  std::map<std::string, MoveNode> by_id;
  for (const auto& node : primaries) by_id[node.id] = node;
  auto node_of = [&](const std::string& id) {
    auto it = by_id.find(id);
    return it == by_id.end() ? MoveNode{.id = id, .host = "", .port = 0} : it->second;
  };
  std::map<int, OpenSlot> open;
  for (const auto& node : primaries) {
    auto connection = RedisConnection::Connect(access, node.host, node.port, timeout);
    if (!connection.ok()) return connection.error();
    auto text = connection->Run({"CLUSTER", "NODES"});
    if (!text.ok()) return common::Error(connection->address() + ": " + text.error().message());
    auto lines = common::ParseClusterNodes(*text);
    if (!lines.ok()) return common::Error(connection->address() + ": " + lines.error().message());
    const common::NodeLine* myself = common::FindMyself(*lines);
    if (myself == nullptr) continue;
    for (const auto& migration : myself->migrations) {
      OpenSlot slot{.slot = migration.slot, .source = node, .target = node};
      (migration.importing ? slot.source : slot.target) = node_of(migration.peer_id);
      open.try_emplace(migration.slot, slot);
    }
  }
  std::vector<OpenSlot> slots;
  for (auto& [slot, entry] : open) slots.push_back(std::move(entry));
  return slots;
}

common::Status FinishOpenSlots(const std::vector<OpenSlot>& open, const MoverOptions& options) {
  mover_internal::ProgressSink sink(options);
  for (const auto& slot : open) {
    // A marker naming a node that is no longer a primary here cannot be finished: clear it.
    if (slot.source.host.empty() || slot.target.host.empty()) {
      const MoveNode& holder = slot.source.host.empty() ? slot.target : slot.source;
      auto connection = mover_internal::ConnectTo(holder, options);
      if (!connection.ok()) return connection.error();
      auto cleared = connection->Run({"CLUSTER", "SETSLOT", std::to_string(slot.slot), "STABLE"});
      if (!cleared.ok())
        return common::Error(connection->address() + ": " + cleared.error().message());
      continue;
    }
    const MoveTask task{
        .source = slot.source, .target = slot.target, .ranges = {{slot.slot, slot.slot}}};
    auto migration = mover_internal::SlotMigration::Open(task, options);
    if (!migration.ok()) return migration.error();
    if (auto moved = migration->MoveBatch({slot.slot}, sink, true); !moved.ok()) {
      return common::Error("slot " + std::to_string(slot.slot) + ": " + moved.error().message());
    }
  }
  return common::Ok();
}

}  // namespace shardctl::launcher
