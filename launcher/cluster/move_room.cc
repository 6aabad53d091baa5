#include "launcher/cluster/move_room.h"

#include "common/size.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;

constexpr std::chrono::milliseconds kQueryTimeout{5000};

common::Result<PrimaryMemory> AskMemory(const Access& access, const SlotOwner& owner,
                                        const MoveNode& node) {
  auto connection = RedisConnection::Connect(access, node.host, node.port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  auto info = connection->Run({"INFO", "memory"});
  auto keys = connection->Run({"DBSIZE"});
  if (!info.ok() || !keys.ok()) return Error(connection->address() + ": INFO memory/DBSIZE failed");
  const uint64_t count = common::ParseInteger<uint64_t>(*keys).value_or(0);
  const uint64_t dataset = InfoNumber<uint64_t>(*info, "used_memory_dataset");
  // What the engine compares with maxmemory: replica output and AOF buffers do not count.
  const uint64_t used = InfoNumber<uint64_t>(*info, "used_memory");
  const uint64_t not_counted = InfoNumber<uint64_t>(*info, "mem_not_counted_for_evict");
  // An allkeys-* policy evicts to make room instead of refusing with OOM: a cache near its cap
  // is normal, and a move into it costs what any write does.
  const bool evicts_any_key = InfoField(*info, "maxmemory_policy").starts_with("allkeys-");
  return PrimaryMemory{
      .name = owner.shard >= 0 ? "shard " + std::to_string(owner.shard) : connection->address(),
      .used = used > not_counted ? used - not_counted : 0,
      .maxmemory = evicts_any_key ? 0 : InfoNumber<uint64_t>(*info, "maxmemory"),
      .bytes_per_key = count == 0 ? 0 : dataset / count};
}

// The keys in the slots `move` carries, counted on its source.
common::Result<uint64_t> KeysMoved(const Access& access, const MoveNode& source,
                                   const SlotMove& move) {
  auto connection = RedisConnection::Connect(access, source.host, source.port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  std::vector<Command> counts;
  for (const auto& range : move.ranges) {
    for (int slot = range.first; slot <= range.last; ++slot) {
      counts.push_back({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
    }
  }
  auto replies = connection->Pipeline(counts);
  if (!replies.ok()) return replies.error();
  uint64_t keys = 0;
  for (const auto& reply : *replies) {
    if (!reply.ok()) return Error(connection->address() + ": " + reply.error().message());
    keys += common::ParseInteger<uint64_t>(*reply).value_or(0);
  }
  return keys;
}

}  // namespace

std::optional<std::string> WhyMovesDoNotFit(const std::vector<PrimaryMemory>& memory,
                                            const std::vector<SlotMove>& moves,
                                            const std::vector<uint64_t>& keys_moved) {
  std::vector<uint64_t> incoming_keys(memory.size(), 0);
  std::vector<uint64_t> incoming_bytes(memory.size(), 0);
  for (size_t i = 0; i < moves.size(); ++i) {
    const auto target = static_cast<size_t>(moves[i].target);
    incoming_keys[target] += keys_moved[i];
    incoming_bytes[target] +=
        keys_moved[i] * memory[static_cast<size_t>(moves[i].source)].bytes_per_key;
  }
  for (size_t i = 0; i < memory.size(); ++i) {
    const PrimaryMemory& primary = memory[i];
    if (primary.maxmemory == 0 || incoming_keys[i] == 0) continue;
    const uint64_t projected = primary.used + incoming_bytes[i];
    if (projected <= primary.maxmemory * kMoveMemoryBudget) continue;
    return primary.name + " would use about " + common::FormatSize(projected) +
           " after the move (it uses " + common::FormatSize(primary.used) + " and would receive " +
           std::to_string(incoming_keys[i]) + " keys, about " +
           common::FormatSize(incoming_bytes[i]) + "), over 90% of its maxmemory " +
           common::FormatSize(primary.maxmemory) +
           ": nothing was moved (keep more shards, or move fewer slots onto it; shardctl top "
           "shows each shard's memory)";
  }
  return std::nullopt;
}

common::Status CheckRoomForMoves(const Access& access, const std::vector<SlotOwner>& owners,
                                 const std::vector<MoveNode>& nodes,
                                 const std::vector<SlotMove>& moves) {
  if (moves.empty()) return common::Ok();
  // Only the primaries a move touches are asked: one elsewhere that does not answer is no
  // reason to refuse these moves.
  std::vector<PrimaryMemory> memory(nodes.size());
  std::vector<bool> asked(nodes.size(), false);
  for (const auto& move : moves) {
    for (const int i : {move.source, move.target}) {
      const auto at = static_cast<size_t>(i);
      if (asked[at]) continue;
      auto answer = AskMemory(access, owners[at], nodes[at]);
      if (!answer.ok()) return answer.error().Context("checking the room for the moves");
      memory[at] = *answer;
      asked[at] = true;
    }
  }
  std::vector<uint64_t> keys_moved;
  for (const auto& move : moves) {
    auto keys = KeysMoved(access, nodes[static_cast<size_t>(move.source)], move);
    if (!keys.ok()) return keys.error().Context("checking the room for the moves");
    keys_moved.push_back(*keys);
  }
  if (auto why = WhyMovesDoNotFit(memory, moves, keys_moved)) return Error("usage: " + *why);
  return common::Ok();
}

}  // namespace shardctl::launcher
