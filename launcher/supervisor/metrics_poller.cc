#include "launcher/supervisor/metrics_poller.h"

#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

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

std::vector<MetricsPoller::Sample> MetricsPoller::PollAll(
    std::vector<std::optional<RedisConnection>>& connections) {
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

void MetricsPoller::Loop() {
  std::vector<std::optional<RedisConnection>> connections(ports_.size());
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    std::vector<Sample> round = PollAll(connections);
    lock.lock();
    latest_ = std::move(round);
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace shardctl::launcher
