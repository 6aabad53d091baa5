// The host-wide fork limit: the supervisor, not each shard's own `save` schedule, decides when a
// shard forks for BGSAVE or BGREWRITEAOF.
//
// Forking copies page tables and then, page by page, whatever the parent writes while the child
// runs (copy-on-write). Forty shards snapshotting at once can need forty times one shard's extra
// memory; one at a time needs one shard's. So: at most fork_limit forks at once on the host,
// round-robin so no shard starves, each shard saved at least as often as its profile asks, and
// never a fork when the host's available memory is below what that shard could copy (its used
// memory).
//
// ChooseForks is the pure policy (unit-tested); ForkScheduler is the thread that feeds it INFO
// replies and sends the commands.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "launcher/cluster/access.h"
#include "launcher/model/spec.h"

namespace shardctl::launcher {

// One shard's persistence state, from INFO persistence + INFO memory.
struct PersistenceView {
  bool reachable = false;
  bool forking = false;  // rdb_bgsave_in_progress or aof_rewrite_in_progress
  int64_t last_save_unix = 0;
  uint64_t changes_since_save = 0;
  uint64_t used_memory = 0;
  uint64_t aof_size = 0;        // aof_current_size
  uint64_t aof_base_size = 0;   // aof_base_size
  bool save_requested = false;  // an explicit "save everything" is pending for this shard
};

struct ForkChoice {
  int shard = 0;
  bool rewrite_aof = false;  // BGREWRITEAOF instead of BGSAVE
  friend bool operator==(const ForkChoice&, const ForkChoice&) = default;
};

// AOF files are rewritten once they doubled since the last rewrite and are at least this big.
inline constexpr uint64_t kMinAofRewriteSize = 64ull << 20;

// True when the shard should fork now, ignoring the limit and memory.
bool ForkDue(const PersistenceView& shard, const Durability& durability, int64_t now_unix);

// Picks the shards to fork now: due ones, round-robin from `cursor` (advanced past the last
// pick), while fewer than fork_limit forks run and the host's available memory covers each
// pick's used memory (taken off the budget for the next pick).
std::vector<ForkChoice> ChooseForks(const std::vector<PersistenceView>& shards,
                                    const Durability& durability, int64_t now_unix,
                                    uint64_t memory_available, size_t& cursor);

// How many shards are due (ForkDue) but not among `chosen`: they wait for the limit or memory.
size_t CountWaiting(const std::vector<PersistenceView>& shards, const Durability& durability,
                    int64_t now_unix, const std::vector<ForkChoice>& chosen);

// MemAvailable of /proc/meminfo in bytes; UINT64_MAX (no memory limit) when unreadable.
uint64_t HostMemoryAvailable();

// Runs ChooseForks every second against the live shards, on its own thread (its INFO calls
// block). Thread-safe: RequestSaveAll may be called from the supervisor's loop.
class ForkScheduler {
 public:
  // Watches host:ports, connecting with what `access` holds at the time (it must outlive the
  // scheduler).
  ForkScheduler(const SharedAccess& access, std::string host, std::vector<int> ports,
                Durability durability,
                std::chrono::milliseconds interval = std::chrono::seconds(1));
  ~ForkScheduler();
  ForkScheduler(const ForkScheduler&) = delete;
  ForkScheduler& operator=(const ForkScheduler&) = delete;

  void Start();
  void Stop();
  // Asks for every shard to be saved (BGSAVE, or BGREWRITEAOF with aof) as soon as the limit
  // allows, whatever its schedule says.
  void RequestSaveAll();
  // How many forks this scheduler started, and the most it saw running at once.
  int forks_started() const { return forks_started_; }
  int most_concurrent() const { return most_concurrent_; }
  // Forks running at the last poll, and how long, summed over shards, due shards have waited
  // for the limit or for memory (for /metrics). Any thread.
  int forks_running() const { return forks_running_; }
  double fork_wait_seconds() const { return fork_wait_us_ / 1e6; }

 private:
  void Loop();
  void Tick(size_t& cursor);

  const SharedAccess& access_;
  std::string host_;
  std::vector<int> ports_;
  Durability durability_;
  std::chrono::milliseconds interval_;
  std::vector<std::atomic<bool>> save_requested_;
  std::atomic<int> forks_started_{0};
  std::atomic<int> most_concurrent_{0};
  std::atomic<int> forks_running_{0};
  std::atomic<uint64_t> fork_wait_us_{0};
  // Due shards left waiting at the last tick, and when it was: the next tick adds their wait.
  size_t waiting_ = 0;
  std::chrono::steady_clock::time_point last_tick_{};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace shardctl::launcher
