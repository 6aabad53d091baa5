#include "launcher/supervisor/metrics_poller.h"

#include "common/slots.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

// The primary's busiest slots by CPU into `reading` (shard `shard`), when its engine has
// CLUSTER SLOT-STATS; false when the connection broke.
bool PollSlotStats(RedisConnection& connection, int shard, size_t limit, SlotReading& reading) {
  auto replies = connection.Pipeline(
      {{"CONFIG", "GET", "cluster-slot-stats-enabled"},
       {"CLUSTER", "SLOT-STATS", "ORDERBY", "cpu-usec", "LIMIT", std::to_string(limit)},
       {"INFO", "commandstats"}});
  if (!replies.ok()) return false;
  const auto& setting = (*replies)[0];
  const auto& stats = (*replies)[1];
  const auto& commands = (*replies)[2];
  if (!stats.ok()) return true;  // Redis 7.0: no per-slot counters, only load shares
  auto parsed = ParseSlotStats(*stats);
  if (!parsed.ok()) return true;
  reading.cpu_counted = reading.cpu_counted && setting.ok() && setting->ends_with("yes");
  if (commands.ok())
    reading.executed_usec = reading.executed_usec.value_or(0) + CommandUsec(*commands);
  for (const auto& [slot, stat] : *parsed) {
    reading.owner[static_cast<size_t>(slot)] = shard;
    reading.stats[slot] = stat;
  }
  return true;
}

}  // namespace

MetricsPoller::MetricsPoller(const SharedAccess& access, const Plan& plan, DeploymentDir dir,
                             std::chrono::milliseconds interval, std::chrono::milliseconds timeout)
    : access_(access),
      host_(plan.bind),
      dir_(std::move(dir)),
      interval_(interval),
      timeout_(timeout),
      latest_(plan.shards.size()) {
  for (const auto& shard : plan.shards) {
    ports_.push_back(shard.port);
    indices_.push_back(shard.index);
  }
}

MetricsPoller::~MetricsPoller() { Stop(); }

void MetricsPoller::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void MetricsPoller::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<MetricsPoller::Sample> MetricsPoller::Latest() const {
  std::lock_guard lock(mutex_);
  return latest_;
}

MetricsPoller::Slots MetricsPoller::LatestSlots() const {
  std::lock_guard lock(mutex_);
  return latest_slots_;
}

std::vector<MetricsPoller::Sample> MetricsPoller::PollAll(
    std::vector<std::optional<RedisConnection>>& connections, SlotReading& reading) {
  std::vector<Sample> round(ports_.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    if (!connections[i]) {
      auto connection = RedisConnection::Connect(*access_.Current(), host_, ports_[i], timeout_);
      if (connection.ok()) connections[i].emplace(std::move(connection).value());
    }
    if (connections[i]) {
      auto info = QueryShardInfo(*connections[i]);
      if (info.ok()) {
        round[i].info = std::move(info).value();
        if (round[i].info.role == "primary" &&
            !PollSlotStats(*connections[i], indices_[i], kHotSlots, reading)) {
          connections[i].reset();
        }
      } else {
        connections[i].reset();  // reconnect next round: the process may have been replaced
      }
    }
    if (auto process = ReadProcessId(dir_.ShardPidFile(indices_[i]))) {
      round[i].cpu_seconds = ReadCpuSeconds(*process);
    }
  }
  return round;
}

void MetricsPoller::RankSlots(SlotReading reading) {
  Slots slots{.slot_stats = !reading.stats.empty() && reading.cpu_counted};
  if (slots.slot_stats) {
    for (const SlotHeat& heat : HottestSlots(previous_reading_, reading, 0, kHotSlots)) {
      slots.hot.push_back({.slot = heat.slot,
                           .shard = heat.shard,
                           .stat = reading.stats.at(heat.slot),
                           .cpu_share = heat.cpu_share});
    }
  }
  previous_reading_ = std::move(reading);
  std::lock_guard lock(mutex_);
  latest_slots_ = std::move(slots);
}

void MetricsPoller::Loop() {
  std::vector<std::optional<RedisConnection>> connections(ports_.size());
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    SlotReading reading{.owner = std::vector<int>(common::kSlotCount, -1), .cpu_counted = true};
    std::vector<Sample> round = PollAll(connections, reading);
    std::vector<std::optional<uint64_t>> commands(round.size());
    for (size_t i = 0; i < round.size(); ++i) {
      const ShardInfo& info = round[i].info;
      if (info.up && info.role == "primary") commands[i] = info.total_commands_processed;
    }
    const auto shares = LoadShares(commands_, commands);
    for (size_t i = 0; i < round.size(); ++i) round[i].load_share = shares[i];
    commands_ = std::move(commands);
    RankSlots(std::move(reading));
    lock.lock();
    latest_ = std::move(round);
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace shardctl::launcher
