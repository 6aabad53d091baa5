#include "launcher/ops/scale.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/numbers.h"
#include "launcher/cluster/formation.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/plan_scale.h"
#include "launcher/ops/host.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/state/data_lock.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds kQueryTimeout{5000};
constexpr std::chrono::seconds kJoinDeadline{90};
constexpr std::chrono::seconds kReshapeTimeout{60};
// How long an emptied shard must answer no MOVED before it is stopped, and the most a scale
// waits for that.
constexpr std::chrono::milliseconds kClientsGoneAfter{300};
constexpr std::chrono::seconds kClientsGoneWait{5};

void Step(const ScaleRequest& request, const std::string& what) {
  if (request.on_step) request.on_step(what);
}

std::vector<ClusterNode> NodesOf(const Plan& plan, const std::vector<int>& indices) {
  std::vector<ClusterNode> nodes;
  for (const auto& shard : plan.shards) {
    if (std::find(indices.begin(), indices.end(), shard.index) == indices.end()) continue;
    nodes.push_back({.host = plan.bind, .port = shard.port, .bus_port = shard.bus_port});
  }
  return nodes;
}

Result<std::string> NodeId(const Access& access, const std::string& host, int port) {
  auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  return connection->Run({"CLUSTER", "MYID"});
}

// Runs `command` on the first of `plan`'s shards (outside `skip`) that answers.
Result<std::string> OnAnyShard(const Access& access, const Plan& plan, const std::set<int>& skip,
                               const Command& command) {
  std::string last = "no shard to ask";
  for (const auto& shard : plan.shards) {
    if (skip.count(shard.index)) continue;
    auto connection = RedisConnection::Connect(access, plan.bind, shard.port, kQueryTimeout);
    if (!connection.ok()) {
      last = connection.error().message();
      continue;
    }
    return connection->Run(command);
  }
  return Error(last);
}

// Clients routing by an old slot map still send to an emptied shard until its MOVED replies
// teach them the new owner; stopped with a request on its way, the shard resets that connection,
// which the client (or shardproxy, for its clients) reports as an error although nothing was
// lost. So the emptied shards are stopped once they have answered no MOVED for
// kClientsGoneAfter (INFO errorstats: the supervisor's PINGs and the replicas' ACKs go on, but a
// client whose map is right sends them nothing that is not its own); after kClientsGoneWait
// they are stopped anyway (a client that never follows MOVED would keep them forever).
uint64_t MovedRepliesOf(RedisConnection& shard) {
  auto errors = shard.Run({"INFO", "errorstats"});
  if (!errors.ok()) return 0;
  const std::string stat = InfoField(*errors, "errorstat_MOVED");  // "count=12"
  const size_t equals = stat.find('=');
  if (equals == std::string::npos) return 0;
  return common::ParseInteger<uint64_t>(stat.substr(equals + 1)).value_or(0);
}

void WaitForClientsToLeave(std::vector<RedisConnection>& emptied) {
  const auto deadline = Clock::now() + kClientsGoneWait;
  std::vector<uint64_t> moved(emptied.size(), 0);
  auto quiet_since = Clock::now();
  while (Clock::now() < deadline) {
    for (size_t i = 0; i < emptied.size(); ++i) {
      const uint64_t now = MovedRepliesOf(emptied[i]);
      if (now != moved[i]) quiet_since = Clock::now();
      moved[i] = now;
    }
    if (Clock::now() - quiet_since >= kClientsGoneAfter) return;
    std::this_thread::sleep_for(50ms);
  }
}

// A failed slot move, in the scale's words; a refusal of the request ("usage: ", exit 2: the
// moves do not fit the shards' memory) keeps its marker in front.
common::Error MoveSlotsFailed(const common::Error& error) {
  auto refusal = UsageRefusal(error);
  if (!refusal) return error.Context("move slots");
  return common::Error(std::string(kUsageMarker) + "move slots: " + *refusal);
}

// The slot moves of a scale: a rebalance to `threshold`, draining `drain`.
ReshardRequest MovesFor(const ScaleRequest& request, double threshold, std::set<int> drain) {
  return {.threshold = threshold,
          .drain_shards = std::move(drain),
          .dry_run = request.dry_run,
          .path = request.path,
          .on_progress = request.on_progress,
          .stop = request.stop};
}

// The supervisor takes the new plan: starts added shards, stops and deletes removed ones.
common::Status Reshape(const DeploymentDir& dir, const Plan& next) {
  auto reply =
      AskSupervisor(dir, {{"cmd", "reshape"}, {"plan", PlanToJson(next)}},
                    std::chrono::duration_cast<std::chrono::milliseconds>(kReshapeTimeout));
  if (!reply.ok()) return reply.error();
  if (!reply->value("ok", false)) return Error(reply->value("error", "reshape refused"));
  return common::Ok();
}

// New shards meet the cluster through one existing node; new replicas follow their primary
// (retried until the replica has heard of it by gossip); then every node must agree.
common::Status JoinNewShards(const Access& access, const Plan& running, const Plan& next,
                             const std::vector<int>& added) {
  const auto deadline = Clock::now() + kJoinDeadline;
  const auto no_abort = [] { return common::Ok(); };
  if (auto pinged = WaitForPing(access, NodesOf(next, added), deadline, no_abort); !pinged.ok()) {
    return pinged;
  }
  std::set<int> skip(added.begin(), added.end());
  for (const auto& node : NodesOf(next, added)) {
    auto met = OnAnyShard(
        access, running, skip,
        {"CLUSTER", "MEET", node.host, std::to_string(node.port), std::to_string(node.bus_port)});
    if (!met.ok())
      return Error("CLUSTER MEET " + std::to_string(node.port) + ": " + met.error().message());
  }
  for (int index : added) {
    const ShardPlan* shard = FindShard(next, index);
    if (shard->role != Role::kReplica) continue;
    auto primary_id = NodeId(access, next.bind, FindShard(next, *shard->primary)->port);
    if (!primary_id.ok()) return primary_id.error();
    std::string refused = "no answer before the deadline";
    bool following = false;
    while (!following && Clock::now() < deadline) {
      auto connection = RedisConnection::Connect(access, next.bind, shard->port, kQueryTimeout);
      if (!connection.ok()) return connection.error();
      auto reply = connection->Run({"CLUSTER", "REPLICATE", *primary_id});
      following = reply.ok();
      if (!following) {
        refused = reply.error().message();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    if (!following) {
      return Error("shard " + std::to_string(index) + ": CLUSTER REPLICATE: " + refused);
    }
  }
  return WaitUntilHealthy(access, RunningNodesOf(next), deadline, no_abort);
}

// What a scale killed midway (kill -9, a lost terminal) leaves behind, finished by the next one:
//   out: shards the supervisor started that never met the cluster, or replicas that met it but
//        do not follow their primary yet (a primary with no slots): joined now;
//   in:  emptied shards stopped but not forgotten (every node keeps them as "fail" forever):
//        their ids are written to <deployment>/scale-forget.json before the stop and forgotten
//        by the next scale when they are no longer in the plan.
std::filesystem::path ForgetRecord(const DeploymentDir& dir) {
  return dir.root() / "scale-forget.json";
}

common::Status RecordNodesToForget(const DeploymentDir& dir, const std::vector<std::string>& ids,
                                   const std::vector<int>& ports) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < ids.size(); ++i) nodes.push_back({{"id", ids[i]}, {"port", ports[i]}});
  return WriteFileAtomically(ForgetRecord(dir), nlohmann::json{{"nodes", nodes}}.dump() + "\n");
}

// Shards of `plan` an interrupted scale-out started but did not join.
Result<std::vector<int>> UnjoinedShards(const Access& access, const Plan& plan) {
  std::vector<int> unjoined;
  if (plan.shards.size() < 2) return unjoined;
  for (const auto& shard : plan.shards) {
    // One that does not answer is the supervisor's to bring back, and the moves' to report.
    auto connection = RedisConnection::Connect(access, plan.bind, shard.port, kQueryTimeout);
    if (!connection.ok()) continue;
    auto nodes = connection->Run({"CLUSTER", "NODES"});
    if (!nodes.ok()) continue;
    auto lines = common::ParseClusterNodes(*nodes);
    if (!lines.ok()) return lines.error().Context(connection->address() + ": CLUSTER NODES");
    const common::NodeLine* myself = common::FindMyself(*lines);
    const bool alone = lines->size() == 1;
    const auto keys = alone ? connection->Run({"DBSIZE"}) : Result<std::string>("0");
    if (alone && (myself == nullptr || myself->HasSlots() || !keys.ok() || *keys != "0")) {
      // Not a shard a scale started (those start empty): one that lost its nodes.conf but kept
      // its data. Met as it is, it would lose its slots to their owner by epoch, and the engine
      // would delete its keys.
      return Error("shard " + std::to_string(shard.index) + " (" + connection->address() +
                   ") is not part of the cluster but holds slots or keys: it was not joined; "
                   "check its nodes.conf and data before running scale again");
    }
    // A replica promoted by a failover holds slots: that one is not touched.
    const bool not_following = shard.role == Role::kReplica && myself != nullptr &&
                               myself->IsPrimary() && !myself->HasSlots();
    if (alone || not_following) unjoined.push_back(shard.index);
  }
  // None of them a cluster yet (a first formation cut short) is not a scale's to finish.
  if (unjoined.size() == plan.shards.size()) unjoined.clear();
  return unjoined;
}

common::Status FinishInterruptedScale(const Access& access, const DeploymentDir& dir,
                                      const Plan& running, const ScaleRequest& request) {
  if (auto record = ReadWholeFile(ForgetRecord(dir)); record.ok()) {
    const auto parsed = nlohmann::json::parse(*record, nullptr, false);
    std::vector<std::string> ids;
    bool still_planned = false;  // a stop not carried out yet: the record is kept for it
    if (parsed.is_object() && parsed.contains("nodes") && parsed["nodes"].is_array()) {
      for (const auto& node : parsed["nodes"]) {
        const int port = node.value("port", 0);
        const bool planned =
            std::any_of(running.shards.begin(), running.shards.end(),
                        [&](const ShardPlan& shard) { return shard.port == port; });
        if (planned) still_planned = true;
        if (!planned) ids.push_back(node.value("id", ""));
      }
    }
    if (!ids.empty()) {
      Step(request,
           "forgetting " + std::to_string(ids.size()) + " shard(s) an interrupted scale stopped");
      std::vector<common::Endpoint> remaining;
      for (const auto& shard : running.shards) remaining.push_back({running.bind, shard.port});
      if (auto forgot = ForgetNodes(access, remaining, ids); !forgot.ok()) {
        return forgot.error().Context("forget the shards an interrupted scale stopped");
      }
    }
    // Forgetting an id again is harmless (node ids are random, never reused).
    std::error_code ignored;
    if (!still_planned) std::filesystem::remove(ForgetRecord(dir), ignored);
  }
  auto unjoined = UnjoinedShards(access, running);
  if (!unjoined.ok()) return unjoined.error();
  if (unjoined->empty()) return common::Ok();
  Step(request, "joining " + std::to_string(unjoined->size()) +
                    " shard(s) an interrupted scale started to the cluster");
  if (auto joined = JoinNewShards(access, running, running, *unjoined); !joined.ok()) {
    return joined.error().Context("join the shards an interrupted scale started");
  }
  return common::Ok();
}

// The moves a scale-out would make, with the new primaries as empty owners (for --dry-run).
Result<std::vector<PlannedMove>> PlanScaleOut(const Access& access, const Plan& next,
                                              const std::vector<int>& added) {
  auto primaries = ReadLivePrimaries(access, next, kQueryTimeout);
  if (!primaries.ok()) return primaries.error();
  for (int index : added) {
    const ShardPlan* shard = FindShard(next, index);
    if (shard->role != Role::kPrimary) continue;
    primaries->owners.push_back({.id = "new-" + std::to_string(index), .shard = index});
    primaries->nodes.push_back({.id = "", .host = next.bind, .port = shard->port});
  }
  auto moves = PlanBalance({.owners = primaries->owners, .slot_weights = {}, .threshold = 0});
  if (!moves.ok()) return moves.error();
  std::vector<PlannedMove> planned;
  for (const auto& move : *moves) {
    planned.push_back({.source_shard = primaries->owners[move.source].shard,
                       .target_shard = primaries->owners[move.target].shard,
                       .task = {.source = primaries->nodes[move.source],
                                .target = primaries->nodes[move.target],
                                .ranges = move.ranges},
                       .slots = move.SlotCount()});
  }
  return planned;
}

Result<ScaleResult> ScaleOut(const Access& access, const DeploymentDir& dir,
                             const Deployment& deployment, Plan next, const ScaleRequest& request,
                             ScaleResult result) {
  const Plan& running = deployment.plan;
  for (const auto& shard : next.shards) {
    if (!FindShard(running, shard.index)) result.added.push_back(shard.index);
  }
  std::vector<int> ports;
  for (int index : result.added) {
    ports.push_back(FindShard(next, index)->port);
    ports.push_back(FindShard(next, index)->bus_port);
  }
  // A new shard on a port the deployment itself serves is the plan's fault (exit 2, as `up`
  // says it), not another process's: those ports stay as they are while it runs.
  const std::pair<const char*, int> own_ports[] = {
      {"--proxy-port", deployment.proxy.port},
      {"--proxy-metrics-port", deployment.proxy.metrics_port},
      {"--metrics-port", deployment.metrics.port}};
  for (const auto& [flag, port] : own_ports) {
    if (port == 0 || std::find(ports.begin(), ports.end(), port) == ports.end()) continue;
    return Error("usage: a new shard would take port " + std::to_string(port) +
                 ", this deployment's " + flag + " (as its client or bus port); scale to fewer " +
                 "shards, or move the deployment to ports apart (down, then up with another " +
                 flag + ")");
  }
  // A runtime fault, exit 1, as for `up`: the request is fine, the host is busy.
  if (auto free = RequirePortsFree(next.bind, ports,
                                   "a new shard needs it: stop that process, or scale to fewer "
                                   "shards");
      !free.ok()) {
    return free.error();
  }
  result.plan = next;
  if (request.dry_run) {
    auto moves = PlanScaleOut(access, next, result.added);
    if (!moves.ok()) return moves.error();
    result.reshard.moves = *moves;
    return result;
  }
  Step(request, "starting " + std::to_string(result.added.size()) + " new shard(s)");
  if (auto reshaped = Reshape(dir, next); !reshaped.ok()) return reshaped.error().Context("start");
  Step(request, "joining them to the cluster");
  if (auto joined = JoinNewShards(access, running, next, result.added); !joined.ok()) {
    return joined.error().Context("join");
  }
  Step(request, "moving slots onto the new primaries");
  auto reshard = Reshard(access, next, MovesFor(request, 0, {}));
  if (!reshard.ok()) return MoveSlotsFailed(reshard.error());
  result.reshard = *reshard;
  return result;
}

Result<ScaleResult> ScaleIn(const Access& access, const DeploymentDir& dir,
                            const Deployment& deployment, const ShrunkPlan& shrunk,
                            const ScaleRequest& request, ScaleResult result) {
  result.removed = shrunk.removed;
  result.plan = shrunk.plan;
  Step(request, "moving the slots of shard(s) being removed onto the rest");
  auto reshard = Reshard(access, deployment.plan,
                         MovesFor(request, 0, {shrunk.removed.begin(), shrunk.removed.end()}));
  if (!reshard.ok()) return MoveSlotsFailed(reshard.error());
  result.reshard = *reshard;
  if (request.dry_run) return result;
  std::vector<std::string> ids;
  std::vector<int> ports;
  std::vector<RedisConnection> emptied;
  for (int index : shrunk.removed) {
    const ShardPlan* shard = FindShard(deployment.plan, index);
    auto connection =
        RedisConnection::Connect(access, deployment.plan.bind, shard->port, kQueryTimeout);
    if (!connection.ok()) return connection.error();
    auto id = connection->Run({"CLUSTER", "MYID"});
    auto keys = connection->Run({"DBSIZE"});
    if (!id.ok() || !keys.ok()) return Error(connection->address() + ": MYID/DBSIZE failed");
    if (*keys != "0") {
      return Error("shard " + std::to_string(index) + " still holds " + *keys +
                   " keys after its slots moved; nothing was stopped (run scale again)");
    }
    ids.push_back(*id);
    ports.push_back(shard->port);
    emptied.push_back(std::move(connection).value());
  }
  Step(request, "waiting for clients to follow the slots off the emptied shard(s)");
  WaitForClientsToLeave(emptied);
  emptied.clear();
  Step(request, "stopping " + std::to_string(ids.size()) + " emptied shard(s)");
  if (auto recorded = RecordNodesToForget(dir, ids, ports); !recorded.ok()) {
    return recorded.error().Context("stop");
  }
  if (auto reshaped = Reshape(dir, shrunk.plan); !reshaped.ok()) {
    return reshaped.error().Context("stop");
  }
  std::vector<common::Endpoint> remaining;
  for (const auto& shard : shrunk.plan.shards) remaining.push_back({shrunk.plan.bind, shard.port});
  if (auto forgot = ForgetNodes(access, remaining, ids); !forgot.ok()) {
    return forgot.error().Context("forget");
  }
  std::error_code ignored;
  std::filesystem::remove(ForgetRecord(dir), ignored);
  auto healthy = WaitUntilHealthy(access, RunningNodesOf(shrunk.plan), Clock::now() + kJoinDeadline,
                                  [] { return common::Ok(); });
  if (!healthy.ok()) return healthy.error().Context("after removing shards");
  return result;
}

}  // namespace

Result<ScaleResult> ScaleLoaded(const Access& access, const DeploymentDir& dir,
                                const Deployment& deployment, const Topology& topology,
                                const Spec& spec, const ScaleRequest& request) {
  const Plan& running = deployment.plan;
  ScaleResult result;
  result.from_primaries = static_cast<int>(PlannedPrimaries(running).size());
  result.to_primaries = request.primaries;
  if (request.dry_run) {
    // What the run would refuse before anything else (the moves a scale plans say the rest).
    if (auto open = SeeInterruptedMoves(access, running); !open.ok()) {
      if (UsageRefusal(open.error())) return open.error();
    }
  } else {
    if (auto finished = FinishInterruptedScale(access, dir, running, request); !finished.ok()) {
      return finished.error();
    }
    auto finished = FinishInterruptedMoves(access, running);
    if (!finished.ok()) {
      if (UsageRefusal(finished.error())) return finished.error();  // exit 2, as the dry run
      return finished.error().Context("finish interrupted moves");
    }
  }
  if (request.primaries > result.from_primaries) {
    auto next = ExtendPlan(topology, spec, running, request.primaries);
    if (!next.ok()) return Error("usage: " + next.error().message());
    return ScaleOut(access, dir, deployment, std::move(next).value(), request, std::move(result));
  }
  if (request.primaries == result.from_primaries) {
    // The shape is right; an earlier scale may have stopped before the slots were even, so
    // continue that (a no-op when balanced within 2%).
    result.plan = running;
    auto reshard = Reshard(access, running, MovesFor(request, 0.02, {}));
    if (!reshard.ok()) return MoveSlotsFailed(reshard.error());
    result.reshard = *reshard;
    return result;
  }
  auto shrunk = ShrinkPlan(running, request.primaries);
  if (!shrunk.ok()) return Error("usage: " + shrunk.error().message());
  return ScaleIn(access, dir, deployment, *shrunk, request, std::move(result));
}

Outcome<ScaleResult> Scale(const Spec& spec, const ScaleRequest& request) {
  auto target = LoadTarget(spec, {.supervisor = true, .one_engine_for = "scale"});
  if (!target.ok()) return target.error();
  auto data_lock = DataLock::Take(target->dir, "scale");
  if (!data_lock.ok()) return Classify(data_lock.error());
  auto host = ReadHost(spec, std::nullopt);
  if (!host.ok()) return host.error();
  auto scaled = ScaleLoaded(target->access, target->dir, *target->deployment, host->topology,
                            host->spec, request);
  if (scaled.ok()) return std::move(scaled).value();
  if (request.stop != nullptr && request.stop->load()) {
    return Failure(Fault::kInterrupted, scaled.error().message());
  }
  return Classify(scaled.error());
}

}  // namespace shardctl::launcher
