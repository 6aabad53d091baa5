#include "launcher/ops/restore_placed.h"

#include <algorithm>
#include <future>
#include <map>

#include "common/numbers.h"
#include "common/slots.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/ops/restart.h"
#include "launcher/ops/shard_snapshot.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::NodeAddress;
using namespace std::chrono_literals;

constexpr auto kQueryTimeout = 2s;

// Keeps the replicas of the primaries being restarted from taking their slots while the
// primaries are down: a replica promoted then would be empty, and the loaded primary would
// resync from it. Shards run with the engine's default (no), which is put back when this goes;
// a restore killed before that is run again and puts it back then.
class FailoverHold {
 public:
  FailoverHold(const Access& access, std::vector<NodeAddress> replicas)
      : access_(access), replicas_(std::move(replicas)) {}
  FailoverHold(const FailoverHold&) = delete;
  FailoverHold& operator=(const FailoverHold&) = delete;
  ~FailoverHold() {
    for (const auto& replica : replicas_) (void)Set(replica, "no");
  }

  common::Status Hold() const {
    for (const auto& replica : replicas_) {
      if (auto held = Set(replica, "yes"); !held.ok()) return held;
    }
    return common::Ok();
  }

 private:
  common::Status Set(const NodeAddress& replica, const std::string& value) const {
    auto connection = RedisConnection::Connect(access_, replica.host, replica.port, kQueryTimeout);
    if (!connection.ok()) return connection.error();
    auto set = connection->Run({"CONFIG", "SET", "cluster-replica-no-failover", value});
    if (!set.ok()) return set.error().Context(connection->address());
    return common::Ok();
  }

  const Access& access_;
  std::vector<NodeAddress> replicas_;
};

// Puts each file beside its shard's data; an error (a full disk, mostly) removes what was put.
common::Status PlaceFiles(const DeploymentDir& dir, const std::filesystem::path& from,
                          const BackupManifest& manifest, const std::vector<int>& shard_of_file) {
  for (size_t k = 0; k < manifest.files.size(); ++k) {
    const auto placed = dir.ShardPlacedSnapshot(shard_of_file[k]);
    std::error_code error;
    std::filesystem::copy_file(from / manifest.files[k].file, placed,
                               std::filesystem::copy_options::overwrite_existing, error);
    if (error) {
      for (int shard : shard_of_file) {
        std::error_code ignored;
        std::filesystem::remove(dir.ShardPlacedSnapshot(shard), ignored);
      }
      return Error("copying " + manifest.files[k].file + " to " + placed.string() + ": " +
                   error.message() + " (free space there, or restore onto another deployment)");
    }
  }
  return common::Ok();
}

// Every replica of the restarted primaries once it has resynced; the keys they hold.
common::Result<uint64_t> WaitForReplicas(const Access& access,
                                         const std::vector<NodeAddress>& replicas) {
  uint64_t keys = 0;
  for (const auto& replica : replicas) {
    auto serving = WaitUntilServing(access, replica.host, replica.port);
    if (!serving.ok()) return serving.error().Context("replica " + replica.ToString());
    keys += static_cast<uint64_t>(*serving);
  }
  return keys;
}

}  // namespace

LocalPrimaries FindLocalPrimaries(const Target& target,
                                  const std::vector<common::NodeLine>& primaries) {
  const Deployment& deployment = *target.deployment;
  const Plan& plan = deployment.plan;
  if (deployment.durability.persistence == Persistence::kAof) {
    return {{}, "its shards keep an AOF, which they load instead of an RDB"};
  }
  if (!SupervisorRunning(target.dir)) return {{}, "no supervisor runs it"};
  LocalPrimaries local;
  for (const auto& node : primaries) {
    const auto shard =
        std::find_if(plan.shards.begin(), plan.shards.end(),
                     [&](const ShardPlan& s) { return s.port == node.address.port; });
    if (!IsOurNode(plan, node.address.host, node.address.port) || shard == plan.shards.end()) {
      return {{}, "primary " + node.address.ToString() + " is not a shard of this host"};
    }
    local.shard_of_primary.push_back(shard->index);
  }
  return local;
}

// Keys `primary` holds in slots it does not serve. A placed file carries the keys of the slots
// the manifest gives it, so this is 0 unless the files do not match the manifest's slot map (an
// edited manifest, a backup taken while slots moved): such keys are loaded, but no client is
// ever sent to them.
common::Result<uint64_t> KeysOutsideOwnSlots(const Access& access, const common::SlotTable& table,
                                             size_t primary) {
  const NodeAddress& address = table.primaries()[primary];
  auto connection = RedisConnection::Connect(access, address.host, address.port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  std::vector<Command> commands = {{"DBSIZE"}};
  for (int slot = 0; slot < common::kSlotCount; ++slot) {
    if (table.PrimaryFor(slot) == static_cast<int>(primary)) {
      commands.push_back({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)});
    }
  }
  auto replies = connection->Pipeline(commands);
  if (!replies.ok()) return replies.error();
  uint64_t counts[2] = {0, 0};  // all keys, keys in its own slots
  for (size_t i = 0; i < replies->size(); ++i) {
    const auto& reply = (*replies)[i];
    if (!reply.ok()) return reply.error().Context(address.ToString());
    counts[i == 0 ? 0 : 1] += common::ParseInteger<uint64_t>(*reply).value_or(0);
  }
  return counts[0] > counts[1] ? counts[0] - counts[1] : 0;
}

// What a primary that has just loaded a placed file says of it: keys the file held whose TTL had
// run out (skipped at the load), and keys evicted since (its counters start with the process,
// which the load started; a primary over its maxmemory evicts on its next commands under a
// policy that allows it, DBSIZE included).
struct LoadOutcome {
  uint64_t expired_at_load = 0;
  uint64_t evicted = 0;
};

common::Result<LoadOutcome> ReadLoadOutcome(const Access& access, const common::SlotTable& table,
                                            size_t primary) {
  const NodeAddress& address = table.primaries()[primary];
  auto connection = RedisConnection::Connect(access, address.host, address.port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  auto replies = connection->Pipeline({{"INFO", "persistence"}, {"INFO", "stats"}});
  if (!replies.ok()) return replies.error().Context(address.ToString());
  for (const auto& reply : *replies) {
    if (!reply.ok()) return reply.error().Context(address.ToString() + ": INFO");
  }
  auto number = [](const std::string& info, const std::string& field) {
    return common::ParseInteger<uint64_t>(InfoField(info, field)).value_or(0);
  };
  return LoadOutcome{.expired_at_load = number(*(*replies)[0], "rdb_last_load_keys_expired"),
                     .evicted = number(*(*replies)[1], "evicted_keys")};
}

Outcome<PlacedRestore> RestoreByPlacing(const Target& target, const common::SlotTable& table,
                                        const std::vector<int>& shard_of_primary,
                                        const BackupManifest& manifest,
                                        const std::filesystem::path& from,
                                        const Placement& placement,
                                        const std::function<void(const std::string&)>& progress) {
  std::vector<int> shard_of_file;
  std::vector<NodeAddress> replicas;
  for (size_t primary : placement.primary_of_file) {
    shard_of_file.push_back(shard_of_primary[primary]);
    for (const auto& replica : table.ReplicasOf(primary)) replicas.push_back(replica);
  }
  FailoverHold hold(target.access, replicas);
  if (auto held = hold.Hold(); !held.ok()) {
    return held.error().Context("keeping the replicas from taking over");
  }
  if (auto placed = PlaceFiles(target.dir, from, manifest, shard_of_file); !placed.ok()) {
    return Failure(Fault::kRuntime, placed.error().message() + "; nothing was changed");
  }
  if (progress) progress("loading " + std::to_string(manifest.files.size()) + " files");
  // Every primary at once: each loads its own file, and the cluster is down only once.
  std::vector<std::future<common::Result<ShardRestart>>> restarts;
  for (int shard : shard_of_file) {
    restarts.push_back(std::async(std::launch::async, [&target, shard] {
      return RestartShard(target.access, target.dir, *target.deployment, shard,
                          RestartOptions{.load_placed = true});
    }));
  }
  PlacedRestore restored;
  std::optional<Error> failure;
  for (size_t k = 0; k < restarts.size(); ++k) {
    auto restart = restarts[k].get();
    if (!restart.ok()) {
      if (!failure) {
        failure = restart.error().Context(manifest.files[k].file + " onto shard " +
                                          std::to_string(shard_of_file[k]));
      }
      continue;
    }
    const uint64_t loaded = static_cast<uint64_t>(restart->keys_after.value_or(0));
    auto outcome = ReadLoadOutcome(target.access, table, placement.primary_of_file[k]);
    if (!outcome.ok()) {
      if (!failure) failure = outcome.error().Context("checking " + manifest.files[k].file);
      continue;
    }
    const std::string shard = "shard " + std::to_string(shard_of_file[k]);
    // Every key of a file whose TTLs had all run out (a cache) is skipped at the load: not a
    // failure, and a run again could not change it.
    if (loaded == 0 && manifest.files[k].keys > outcome->expired_at_load && !failure) {
      failure = Error(shard + " loaded no keys from " + manifest.files[k].file + ", which holds " +
                      std::to_string(manifest.files[k].keys) + " (see shardctl logs " +
                      std::to_string(shard_of_file[k]) + ")");
    }
    if (outcome->evicted > 0 && !failure) {
      // Final: the same files would not fit the next time either.
      failure = Error("usage: " + shard + " evicted " + std::to_string(outcome->evicted) +
                      " keys after loading " + manifest.files[k].file +
                      " (its maxmemory is below what the file holds, and its policy evicts): "
                      "restore into a deployment with a larger --memory or --shard-memory");
    }
    restored.keys += loaded;
  }
  if (failure) return *failure;
  for (size_t k = 0; k < placement.primary_of_file.size(); ++k) {
    auto outside = KeysOutsideOwnSlots(target.access, table, placement.primary_of_file[k]);
    if (!outside.ok()) return outside.error().Context("checking " + manifest.files[k].file);
    if (*outside > 0) {
      // The backup's fault, and final: a run again would place the same files the same way.
      return Error("usage: shard " + std::to_string(shard_of_file[k]) + " loaded " +
                   std::to_string(*outside) + " keys of slots it does not serve from " +
                   manifest.files[k].file +
                   ": the backup's files do not match its manifest's slot map (an edited "
                   "manifest, or a backup taken while slots moved), and this deployment now "
                   "holds them where no client is sent (shardctl down --purge it); restore the "
                   "backup into a new deployment with another shard count, which copies each key "
                   "to its slot's owner");
    }
  }
  auto replica_keys = WaitForReplicas(target.access, replicas);
  if (!replica_keys.ok()) return replica_keys.error();
  restored.replica_keys = *replica_keys;
  return restored;
}

}  // namespace shardctl::launcher
