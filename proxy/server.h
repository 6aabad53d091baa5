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
#include "common/tls.h"
#include "proxy/net/worker_host.h"
#include "proxy/routing/topology.h"
#include "proxy/services/auth.h"
#include "proxy/services/key_load.h"
#include "proxy/services/metrics.h"
#include "proxy/services/options.h"
#include "proxy/services/services.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {

class Worker;

// The proxy's TLS (--tls-*): what it serves clients with, and what it connects to shards with.
// Either may be null (plain RESP on that side).
struct ProxyTls {
  std::shared_ptr<const common::TlsContext> clients;  // a server context
  std::shared_ptr<const common::TlsContext> shards;   // a client context
};

class ProxyServer final : public WorkerHost {
 public:
  ProxyServer(const ProxyOptions& options, ClusterTopology& topology, int threads,
              AuthConfig auth = {}, ProxyTls tls = {});
  ~ProxyServer();
  ProxyServer(const ProxyServer&) = delete;
  ProxyServer& operator=(const ProxyServer&) = delete;

  // Opens every worker's listener (so a taken port fails here, before any thread runs), then
  // starts the worker threads.
  common::Status Start();
  // Asks every worker to stop and joins them.
  void Stop();

  // ProxyServices.
  const ProxyOptions& options() const override { return options_; }
  const AuthConfig& auth() const override { return auth_; }
  ProxyStats& stats() override { return stats_; }
  void RememberScript(std::string sha, std::string body) override;
  void ForgetScripts() override;
  std::string InfoText(std::string_view section) const override;
  std::string ServerVersion() const override { return topology_.server_version(); }
  EngineIdentity ServerEngine() const override { return topology_.engine(); }
  ThreadMetrics* metrics(int thread) override {
    return metrics_ ? &metrics_->thread(thread) : nullptr;
  }
  KeyLoadBoard* key_load_board() override { return key_load_.get(); }
  PubSubCounts& pubsub_counts() override { return pubsub_counts_; }
  ClientDirectory& client_directory() override { return client_directory_; }

  // WorkerHost. A connection keeps the TLS context it started with, so a reload never touches
  // one already open.
  ClusterTopology& topology() override { return topology_; }
  std::shared_ptr<const common::TlsContext> client_tls() const override;
  std::shared_ptr<const common::TlsContext> shard_tls() const override;
  // Swaps in freshly loaded contexts (SIGHUP: certificates renewed on disk). Only a side that
  // had TLS gets it.
  void ReplaceTls(ProxyTls tls);
  int threads() const { return static_cast<int>(workers_.size()); }

  bool AdmitClient() override;
  void ReleaseClient() override;
  uint64_t NextClientId() override {
    return next_client_id_.fetch_add(1, std::memory_order_relaxed);
  }
  void CountBackendError(const std::string& host, int port) override {
    if (metrics_) metrics_->CountBackendError(host, port);
  }
  // The /metrics body (any thread): the workers' counters summed, plus clients, redirects and
  // the slot map version.
  std::string MetricsText() const;

  // The body of a script loaded through the proxy (RememberScript()), by sha. Scripts are kept
  // bounded (the oldest half is dropped when full). Thread-safe; not on the GET/SET path.
  std::optional<std::string> ScriptBody(std::string_view sha) const override;

 private:
  // INFO's sections, appended to `out`.
  void AppendServerInfo(std::string& out) const;
  void AppendClientsInfo(std::string& out) const;
  void AppendStatsInfo(std::string& out) const;
  void AppendProxyInfo(std::string& out) const;
  void AppendSlotMapInfo(std::string& out) const;
  void AppendHotKeysInfo(std::string& out) const;

  const ProxyOptions& options_;
  const AuthConfig auth_;
  mutable std::mutex tls_mutex_;
  ProxyTls tls_;  // guarded by tls_mutex_
  ClusterTopology& topology_;
  ProxyStats stats_;
  std::unique_ptr<ProxyMetrics> metrics_;   // only with --metrics-port
  std::unique_ptr<KeyLoadBoard> key_load_;  // null with --hot-keys 0
  PubSubCounts pubsub_counts_;
  ClientDirectory client_directory_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<int> clients_{0};
  mutable std::mutex scripts_mutex_;
  std::map<std::string, std::string, std::less<>> scripts_;
  std::atomic<uint64_t> next_client_id_{1};
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace shardctl::proxy
