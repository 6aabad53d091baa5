#include "launcher/ops/rebalance.h"

#include <algorithm>
#include <map>
#include <thread>

#include "common/cluster_text.h"
#include "common/endpoint.h"
#include "launcher/cluster/load_balance.h"
#include "launcher/cluster/move_room.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/slot_migrations.h"
#include "launcher/cluster/slot_stats.h"
#include "launcher/ops/target.h"
#include "launcher/state/data_lock.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

constexpr std::chrono::milliseconds kQueryTimeout{5000};

// True when the node at host:port calls itself a primary (ROLE).
bool SaysPrimary(const Access& access, const std::string& host, int port,
                 std::chrono::milliseconds timeout) {
  auto connection = RedisConnection::Connect(access, host, port, timeout);
  if (!connection.ok()) return false;
  auto role = connection->Run({"ROLE"});
  return role.ok() && role->rfind("master", 0) == 0;
}

// Each slot's weight for `by`: its key count, or its keys times its owner's bytes per key.
Result<std::vector<double>> SlotWeights(const Access& access, const LivePrimaries& primaries,
                                        BalanceBy by) {
  if (by == BalanceBy::kSlots) return std::vector<double>{};
  std::vector<double> weights(common::kSlotCount, 0.0);
  for (size_t i = 0; i < primaries.owners.size(); ++i) {
    const MoveNode& node = primaries.nodes[i];
    auto connection = RedisConnection::Connect(access, node.host, node.port, kQueryTimeout);
    if (!connection.ok()) return connection.error();
    double bytes_per_key = 1;
    if (by == BalanceBy::kMemory) {
      auto info = connection->Run({"INFO", "memory"});
      auto keys = connection->Run({"DBSIZE"});
      if (!info.ok() || !keys.ok()) return Error(connection->address() + ": INFO/DBSIZE failed");
      const double count = common::ParseInteger<uint64_t>(*keys).value_or(0);
      if (count > 0) bytes_per_key = InfoNumber<uint64_t>(*info, "used_memory_dataset") / count;
    }
    std::vector<Command> counts;
    std::vector<int> slots;
    for (const auto& range : primaries.owners[i].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        slots.push_back(slot);
        counts.push_back({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
      }
    }
    auto replies = connection->Pipeline(counts);
    if (!replies.ok()) return replies.error();
    for (size_t k = 0; k < slots.size(); ++k) {
      const auto& reply = (*replies)[k];
      const double keys = reply.ok() ? common::ParseInteger<uint64_t>(*reply).value_or(0) : 0;
      weights[slots[k]] = keys * bytes_per_key;
    }
  }
  return weights;
}

// --by load: each slot's CPU over the window, then PlanLoadBalance; what it saw goes in `view`.
Result<std::vector<SlotMove>> PlanByLoad(const Access& access, const LivePrimaries& primaries,
                                         const ReshardRequest& request, LoadView& view) {
  auto cpu =
      MeasureSlotCpu(access, primaries.nodes, primaries.owners, request.window, request.stop);
  if (!cpu.ok()) return cpu.error();
  auto plan = PlanLoadBalance(primaries.owners, *cpu, request.threshold);
  if (!plan.ok()) return plan.error();
  view.window = request.window;
  for (size_t i = 0; i < primaries.owners.size(); ++i) {
    const MoveNode& node = primaries.nodes[i];
    view.primaries.push_back({.shard = primaries.owners[i].shard,
                              .node = node.host + ":" + std::to_string(node.port),
                              .before = plan->before[i],
                              .after = plan->after[i]});
  }
  for (const HotSlot& hot : plan->hot) {
    view.hot_slots.push_back({.slot = hot.slot,
                              .shard = view.primaries[static_cast<size_t>(hot.owner)].shard,
                              .node = view.primaries[static_cast<size_t>(hot.owner)].node,
                              .share = hot.share});
  }
  return plan->moves;
}

Result<std::vector<SlotMove>> PlanMoves(const Access& access, const Plan& plan,
                                        LivePrimaries& primaries, const ReshardRequest& request,
                                        ReshardResult& result) {
  auto& owners = primaries.owners;
  for (auto& owner : owners) owner.drain = request.drain_shards.count(owner.shard) > 0;
  if (request.ranges.empty() && request.by == BalanceBy::kLoad) {
    result.load.emplace();
    return PlanByLoad(access, primaries, request, *result.load);
  }
  if (request.ranges.empty()) {
    auto weights = SlotWeights(access, primaries, request.by);
    if (!weights.ok()) return weights.error();
    return PlanBalance(
        {.owners = owners, .slot_weights = *weights, .threshold = request.threshold});
  }
  for (size_t i = 0; i < owners.size(); ++i) {
    if (owners[i].shard == request.to_shard) {
      return PlanExplicitMove(owners, request.ranges, static_cast<int>(i));
    }
  }
  const ShardPlan* shard = nullptr;
  for (const auto& candidate : plan.shards) {
    if (candidate.index == request.to_shard) shard = &candidate;
  }
  if (shard == nullptr) return Error("no shard " + std::to_string(request.to_shard));
  // A replica is a target the request got wrong (exit 2); a primary that did not answer is the
  // cluster's state (exit 1).
  auto connection = RedisConnection::Connect(access, plan.bind, shard->port, kQueryTimeout);
  auto role = connection.ok() ? connection->Run({"ROLE"}) : Result<std::string>(connection.error());
  if (role.ok() && role->rfind("slave", 0) == 0) {
    return Error("usage: shard " + std::to_string(request.to_shard) +
                 " is a replica now; slots can only move to a primary (shardctl status shows "
                 "each shard's role)");
  }
  return Error("shard " + std::to_string(request.to_shard) +
               " is not a live primary now: it did not answer or the cluster marks it failing "
               "(move slots to a primary that answers; shardctl status shows roles and health)");
}

}  // namespace

Result<std::vector<common::NodeLine>> ReadClusterNodes(const Access& access, const Plan& plan,
                                                       std::chrono::milliseconds timeout) {
  std::vector<int> ports;
  for (const auto& shard : plan.shards) ports.push_back(shard.port);
  auto answer = AskFirstThatAnswers(access, plan.bind, ports, {{"CLUSTER", "NODES"}}, timeout);
  if (!answer.ok()) return Error("no shard answered CLUSTER NODES: " + answer.error().message());
  auto lines = common::ParseClusterNodes(answer->replies[0]);
  if (!lines.ok()) return Error(answer->address + ": " + lines.error().message());
  return std::move(lines).value();
}

Result<LivePrimaries> ReadLivePrimaries(const Access& access, const Plan& plan,
                                        std::chrono::milliseconds timeout) {
  auto lines = ReadClusterNodes(access, plan, timeout);
  if (!lines.ok()) return lines.error();
  std::map<int, int> shard_of_port;
  for (const auto& planned : plan.shards) shard_of_port[planned.port] = planned.index;

  LivePrimaries primaries;
  for (const auto& line : *lines) {
    if (!line.IsPrimary() || line.Failing() || line.address.port == 0) continue;
    // One node's view lags gossip (a new replica still listed as a primary): ask the node.
    if (!SaysPrimary(access, line.address.host.empty() ? plan.bind : line.address.host,
                     line.address.port, timeout)) {
      continue;
    }
    // Other hosts' nodes listen on the same ports as ours: a node is ours only at our address.
    auto index = IsOurNode(plan, line.address.host, line.address.port)
                     ? shard_of_port.find(line.address.port)
                     : shard_of_port.end();
    primaries.owners.push_back({.id = line.id,
                                .shard = index == shard_of_port.end() ? -1 : index->second,
                                .slots = line.slots,
                                .drain = false});
    primaries.nodes.push_back({.id = line.id,
                               .host = line.address.host.empty() ? plan.bind : line.address.host,
                               .port = line.address.port});
  }
  return primaries;
}

// How long a Valkey atomic slot migration a killed move left is waited for.
constexpr std::chrono::minutes kAtomicJobWait{10};

common::Status WaitForAtomicMoves(const Access& access, const Plan& plan,
                                  const std::atomic<bool>* stop) {
  const auto give_up = std::chrono::steady_clock::now() + kAtomicJobWait;
  while (true) {
    std::string running;
    for (const auto& shard : plan.shards) {
      auto connection = RedisConnection::Connect(access, plan.bind, shard.port, kQueryTimeout);
      if (!connection.ok()) continue;  // the moves report a primary that does not answer
      auto jobs = ListSlotMigrations(*connection);
      if (!jobs.ok()) continue;
      for (const auto& job : *jobs) {
        if (JobField(job, "operation") == "EXPORT" &&
            !SlotMigrationFinished(JobField(job, "state"))) {
          running = "slots " + JobField(job, "slot_ranges") + " from " + connection->address() +
                    ", " + JobField(job, "state");
        }
      }
    }
    if (running.empty()) return common::Ok();
    if (stop != nullptr && stop->load()) return Error("stopped");
    if (std::chrono::steady_clock::now() > give_up) {
      return Error("an atomic slot migration an earlier move started (" + running +
                   ") has not ended in 10 minutes: wait for it, or cancel it with CLUSTER "
                   "CANCELSLOTMIGRATIONS on its source");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Result<std::vector<OpenSlot>> SeeInterruptedMoves(const Access& access, const Plan& plan) {
  auto primaries = ReadLivePrimaries(access, plan, kQueryTimeout);
  if (!primaries.ok()) return primaries.error();
  auto open = FindOpenSlots(access, primaries->nodes, kQueryTimeout);
  if (!open.ok()) return open.error();
  if (auto room = CheckRoomToFinish(access, primaries->owners, primaries->nodes, *open);
      !room.ok()) {
    return room.error();
  }
  return open;
}

Result<std::vector<OpenSlot>> FinishInterruptedMoves(const Access& access, const Plan& plan) {
  auto primaries = ReadLivePrimaries(access, plan, kQueryTimeout);
  if (!primaries.ok()) return primaries.error();
  auto open = FindOpenSlots(access, primaries->nodes, kQueryTimeout);
  if (!open.ok() || open->empty()) return open;
  // Refused before any key moves: a finish that runs out of memory part way fails again the
  // same way, and the dry run says the same (Reshard).
  if (auto room = CheckRoomToFinish(access, primaries->owners, primaries->nodes, *open);
      !room.ok()) {
    return room.error();
  }
  MoverOptions options{.access = access, .primaries = primaries->nodes};
  if (auto finished = FinishOpenSlots(*open, options); !finished.ok()) {
    return Error("finishing an interrupted slot move: " + finished.error().message());
  }
  return open;
}

Result<ReshardResult> TakeShare(const Access& access, const Plan& plan,
                                const std::function<void(const MoveProgress&)>& progress) {
  auto primaries = ReadLivePrimaries(access, plan, kQueryTimeout);
  if (!primaries.ok()) return primaries.error();
  const bool one_empty =
      std::any_of(primaries->owners.begin(), primaries->owners.end(),
                  [](const SlotOwner& owner) { return owner.shard >= 0 && owner.slots.empty(); });
  if (!one_empty) return ReshardResult{};
  return Reshard(access, plan, {.threshold = 0, .on_progress = progress});
}

Result<ReshardResult> Reshard(const Access& access, const Plan& plan,
                              const ReshardRequest& request) {
  ReshardResult result;
  if (!request.dry_run) {
    auto finished = FinishInterruptedMoves(access, plan);
    if (!finished.ok()) return finished.error();
    result.open_slots = *finished;
    if (auto ended = WaitForAtomicMoves(access, plan, request.stop); !ended.ok()) {
      return ended.error();
    }
  }
  auto primaries = ReadLivePrimaries(access, plan, kQueryTimeout);
  if (!primaries.ok()) return primaries.error();
  if (request.dry_run) {
    auto open = SeeInterruptedMoves(access, plan);
    if (!open.ok()) return open.error();
    result.open_slots = *open;
  }
  auto moves = PlanMoves(access, plan, *primaries, request, result);
  if (!moves.ok()) return moves.error();
  // A dry run says it too: it is what the run would refuse.
  if (auto room = CheckRoomForMoves(access, primaries->owners, primaries->nodes, *moves);
      !room.ok()) {
    return room.error();
  }
  std::vector<MoveTask> tasks;
  for (const auto& move : *moves) {
    const auto& source = primaries->owners[move.source];
    const auto& target = primaries->owners[move.target];
    result.moves.push_back({.source_shard = source.shard,
                            .target_shard = target.shard,
                            .task = {.source = primaries->nodes[move.source],
                                     .target = primaries->nodes[move.target],
                                     .ranges = move.ranges},
                            .slots = move.SlotCount()});
    tasks.push_back(result.moves.back().task);
  }
  if (request.dry_run || tasks.empty()) return result;
  MoverOptions options{.access = access,
                       .primaries = primaries->nodes,
                       .path = request.path,
                       .on_progress = request.on_progress,
                       .stop = request.stop};
  auto report = RunMoves(tasks, options);
  if (!report.ok()) return report.error();
  result.report = *report;
  return result;
}

namespace {

// --by load with replicas and a proxy: the hot keys replicas could take off their primaries. A
// proxy that does not answer leaves the report without them (the moves are the point).
void NoteReadMostlyKeys(const Access& access, const Deployment& deployment, ReshardResult& result) {
  const auto& shards = deployment.plan.shards;
  const bool replicas = std::any_of(shards.begin(), shards.end(), [](const ShardPlan& shard) {
    return shard.primary.has_value();
  });
  if (!result.load || !replicas || !deployment.proxy.enabled()) return;
  constexpr size_t kHotKeys = 20;
  auto keys = ReadProxyHotKeys(access, deployment, kHotKeys, std::chrono::milliseconds(1000));
  if (!keys.ok()) return;
  result.read_mostly_keys = ReadMostlyKeys(*keys);
  result.proxy_read_from = deployment.proxy.read_from;
}

}  // namespace

Outcome<ReshardResult> Rebalance(const Spec& spec, const ReshardRequest& request) {
  auto target =
      LoadTarget(spec, {.one_engine_for = request.ranges.empty() ? "rebalance" : "move-slots"});
  if (!target.ok()) return target.error();
  auto data_lock = DataLock::Take(target->dir, request.ranges.empty() ? "rebalance" : "move-slots");
  if (!data_lock.ok()) return Classify(data_lock.error());
  const Plan& plan = target->deployment->plan;
  if (!request.ranges.empty()) {
    const bool exists =
        std::any_of(plan.shards.begin(), plan.shards.end(),
                    [&](const ShardPlan& s) { return s.index == request.to_shard; });
    if (!exists) {
      return Failure::Usage("no shard " + std::to_string(request.to_shard) + " in deployment \"" +
                            plan.name + "\" (shardctl status lists the shards)");
    }
  }
  auto result = Reshard(target->access, plan, request);
  if (result.ok()) {
    NoteReadMostlyKeys(target->access, *target->deployment, *result);
    return std::move(result).value();
  }
  if (request.stop != nullptr && request.stop->load()) {
    return Failure(Fault::kInterrupted, result.error().message());
  }
  return Classify(result.error());
}

}  // namespace shardctl::launcher
