#include "launcher/ops/shard_snapshot.h"

#include <chrono>
#include <thread>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;

constexpr auto kQueryTimeout = std::chrono::seconds(5);
// A snapshot and a load take about a second per GB; a 25 GB shard fits with room to spare.
constexpr auto kSaveTimeout = std::chrono::minutes(10);
constexpr auto kLoadTimeout = std::chrono::minutes(10);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

Result<std::string> Pause(RedisConnection& connection, std::chrono::seconds hold) {
  return connection.Run({"CLIENT", "PAUSE", std::to_string(hold.count() * 1000), "WRITE"});
}

// Runs BGSAVE once no other fork runs (the fork scheduler's, a replica's sync) and waits for it
// to end. Writes are paused, so the snapshot holds exactly what the shard acknowledged.
common::Status Snapshot(RedisConnection& connection, const std::atomic<bool>* interrupted,
                        std::chrono::seconds hold) {
  const auto deadline = Clock::now() + kSaveTimeout;
  bool started = false;
  while (Clock::now() < deadline) {
    if (interrupted != nullptr && interrupted->load()) return Error("interrupted");
    if (auto renewed = Pause(connection, hold); !renewed.ok()) return renewed.error();
    auto info = connection.Run({"INFO", "persistence"});
    if (!info.ok()) return info.error();
    if (InfoField(*info, "rdb_bgsave_in_progress") == "1") {
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    if (started) {
      if (InfoField(*info, "rdb_last_bgsave_status") == "ok") return common::Ok();
      return Error("the snapshot failed (rdb_last_bgsave_status:err)");
    }
    auto forked = connection.Run({"BGSAVE"});
    if (!forked.ok() && forked.error().message().find("in progress") == std::string::npos) {
      return forked.error();
    }
    started = forked.ok();
  }
  return Error(
      "the snapshot did not finish within " +
      std::to_string(std::chrono::duration_cast<std::chrono::minutes>(kSaveTimeout).count()) +
      " minutes");
}

}  // namespace

Result<ShardState> InspectShard(const Access& access, const std::string& host, int port) {
  auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
  if (!connection.ok()) return connection.error();
  auto replies = connection->Pipeline({{"INFO", "replication"}, {"DBSIZE"}});
  if (!replies.ok()) return replies.error();
  for (const auto& reply : *replies) {
    if (!reply.ok()) return reply.error();
  }
  return ShardState{.primary = InfoField(*(*replies)[0], "role") == "master",
                    .connected_replicas = InfoNumber<long long>(*(*replies)[0], "connected_slaves"),
                    .keys = common::ParseInteger<long long>(*(*replies)[1]).value_or(0)};
}

Result<long long> PauseAndSnapshot(const Access& access, const std::string& host, int port,
                                   int index, const std::atomic<bool>* interrupted,
                                   std::chrono::seconds hold) {
  const std::string shard = "shard " + std::to_string(index);
  auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
  if (!connection.ok()) return connection.error().Context(shard);
  if (auto paused = Pause(*connection, hold); !paused.ok()) {
    return paused.error().Context(shard + ": CLIENT PAUSE WRITE");
  }
  auto keys = connection->Run({"DBSIZE"});
  auto saved = keys.ok() ? Snapshot(*connection, interrupted, hold) : common::Status(keys.error());
  if (!saved.ok()) {
    (void)connection->Run({"CLIENT", "UNPAUSE"});
    if (interrupted != nullptr && interrupted->load()) {
      return Error("interrupted while " + shard + " was being saved: its writes resumed");
    }
    return Error("saving " + shard + "'s keys failed: " + saved.error().message() +
                 " (see shardctl logs " + std::to_string(index) + ")");
  }
  return common::ParseInteger<long long>(*keys).value_or(0);
}

void Unpause(const Access& access, const std::string& host, int port) {
  auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
  if (connection.ok()) (void)connection->Run({"CLIENT", "UNPAUSE"});
}

void KeepWritesHeld(const Access& access, const std::string& host, int port,
                    std::chrono::seconds hold) {
  auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
  if (connection.ok()) (void)Pause(*connection, hold);
}

Result<long long> WaitUntilServing(const Access& access, const std::string& host, int port) {
  const auto deadline = Clock::now() + kLoadTimeout;
  std::string waiting_for = "an answer";
  while (Clock::now() < deadline) {
    auto connection = RedisConnection::Connect(access, host, port, kQueryTimeout);
    auto replies =
        connection.ok()
            ? connection->Pipeline({{"INFO", "persistence"}, {"INFO", "replication"}, {"DBSIZE"}})
            : Result<std::vector<Result<std::string>>>(connection.error());
    if (!replies.ok()) {
      waiting_for = "an answer (" + replies.error().message() + ")";
    } else if (!(*replies)[0].ok() || InfoField(*(*replies)[0], "loading") != "0") {
      waiting_for = "its data to load";
    } else if ((*replies)[1].ok() && InfoField(*(*replies)[1], "role") == "slave" &&
               (InfoField(*(*replies)[1], "master_link_status") != "up" ||
                InfoField(*(*replies)[1], "master_sync_in_progress") == "1")) {
      waiting_for = "its sync from its primary";
    } else if ((*replies)[2].ok()) {
      return common::ParseInteger<long long>(*(*replies)[2]).value_or(0);
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return Error("it did not serve its data in time (waiting for " + waiting_for + ")");
}

}  // namespace shardctl::launcher
