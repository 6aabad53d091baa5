#include "launcher/supervisor/health_checker.h"

#include <algorithm>
#include <optional>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

std::chrono::milliseconds HealthPingInterval(size_t shards,
                                             std::chrono::milliseconds health_timeout) {
  constexpr std::chrono::milliseconds kFastest(250), kPerShard(25);
  const auto slowest = std::max(kFastest, health_timeout / 3);
  return std::clamp(kPerShard * static_cast<int64_t>(shards), kFastest, slowest);
}

HealthChecker::HealthChecker(const SharedAccess& access, std::string host, std::vector<int> ports,
                             std::chrono::milliseconds interval, std::chrono::milliseconds timeout)
    : access_(access),
      host_(std::move(host)),
      ports_(std::move(ports)),
      interval_(interval),
      timeout_(timeout),
      last_answer_(new std::atomic<Clock::rep>[ports_.size()]),
      last_served_(new std::atomic<Clock::rep>[ports_.size()]) {
  for (size_t i = 0; i < ports_.size(); ++i) last_answer_[i] = last_served_[i] = 0;
}

HealthChecker::~HealthChecker() { Stop(); }

void HealthChecker::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void HealthChecker::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

HealthChecker::Clock::time_point HealthChecker::LastAnswer(int index) const {
  return Clock::time_point(Clock::duration(last_answer_[index].load()));
}

HealthChecker::Clock::time_point HealthChecker::LastServed(int index) const {
  return Clock::time_point(Clock::duration(last_served_[index].load()));
}

void HealthChecker::MarkServed(int index, Clock::time_point when) {
  last_served_[index] = when.time_since_epoch().count();
}

void HealthChecker::MarkFresh(int index, Clock::time_point when) {
  last_answer_[index] = when.time_since_epoch().count();
}

void HealthChecker::Loop() {
  std::vector<std::optional<RedisConnection>> connections(ports_.size());
  std::vector<bool> sent(ports_.size());
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    const auto round_began = Clock::now().time_since_epoch().count();
    // Every PING goes out first, then every reply is read: by then most are waiting, so a round
    // costs a write and a read per shard but no sleep and wake-up per shard (at 40 shards four
    // times a second, that wake-up was most of the supervisor's idle CPU).
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (!connections[i]) {
        auto connection = RedisConnection::Connect(*access_.Current(), host_, ports_[i], timeout_);
        if (connection.ok()) connections[i].emplace(std::move(connection).value());
      }
      sent[i] = connections[i] && connections[i]->Send({{"PING"}}).ok();
    }
    for (size_t i = 0; i < ports_.size(); ++i) {
      // Any reply counts, errors too: "-LOADING" comes from a live shard reading its data.
      auto reply = sent[i] ? connections[i]->Receive(1)
                           : decltype(connections[i]->Receive(1))(common::Error("not sent"));
      if (reply.ok()) {
        const auto now = Clock::now().time_since_epoch().count();
        last_answer_[i] = now;
        if (reply->front().ok()) last_served_[i] = round_began;
      } else {
        connections[i].reset();  // reconnect next round: the process may have been replaced
      }
    }
    lock.lock();
    wake_.wait_for(lock, interval_, [this] { return stopping_; });
  }
}

}  // namespace shardctl::launcher
