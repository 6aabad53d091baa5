// Replica reads (--read-from prefer-replica|replica): read-only commands go to a replica of
// their slot's primary over a shared READONLY connection, round robin over the replicas the slot
// map lists. A replica whose connection fails or times out is skipped for kReplicaDownMs; with no
// healthy replica left the read goes to the primary (counted in INFO as replica_fallbacks).
#include "proxy/net/backend.h"
#include "proxy/net/worker.h"

namespace shardctl::proxy {
namespace {

constexpr uint64_t kReplicaDownMs = 2000;

}  // namespace

Backend* Worker::ReplicaFor(const SlotMap& map, size_t primary, int protocol) {
  const std::vector<common::NodeAddress>& replicas = map.ReplicasOf(primary);
  if (replicas.empty()) return nullptr;
  const uint64_t now = uv_now(&loop_);
  const size_t start = replica_turn_++;
  for (size_t i = 0; i < replicas.size(); ++i) {
    const common::NodeAddress& replica = replicas[(start + i) % replicas.size()];
    auto down = replica_down_until_.find(BackendKey(replica.host, replica.port, 2));
    if (down != replica_down_until_.end()) {
      if (down->second > now) continue;
      replica_down_until_.erase(down);
    }
    return BackendFor(replica.host, replica.port, protocol, /*readonly=*/true);
  }
  return nullptr;
}

void Worker::MarkReplicaDown(const std::string& host, int port) {
  replica_down_until_[BackendKey(host, port, 2)] = uv_now(&loop_) + kReplicaDownMs;
}

}  // namespace shardctl::proxy
