#include "launcher/cluster/replica_homes.h"

#include <map>

namespace shardctl::launcher {
namespace {

// The primary among `primaries` with the fewest replicas for which `eligible` holds, preferring
// `prefer` when tied; nullptr when none is eligible.
const PlacedNode* Fewest(const std::vector<const PlacedNode*>& primaries,
                         const std::map<std::string, int>& count, const std::string& prefer,
                         const auto& eligible) {
  const PlacedNode* best = nullptr;
  for (const PlacedNode* primary : primaries) {
    if (!eligible(*primary)) continue;
    const int have = count.at(primary->id);
    if (best == nullptr || have < count.at(best->id) ||
        (have == count.at(best->id) && primary->id == prefer)) {
      best = primary;
    }
  }
  return best;
}

}  // namespace

std::vector<ReplicaMove> PlanReplicaHomes(const std::vector<PlacedNode>& nodes) {
  std::vector<const PlacedNode*> primaries;
  std::map<std::string, const PlacedNode*> by_id;
  std::map<std::string, int> count;
  for (const auto& node : nodes) {
    by_id[node.id] = &node;
    if (node.primary) {
      primaries.push_back(&node);
      count[node.id] = 0;
    }
  }
  if (primaries.empty()) return {};
  std::vector<const PlacedNode*> movable;
  int replicas = 0;
  for (const auto& node : nodes) {
    if (node.primary) continue;
    ++replicas;
    auto followed = by_id.find(node.follows);
    const bool apart =
        followed != by_id.end() && followed->second->primary && followed->second->host != node.host;
    if (apart) {
      ++count[node.follows];
    } else {
      movable.push_back(&node);
    }
  }
  const int share =
      (replicas + static_cast<int>(primaries.size()) - 1) / static_cast<int>(primaries.size());
  std::vector<const PlacedNode*> home(movable.size(), nullptr);
  for (size_t r = 0; r < movable.size(); ++r) {
    const PlacedNode* replica = movable[r];
    home[r] = Fewest(primaries, count, replica->follows, [&](const PlacedNode& p) {
      return p.host != replica->host && count.at(p.id) < share;
    });
    if (home[r] == nullptr) {
      home[r] = Fewest(primaries, count, replica->follows,
                       [&](const PlacedNode& p) { return p.host == replica->host; });
    }
    if (home[r] != nullptr) ++count[home[r]->id];
  }
  // Greedy order can strand a replica beside its primary while a swap would put both apart
  // (three hosts: A's replica took C's only off-host choice): swap where that helps.
  for (size_t x = 0; x < movable.size(); ++x) {
    if (home[x] == nullptr || home[x]->host != movable[x]->host) continue;
    for (size_t y = 0; y < movable.size(); ++y) {
      if (y == x || home[y] == nullptr) continue;
      if (home[y]->host != movable[x]->host && home[x]->host != movable[y]->host &&
          home[y]->host != movable[y]->host) {
        std::swap(home[x], home[y]);
        break;
      }
    }
  }
  std::vector<ReplicaMove> moves;
  for (size_t r = 0; r < movable.size(); ++r) {
    // No primary anywhere it could follow: leave it be.
    if (home[r] != nullptr && home[r]->id != movable[r]->follows) {
      moves.push_back({movable[r]->id, home[r]->id});
    }
  }
  return moves;
}

}  // namespace shardctl::launcher
