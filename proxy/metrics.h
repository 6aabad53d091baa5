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
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/command_table.h"
#include "proxy/request.h"

namespace shardctl::proxy {

// The histogram's upper bounds in seconds (le="..."), from 100 µs to 10 s, and +Inf.
inline constexpr std::array<double, 16> kDurationBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

// Every family's label value, by family index.
std::span<const std::string_view> CommandFamilies();

// The family index of a command (an entry of AllCommands(), or the unknown-command entry).
uint32_t CommandFamilyOf(const CommandInfo& info);

// Counters of one worker thread. Written only by that thread (relaxed stores, no locked
// instructions); read by the scrape thread.
class alignas(64) ThreadMetrics {
 public:
  ThreadMetrics();

  // A command was read: counts it under its family and notes when (a steady clock in ns).
  CommandStamp OnCommand(const CommandInfo& info);
  // The reply to the command `stamp` came from is complete: observes its duration.
  void OnReply(const CommandStamp& stamp);

  // Scrape thread: the counters so far.
  uint64_t commands(size_t family) const;
  uint64_t bucket(size_t family, size_t bucket) const;  // bucket kDurationBounds.size(): +Inf
  uint64_t duration_sum_ns(size_t family) const;

 private:
  static constexpr size_t kBuckets = kDurationBounds.size() + 1;
  struct Family {
    std::atomic<uint64_t> commands{0};
    std::atomic<uint64_t> buckets[kBuckets] = {};
    std::atomic<uint64_t> sum_ns{0};
  };

  const CommandInfo* table_;  // AllCommands(), whose entries map to families by position
  size_t table_size_;
  const uint32_t* family_of_;  // by table position
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
