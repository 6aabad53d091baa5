// ProxyServer: the worker threads, the client limit, the counters INFO shows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "proxy/auth.h"
#include "proxy/options.h"
#include "proxy/topology.h"

namespace shardctl::proxy {

class Worker;

// Counters over all workers (relaxed atomics: INFO reads them, nobody waits on them).
struct ProxyStats {
  std::atomic<uint64_t> connections_received{0};
  std::atomic<uint64_t> rejected_connections{0};
  std::atomic<uint64_t> commands{0};
  std::atomic<uint64_t> split_commands{0};
  std::atomic<uint64_t> local_commands{0};
  std::atomic<uint64_t> error_replies{0};  // errors made by the proxy (not forwarded ones)
  std::atomic<uint64_t> moved{0};
  std::atomic<uint64_t> ask{0};
  std::atomic<uint64_t> retries{0};
  std::atomic<uint64_t> backend_connects{0};
  std::atomic<uint64_t> backend_failures{0};
  std::atomic<uint64_t> protocol_errors{0};
  std::atomic<uint64_t> paused_reads{0};    // a client hit --max-pending or --max-client-buffer
  std::atomic<uint64_t> script_reloads{0};  // NOSCRIPT answered by loading the script again
  // Pinned connections (blocking commands, WATCH, WAIT): opened, taken from a worker's pool,
  // and idle in the pools now.
  std::atomic<uint64_t> pinned_opened{0};
  std::atomic<uint64_t> pinned_reused{0};
  std::atomic<int64_t> pinned_idle{0};
  std::atomic<uint64_t> replica_reads{0};      // reads sent to a replica (--read-from)
  std::atomic<uint64_t> replica_fallbacks{0};  // reads for a replica sent to the primary instead
  std::atomic<uint64_t> pubsub_messages{0};    // messages written to subscribers
  std::atomic<uint64_t> pubsub_slow_disconnects{0};  // past --pubsub-buffer-limit
};

class ProxyServer {
 public:
  ProxyServer(const ProxyOptions& options, ClusterTopology& topology, int threads,
              AuthConfig auth = {});
  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // Opens every worker's listener (so a taken port fails here, before any thread runs), then
  // starts the worker threads.
  common::Status Start();
  // Asks every worker to stop and joins them.
  void Stop();

  const ProxyOptions& options() const { return options_; }
  const AuthConfig& auth() const { return auth_; }
  ClusterTopology& topology() { return topology_; }
  ProxyStats& stats() { return stats_; }
  int threads() const { return static_cast<int>(workers_.size()); }

  // Counts a new client against --max-clients; false when full.
  bool AdmitClient();
  void ReleaseClient();
  uint64_t NextClientId() { return next_client_id_.fetch_add(1, std::memory_order_relaxed); }

  // Scripts loaded through the proxy (SCRIPT LOAD), by sha, so that a shard that lost them (a
  // restart, a failover to a replica that never saw the load) gets them again on NOSCRIPT.
  // Thread-safe; bounded (the oldest half is dropped when full). Not on the GET/SET path.
  void RememberScript(std::string sha, std::string body);
  std::optional<std::string> ScriptBody(std::string_view sha) const;

  // The text of INFO (all sections, or one: "server", "clients", "stats", "proxy").
  std::string InfoText(std::string_view section) const;

 private:
  const ProxyOptions& options_;
  const AuthConfig auth_;
  ClusterTopology& topology_;
  ProxyStats stats_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<int> clients_{0};
  mutable std::mutex scripts_mutex_;
  std::map<std::string, std::string, std::less<>> scripts_;
  std::atomic<uint64_t> next_client_id_{1};
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace shardctl::proxy
