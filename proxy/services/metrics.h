// shardproxy's Prometheus metrics (--metrics-port): commands and their durations per command
// family, counted per worker thread without locks and summed when /metrics is scraped.
//
//   Session::HandleCommand ──OnCommand()──▶ ThreadMetrics (one per worker, written only by it:
//   Session::Fill (reply complete) ──OnReply()──▶   counts, histogram buckets, sums in ns)
//                                                         │ relaxed loads at scrape time
//   Worker::OnBackendClosing ──CountBackendError()──▶ ProxyMetrics ──Render()──▶ /metrics text
//   ProxyStats (moved, ask), clients, slot map version ──────────┘
//
// A command's family is its name for the commands most workloads are made of (get, set, mget,
// hset, ...), else its routing kind (kind_single_key, kind_fanout, ...), and "other" for commands
// the table does not know: a fixed, bounded set of label values, whatever clients send.
//
// Durations run from the socket read that brought the command to the one that brought its last
// reply part (ReadBatch in ClientConnection::OnRead and Backend::OnRead): the clock is read once
// per read, so at pipeline 16 a command costs a few loads and stores, no clock call.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/commands/command_table.h"
#include "proxy/commands/request.h"
#include "proxy/services/hot_keys.h"

namespace shardctl::proxy {

// The histogram's upper bounds in seconds (le="..."), from 100 µs to 10 s, and +Inf.
inline constexpr std::array<double, 16> kDurationBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

// The same bounds in ns, as the worker threads compare them.
inline constexpr std::array<uint64_t, kDurationBounds.size()> kDurationBoundsNs = [] {
  std::array<uint64_t, kDurationBounds.size()> ns{};
  for (size_t i = 0; i < ns.size(); ++i) ns[i] = static_cast<uint64_t>(kDurationBounds[i] * 1e9);
  return ns;
}();

// The bucket search as a table by bit width: the bounds grow by 2x or more, so [2^(w-1), 2^w)
// holds at most one of them, and a duration of bit width w is past below[w] bounds, plus the
// next one if it exceeds it. Two loads and a compare, no loop.
struct DurationBucketTable {
  std::array<uint8_t, 65> below{};  // bounds under 2^(w-1)
  std::array<uint64_t, 65> next{};  // the first bound at or above 2^(w-1); max when none
};
inline constexpr DurationBucketTable kDurationBucketTable = [] {
  DurationBucketTable table;
  for (size_t width = 0; width <= 64; ++width) {
    const uint64_t low = width == 0 ? 0 : uint64_t{1} << (width - 1);
    size_t below = 0;
    while (below < kDurationBoundsNs.size() && kDurationBoundsNs[below] < low) ++below;
    table.below[width] = static_cast<uint8_t>(below);
    table.next[width] = below < kDurationBoundsNs.size() ? kDurationBoundsNs[below] : ~uint64_t{0};
  }
  return table;
}();

// Every family's label value, by family index.
std::span<const std::string_view> CommandFamilies();

// The family index of a command (an entry of AllCommands(), or the unknown-command entry).
uint32_t CommandFamilyOf(const CommandInfo& info);

// Counters of one worker thread. Written only by that thread (relaxed stores, no locked
// instructions); read by the scrape thread.
class alignas(64) ThreadMetrics {
 public:
  ThreadMetrics();

  // While a ReadBatch lives, the commands and replies handled on this thread are stamped with
  // the time it was made: one clock read per socket read (16 commands at pipeline 16) instead of
  // two per command. Outside a batch (timers, close callbacks) the clock is read each time.
  // A nested batch keeps the outer one's time. `metrics` may be null (no --metrics-port).
  class ReadBatch {
   public:
    explicit ReadBatch(ThreadMetrics* metrics)
        : metrics_(metrics != nullptr && metrics->batch_ns_ == 0 ? metrics : nullptr) {
      if (metrics_ != nullptr) metrics_->batch_ns_ = ClockNs();
    }
    ~ReadBatch() {
      if (metrics_ != nullptr) metrics_->batch_ns_ = 0;
    }
    ReadBatch(const ReadBatch&) = delete;
    ReadBatch& operator=(const ReadBatch&) = delete;

   private:
    ThreadMetrics* metrics_;
  };

  // A command was read: counts it under its family and notes when (a steady clock in ns).
  CommandStamp OnCommand(const CommandInfo& info) {
    const uint32_t family = FamilyOf(info);
    Bump(families_[family].commands);
    return {.started_ns = Now(), .family = family};
  }
  // The reply to the command `stamp` came from is complete: observes its duration.
  void OnReply(const CommandStamp& stamp) {
    const uint64_t now = Now();
    const uint64_t took = now > stamp.started_ns ? now - stamp.started_ns : 0;
    Family& family = families_[stamp.family];
    Bump(family.buckets[BucketOf(took)]);
    Bump(family.sum_ns, took);
  }

  // Scrape thread: the counters so far.
  uint64_t commands(size_t family) const;
  uint64_t bucket(size_t family, size_t bucket) const;  // bucket kDurationBounds.size(): +Inf
  uint64_t duration_sum_ns(size_t family) const;

  // A steady clock in ns (never 0).
  static uint64_t ClockNs();
  // The histogram bucket of a duration: the first bound it does not exceed, or +Inf.
  static size_t BucketOf(uint64_t ns) {
    const auto width = static_cast<size_t>(std::bit_width(ns));
    return kDurationBucketTable.below[width] + (kDurationBucketTable.next[width] < ns ? 1 : 0);
  }

 private:
  static constexpr size_t kBuckets = kDurationBounds.size() + 1;
  struct Family {
    std::atomic<uint64_t> commands{0};
    std::atomic<uint64_t> buckets[kBuckets] = {};
    std::atomic<uint64_t> sum_ns{0};
  };

  // Adds to a counter only this thread writes: a plain load and store, no locked add.
  static void Bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
    counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }
  uint64_t Now() const { return batch_ns_ != 0 ? batch_ns_ : ClockNs(); }
  // By position in the command table; the unknown-command entry lies outside it: "other".
  uint32_t FamilyOf(const CommandInfo& info) const {
    const auto at = reinterpret_cast<uintptr_t>(&info);
    const auto begin = reinterpret_cast<uintptr_t>(table_);
    if (at < begin || (at - begin) / sizeof(CommandInfo) >= table_size_) return other_;
    return family_of_[(at - begin) / sizeof(CommandInfo)];
  }

  const CommandInfo* table_;  // AllCommands(), whose entries map to families by position
  size_t table_size_;
  const uint32_t* family_of_;  // by table position
  uint32_t other_;
  uint64_t batch_ns_ = 0;  // while a ReadBatch lives; this thread only
  std::unique_ptr<Family[]> families_;
};

// Everything /metrics shows, summed over the threads (pure data, for RenderProxyMetrics).
struct ProxyMetricsSnapshot {
  struct Family {
    std::string_view name;
    uint64_t commands = 0;
    std::array<uint64_t, kDurationBounds.size() + 1> buckets{};
    double duration_sum_seconds = 0;
  };
  std::vector<Family> families;  // only families with commands
  uint64_t client_connections = 0;
  std::map<std::string, uint64_t> backend_errors;  // "host:port" -> connection failures
  uint64_t moved = 0;
  uint64_t ask = 0;
  uint64_t slot_map_version = 0;
  std::vector<HotKey> hot_keys;                     // the hottest keys (key_load.h), most first
  std::vector<std::pair<int, uint64_t>> hot_slots;  // the busiest slots: (slot, requests)
};

// The /metrics body. Pure.
std::string RenderProxyMetrics(const ProxyMetricsSnapshot& snapshot);

// The server-wide part: one ThreadMetrics per worker and the per-shard backend error counts.
class ProxyMetrics {
 public:
  explicit ProxyMetrics(int threads);

  ThreadMetrics& thread(int index) { return threads_[static_cast<size_t>(index)]; }
  // A shard connection failed (any worker thread; rare, so a mutex is fine). At most 1024 shards
  // are named; the rest count under "other".
  void CountBackendError(const std::string& host, int port);
  // The thread counters summed, plus the backend errors; the caller fills in the rest.
  ProxyMetricsSnapshot Snapshot() const;

 private:
  std::unique_ptr<ThreadMetrics[]> threads_;
  size_t thread_count_;
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> backend_errors_;
};

}  // namespace shardctl::proxy
