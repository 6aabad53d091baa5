#include "launcher/cluster/move_room.h"

#include <algorithm>
#include <map>

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

// "shard 0 would use about 9.1mb after the move (it uses 4.2mb and would receive 7992 keys, about
// 4.8mb), over 90% of its maxmemory 8mb".
std::string Describe(const std::vector<PrimaryMemory>& memory, const OutOfRoom& out,
                     const std::string& after, const std::string& limit) {
  const PrimaryMemory& primary = memory[out.primary];
  return primary.name + " would use about " + common::FormatSize(out.projected) + " " + after +
         " (it uses " + common::FormatSize(primary.used) + " and would receive " +
         std::to_string(out.incoming_keys) + " keys, about " +
         common::FormatSize(out.incoming_bytes) + "), " + limit + " " +
         common::FormatSize(primary.maxmemory);
}

struct RoomFacts {
  std::vector<PrimaryMemory> memory;
  std::vector<uint64_t> keys_moved;
};

// Memory of the primaries `moves` touch (only those: one elsewhere that does not answer is no
// reason to refuse these moves), and the keys each move carries.
common::Result<RoomFacts> AskRoomFacts(const Access& access, const std::vector<SlotOwner>& owners,
                                       const std::vector<MoveNode>& nodes,
                                       const std::vector<SlotMove>& moves) {
  RoomFacts facts;
  facts.memory.resize(nodes.size());
  std::vector<bool> asked(nodes.size(), false);
  for (const auto& move : moves) {
    for (const int i : {move.source, move.target}) {
      const auto at = static_cast<size_t>(i);
      if (asked[at]) continue;
      auto answer = AskMemory(access, owners[at], nodes[at]);
      if (!answer.ok()) return answer.error().Context("checking the room for the moves");
      facts.memory[at] = *answer;
      asked[at] = true;
    }
  }
  for (const auto& move : moves) {
    auto keys = KeysMoved(access, nodes[static_cast<size_t>(move.source)], move);
    if (!keys.ok()) return keys.error().Context("checking the room for the moves");
    facts.keys_moved.push_back(*keys);
  }
  return facts;
}

}  // namespace

std::optional<OutOfRoom> FirstOutOfRoom(const std::vector<PrimaryMemory>& memory,
                                        const std::vector<SlotMove>& moves,
                                        const std::vector<uint64_t>& keys_moved, double budget) {
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
    if (projected <= primary.maxmemory * budget) continue;
    return OutOfRoom{.primary = i,
                     .projected = projected,
                     .incoming_keys = incoming_keys[i],
                     .incoming_bytes = incoming_bytes[i]};
  }
  return std::nullopt;
}

std::optional<std::string> WhyMovesDoNotFit(const std::vector<PrimaryMemory>& memory,
                                            const std::vector<SlotMove>& moves,
                                            const std::vector<uint64_t>& keys_moved) {
  auto out = FirstOutOfRoom(memory, moves, keys_moved, kMoveMemoryBudget);
  if (!out) return std::nullopt;
  return Describe(memory, *out, "after the move", "over 90% of its maxmemory") +
         ": nothing was moved (keep more shards, or move fewer slots onto it; shardctl top "
         "shows each shard's memory)";
}

std::optional<std::string> WhyOpenMovesCannotFinish(const std::vector<PrimaryMemory>& memory,
                                                    const std::vector<SlotMove>& moves,
                                                    const std::vector<uint64_t>& keys_moved) {
  auto out = FirstOutOfRoom(memory, moves, keys_moved, kFinishMemoryBudget);
  if (!out) return std::nullopt;
  std::vector<common::SlotRange> slots;
  std::vector<std::string> sources;
  for (const auto& move : moves) {
    if (static_cast<size_t>(move.target) != out->primary) continue;
    for (const auto& range : move.ranges) {
      for (int slot = range.first; slot <= range.last; ++slot) common::AppendSlot(slots, slot);
    }
    const std::string& source = memory[static_cast<size_t>(move.source)].name;
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) {
      sources.push_back(source);
    }
  }
  std::string from;
  for (const auto& source : sources) from += (from.empty() ? "" : ", ") + source;
  const std::string& target = memory[out->primary].name;
  const bool one = slots.size() == 1 && slots.front().first == slots.front().last;
  return "the move of " + std::string(one ? "slot " : "slots ") + common::FormatSlotRanges(slots) +
         " from " + from + " into " + target +
         " was left half done (a move ran out of memory, or was stopped), and " +
         Describe(memory, *out, "after finishing it", "over 95% of its maxmemory") +
         ": nothing was moved; free memory on " + target +
         " (delete keys there, or raise its maxmemory) and run again (meanwhile every "
         "key of those slots is served from the side that holds it)";
}

common::Status CheckRoomForMoves(const Access& access, const std::vector<SlotOwner>& owners,
                                 const std::vector<MoveNode>& nodes,
                                 const std::vector<SlotMove>& moves) {
  if (moves.empty()) return common::Ok();
  auto facts = AskRoomFacts(access, owners, nodes, moves);
  if (!facts.ok()) return facts.error();
  if (auto why = WhyMovesDoNotFit(facts->memory, moves, facts->keys_moved)) {
    return Error("usage: " + *why);
  }
  return common::Ok();
}

common::Status CheckRoomToFinish(const Access& access, const std::vector<SlotOwner>& owners,
                                 const std::vector<MoveNode>& nodes,
                                 const std::vector<OpenSlot>& open) {
  std::map<std::string, int> index_of;
  for (size_t i = 0; i < nodes.size(); ++i) index_of[nodes[i].id] = static_cast<int>(i);
  std::vector<SlotMove> moves;
  for (const auto& slot : open) {
    auto source = index_of.find(slot.source.id);
    auto target = index_of.find(slot.target.id);
    if (source == index_of.end() || target == index_of.end()) continue;
    moves.push_back(
        {.source = source->second, .target = target->second, .ranges = {{slot.slot, slot.slot}}});
  }
  if (moves.empty()) return common::Ok();
  auto facts = AskRoomFacts(access, owners, nodes, moves);
  if (!facts.ok()) return facts.error();
  if (auto why = WhyOpenMovesCannotFinish(facts->memory, moves, facts->keys_moved)) {
    return Error("usage: " + *why);
  }
  return common::Ok();
}

}  // namespace shardctl::launcher
