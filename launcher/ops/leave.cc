#include "launcher/ops/leave.h"

#include <algorithm>
#include <set>

#include "common/cluster_text.h"
#include "launcher/cluster/failover.h"
#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/replica_homes.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

constexpr std::chrono::milliseconds kQueryTimeout{5000};
constexpr std::chrono::seconds kFailoverTimeout{20};

void Step(const LeaveRequest& request, const std::string& what) {
  if (request.on_step) request.on_step(what);
}

int ShardAtPort(const Plan& plan, int port) {
  for (const auto& shard : plan.shards) {
    if (shard.port == port) return shard.index;
  }
  return -1;
}

// Our primaries that own slots and have a live replica on another host: that replica takes over.
// Returns the shards handed over; one whose replicas all refuse keeps its slots for the drain.
std::vector<int> FailOverToOtherHosts(const Access& access, const Plan& plan,
                                      const std::vector<common::NodeLine>& lines) {
  std::vector<int> moved;
  for (const auto& line : lines) {
    if (!line.IsPrimary() || !line.HasSlots() ||
        !IsOurNode(plan, line.address.host, line.address.port)) {
      continue;
    }
    for (const auto& replica : lines) {
      if (replica.master_id != line.id || replica.Failing() || replica.IsPrimary() ||
          IsOurNode(plan, replica.address.host, replica.address.port)) {
        continue;
      }
      auto promoted = PromoteReplica(access, replica.address.host, replica.address.port,
                                     FailoverMode::kGraceful, kFailoverTimeout);
      if (promoted.ok()) {
        moved.push_back(ShardAtPort(plan, line.address.port));
        break;
      }
    }
  }
  return moved;
}

// Other hosts' replicas that follow one of our nodes follow a primary that stays.
Result<int> RehomeOrphans(const Access& access, const Plan& plan,
                          const std::vector<common::NodeLine>& lines) {
  std::vector<PlacedNode> remaining;
  std::set<std::string> orphans;
  std::set<std::string> ours;
  for (const auto& line : lines) {
    if (IsOurNode(plan, line.address.host, line.address.port)) ours.insert(line.id);
  }
  for (const auto& line : lines) {
    if (ours.count(line.id) || line.Failing()) continue;
    const bool orphan = !line.IsPrimary() && ours.count(line.master_id) > 0;
    if (orphan) orphans.insert(line.id);
    remaining.push_back({.id = line.id,
                         .host = line.address.host,
                         .primary = line.IsPrimary(),
                         .follows = orphan || line.IsPrimary() ? "" : line.master_id});
  }
  int rehomed = 0;
  for (const auto& move : PlanReplicaHomes(remaining)) {
    if (!orphans.count(move.replica)) continue;
    for (const auto& line : lines) {
      if (line.id != move.replica) continue;
      auto connection =
          RedisConnection::Connect(access, line.address.host, line.address.port, kQueryTimeout);
      if (!connection.ok()) return connection.error();
      auto replicated = connection->Run({"CLUSTER", "REPLICATE", move.primary});
      if (!replicated.ok()) {
        return Error(connection->address() +
                     ": CLUSTER REPLICATE: " + replicated.error().message());
      }
      ++rehomed;
    }
  }
  return rehomed;
}

}  // namespace

Result<LeaveResult> HandOverToCluster(const Access& access, const Plan& plan,
                                      const LeaveRequest& request) {
  auto lines = ReadClusterNodes(access, plan, kQueryTimeout);
  if (!lines.ok()) return lines.error();
  bool others = false;
  for (const auto& line : *lines) {
    others = others || (line.IsPrimary() && !line.Failing() &&
                        !IsOurNode(plan, line.address.host, line.address.port));
  }
  if (!others) {
    return Error(
        "usage: no other host's primary is in the cluster, so there is nobody to leave "
        "the slots to (stop this deployment with shardctl down)");
  }
  LeaveResult result;
  Step(request, "handing primaries over to their replicas on other hosts");
  result.failed_over = FailOverToOtherHosts(access, plan, *lines);
  auto mid = ReadClusterNodes(access, plan, kQueryTimeout);
  if (!mid.ok()) return mid.error();
  const bool still_own = std::any_of(mid->begin(), mid->end(), [&](const common::NodeLine& line) {
    return line.IsPrimary() && line.HasSlots() &&
           IsOurNode(plan, line.address.host, line.address.port);
  });
  if (still_own) {  // else nothing moves: the other hosts' balance is not ours to change
    Step(request, "moving the remaining slots to other hosts' primaries");
    std::set<int> drain;
    for (const auto& shard : plan.shards) drain.insert(shard.index);
    auto reshard = Reshard(access, plan,
                           {.threshold = 0,
                            .drain_shards = drain,
                            .on_progress = request.on_progress,
                            .stop = request.stop});
    if (!reshard.ok()) return reshard.error().Context("move slots");
    result.reshard = *reshard;
  }
  auto after = ReadClusterNodes(access, plan, kQueryTimeout);
  if (!after.ok()) return after.error();
  for (const auto& line : *after) {
    if (!IsOurNode(plan, line.address.host, line.address.port)) continue;
    if (line.IsPrimary() && line.HasSlots()) {
      return Error("shard " + std::to_string(ShardAtPort(plan, line.address.port)) +
                   " still owns slots after the moves; nothing was stopped (run down --leave "
                   "again)");
    }
    result.our_ids.push_back(line.id);
  }
  auto rehomed = RehomeOrphans(access, plan, *after);
  if (!rehomed.ok()) return rehomed.error().Context("re-home replicas");
  result.replicas_rehomed = *rehomed;
  for (const auto& line : *after) {
    if (!line.Failing() && !IsOurNode(plan, line.address.host, line.address.port)) {
      result.remaining.push_back(line.address);
    }
  }
  return result;
}

common::Status ForgetLeftNodes(const Access& access, const LeaveResult& left) {
  return ForgetNodes(access, left.remaining, left.our_ids);
}

}  // namespace shardctl::launcher
