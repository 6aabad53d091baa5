#include "launcher/supervisor/fork_scheduler.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

bool ForkDue(const PersistenceView& shard, const Durability& durability, int64_t now_unix) {
  if (!shard.reachable || shard.forking) return false;
  if (durability.persistence == Persistence::kNone) return false;  // a cache never writes files
  if (shard.save_requested) return true;
  auto interval_s = std::chrono::duration_cast<std::chrono::seconds>(durability.save_interval);
  switch (durability.persistence) {
    case Persistence::kRdb:
      return shard.changes_since_save > 0 && now_unix - shard.last_save_unix >= interval_s.count();
    case Persistence::kAof:
      return shard.aof_size >= kMinAofRewriteSize && shard.aof_size >= 2 * shard.aof_base_size;
    default:
      return false;
  }
}

std::vector<ForkChoice> ChooseForks(const std::vector<PersistenceView>& shards,
                                    const Durability& durability, int64_t now_unix,
                                    uint64_t memory_available, size_t& cursor) {
  std::vector<ForkChoice> chosen;
  if (shards.empty()) return chosen;
  int running = 0;
  for (const auto& shard : shards) running += shard.forking;
  int budget = durability.fork_limit - running;
  size_t start = cursor % shards.size();
  for (size_t k = 0; k < shards.size() && budget > 0; ++k) {
    size_t i = (start + k) % shards.size();
    const auto& shard = shards[i];
    if (!ForkDue(shard, durability, now_unix)) continue;
    if (shard.used_memory > memory_available) continue;  // could not afford its copy-on-write
    memory_available -= shard.used_memory;
    chosen.push_back({static_cast<int>(i), durability.persistence == Persistence::kAof});
    cursor = i + 1;
    --budget;
  }
  return chosen;
}

size_t CountWaiting(const std::vector<PersistenceView>& shards, const Durability& durability,
                    int64_t now_unix, const std::vector<ForkChoice>& chosen) {
  size_t due = 0;
  for (const auto& shard : shards) due += ForkDue(shard, durability, now_unix);
  return due > chosen.size() ? due - chosen.size() : 0;
}

uint64_t HostMemoryAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  // Without the figure the memory rule cannot be applied; refusing every fork forever would
  // silently stop persistence, which is worse than forking within the fork limit alone.
  return UINT64_MAX;
}

ForkScheduler::ForkScheduler(const SharedAccess& access, std::string host, std::vector<int> ports,
                             Durability durability, std::chrono::milliseconds interval)
    : access_(access),
      host_(std::move(host)),
      ports_(std::move(ports)),
      durability_(durability),
      interval_(interval),
      save_requested_(ports_.size()) {}

ForkScheduler::~ForkScheduler() { Stop(); }

void ForkScheduler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void ForkScheduler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ForkScheduler::RequestSaveAll() {
  for (auto& requested : save_requested_) requested = true;
  wake_.notify_all();
}

namespace {

PersistenceView Observe(const Access& access, const std::string& host, int port) {
  PersistenceView view;
  auto connection = RedisConnection::Connect(access, host, port, std::chrono::milliseconds(500));
  if (!connection.ok()) return view;
  auto replies = connection->Pipeline({{"INFO", "persistence"}, {"INFO", "memory"}});
  if (!replies.ok() || !(*replies)[0].ok() || !(*replies)[1].ok()) return view;
  const std::string& persistence = *(*replies)[0];
  auto number = [&](const std::string& text, const char* field) {
    return InfoNumber<uint64_t>(text, field);
  };
  view.reachable = true;
  view.forking = InfoField(persistence, "rdb_bgsave_in_progress") == "1" ||
                 InfoField(persistence, "aof_rewrite_in_progress") == "1";
  view.last_save_unix = static_cast<int64_t>(number(persistence, "rdb_last_save_time"));
  view.changes_since_save = number(persistence, "rdb_changes_since_last_save");
  view.aof_size = number(persistence, "aof_current_size");
  view.aof_base_size = number(persistence, "aof_base_size");
  view.used_memory = number(*(*replies)[1], "used_memory");
  return view;
}

}  // namespace

void ForkScheduler::Tick(size_t& cursor) {
  const auto access = access_.Current();
  std::vector<PersistenceView> views;
  for (size_t i = 0; i < ports_.size(); ++i) {
    views.push_back(Observe(*access, host_, ports_[i]));
    views.back().save_requested = save_requested_[i];
  }
  int running = 0;
  for (const auto& view : views) running += view.forking;
  if (running > most_concurrent_) most_concurrent_ = running;
  auto now = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  auto chosen = ChooseForks(views, durability_, now, HostMemoryAvailable(), cursor);
  const auto tick = std::chrono::steady_clock::now();
  if (last_tick_ != std::chrono::steady_clock::time_point{}) {
    auto waited = std::chrono::duration_cast<std::chrono::microseconds>(tick - last_tick_);
    fork_wait_us_ += waiting_ * static_cast<uint64_t>(waited.count());
  }
  last_tick_ = tick;
  waiting_ = CountWaiting(views, durability_, now, chosen);
  for (const auto& choice : chosen) {
    auto connection = RedisConnection::Connect(*access, host_, ports_[choice.shard],
                                               std::chrono::milliseconds(500));
    if (!connection.ok()) continue;
    // "already in progress" errors mean a fork runs anyway: the request is served either way.
    (void)connection->Run({choice.rewrite_aof ? "BGREWRITEAOF" : "BGSAVE"});
    save_requested_[choice.shard] = false;
    ++forks_started_;
    if (running + 1 > most_concurrent_) most_concurrent_ = running + 1;
    ++running;
  }
  forks_running_ = running;
}

void ForkScheduler::Loop() {
  size_t cursor = 0;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Tick(cursor);
    lock.lock();
    // A short wait while saves are pending or running keeps "save everything" moving.
    bool pending = false;
    for (const auto& requested : save_requested_) pending = pending || requested;
    wake_.wait_for(lock, pending ? std::chrono::milliseconds(50) : interval_,
                   [this] { return stopping_; });
  }
}

}  // namespace shardctl::launcher
