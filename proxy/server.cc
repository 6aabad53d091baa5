#include "proxy/server.h"

#include <unistd.h>

#include <utility>

#include "common/slots.h"
#include "proxy/net/worker.h"

namespace shardctl::proxy {
namespace {

void Line(std::string& out, std::string_view key, const std::string& value) {
  out += key;
  out += ':';
  out += value;
  out += "\r\n";
}

void Line(std::string& out, std::string_view key, uint64_t value) {
  Line(out, key, std::to_string(value));
}

// What /metrics names of the hot keys and slots: a bounded set of label values.
constexpr size_t kMetricsHotKeys = 10;
constexpr size_t kMetricsHotSlots = 20;

uint64_t Get(const std::atomic<uint64_t>& counter) {
  return counter.load(std::memory_order_relaxed);
}

}  // namespace

ProxyServer::ProxyServer(const ProxyOptions& options, ClusterTopology& topology, int threads,
                         AuthConfig auth, ProxyTls tls)
    : options_(options), auth_(std::move(auth)), tls_(std::move(tls)), topology_(topology) {
  if (options.metrics_port) metrics_ = std::make_unique<ProxyMetrics>(threads);
  if (options.hot_keys > 0) key_load_ = std::make_unique<KeyLoadBoard>(threads, options.hot_keys);
  for (int i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>(*this, i));
}

ProxyServer::~ProxyServer() { Stop(); }

std::shared_ptr<const common::TlsContext> ProxyServer::client_tls() const {
  std::lock_guard lock(tls_mutex_);
  return tls_.clients;
}

std::shared_ptr<const common::TlsContext> ProxyServer::shard_tls() const {
  std::lock_guard lock(tls_mutex_);
  return tls_.shards;
}

void ProxyServer::ReplaceTls(ProxyTls tls) {
  std::lock_guard lock(tls_mutex_);
  tls_ = std::move(tls);
}

common::Status ProxyServer::Start() {
  for (auto& worker : workers_) {
    if (auto listening = worker->Listen(); !listening) return listening;
  }
  for (auto& worker : workers_) threads_.emplace_back([w = worker.get()] { w->Run(); });
  return common::Ok();
}

void ProxyServer::Stop() {
  if (threads_.empty()) return;
  for (auto& worker : workers_) worker->Stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

bool ProxyServer::AdmitClient() {
  if (clients_.fetch_add(1, std::memory_order_relaxed) >= options_.max_clients) {
    clients_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void ProxyServer::ReleaseClient() { clients_.fetch_sub(1, std::memory_order_relaxed); }

void ProxyServer::RememberScript(std::string sha, std::string body) {
  constexpr size_t kMaxScripts = 10000;
  std::lock_guard lock(scripts_mutex_);
  if (scripts_.size() >= kMaxScripts) scripts_.clear();
  scripts_.insert_or_assign(std::move(sha), std::move(body));
}

void ProxyServer::ForgetScripts() {
  std::lock_guard lock(scripts_mutex_);
  scripts_.clear();
}

std::string ProxyServer::MetricsText() const {
  if (!metrics_) return {};
  ProxyMetricsSnapshot snapshot = metrics_->Snapshot();
  snapshot.client_connections = static_cast<uint64_t>(clients_.load(std::memory_order_relaxed));
  snapshot.moved = Get(stats_.moved);
  snapshot.ask = Get(stats_.ask);
  snapshot.slot_map_version = topology_.version();
  if (key_load_) {
    KeyLoadSnapshot load = key_load_->Merged(kMetricsHotKeys);
    snapshot.hot_keys = std::move(load.keys);
    snapshot.hot_slots = BusiestSlots(load.slots, kMetricsHotSlots);
  }
  return RenderProxyMetrics(snapshot);
}

std::optional<std::string> ProxyServer::ScriptBody(std::string_view sha) const {
  std::lock_guard lock(scripts_mutex_);
  auto found = scripts_.find(sha);
  if (found == scripts_.end()) return std::nullopt;
  return found->second;
}

void ProxyServer::AppendServerInfo(std::string& out) const {
  const auto uptime =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_);
  const std::string version = topology_.server_version();
  out += "# Server\r\n";
  Line(out, "redis_version", version.empty() ? "unknown" : version);
  // Valkey's clients tell it apart by these two.
  if (const EngineIdentity engine = topology_.engine(); engine.valkey()) {
    Line(out, "server_name", engine.name);
    Line(out, "valkey_version", engine.version);
  }
  // Clients and Redis' own tests read these of any Redis; the proxy is no git build of Redis.
  Line(out, "redis_git_sha1", "00000000");
  Line(out, "redis_git_dirty", static_cast<uint64_t>(0));
  Line(out, "shardproxy_version", std::string(SHARDCTL_VERSION));
  Line(out, "redis_mode", "proxy");
  Line(out, "process_id", static_cast<uint64_t>(getpid()));
  Line(out, "tcp_port", static_cast<uint64_t>(options_.listen.port));
  Line(out, "uptime_in_seconds", static_cast<uint64_t>(uptime.count()));
  Line(out, "proxy_threads", static_cast<uint64_t>(workers_.size()));
}

void ProxyServer::AppendClientsInfo(std::string& out) const {
  out += "# Clients\r\n";
  Line(out, "connected_clients", static_cast<uint64_t>(clients_.load(std::memory_order_relaxed)));
  Line(out, "maxclients", static_cast<uint64_t>(options_.max_clients));
  // The shards' blocked_clients is INFO's (a request paused or blocked there, on a shared or a
  // pinned connection); this is how many of the proxy's clients wait on a blocking command.
  Line(out, "proxy_blocked_clients",
       static_cast<uint64_t>(std::max<int64_t>(0, stats_.blocked_clients.load())));
}

void ProxyServer::AppendStatsInfo(std::string& out) const {
  out += "# Stats\r\n";
  Line(out, "total_connections_received", Get(stats_.connections_received));
  Line(out, "total_commands_processed", Get(stats_.commands));
  Line(out, "rejected_connections", Get(stats_.rejected_connections));
}

void ProxyServer::AppendSlotMapInfo(std::string& out) const {
  const auto map = topology_.Snapshot();
  Line(out, "slot_map_version", topology_.version());
  Line(out, "slot_map_primaries", map ? map->primaries().size() : 0);
  size_t replicas = 0;
  for (size_t i = 0; map && i < map->primaries().size(); ++i) replicas += map->ReplicasOf(i).size();
  Line(out, "slot_map_replicas", replicas);
  Line(out, "slot_map_unassigned_slots",
       map ? static_cast<uint64_t>(map->Unassigned()) : static_cast<uint64_t>(common::kSlotCount));
  Line(out, "slot_map_refreshes", topology_.refreshes());
  Line(out, "slot_map_refresh_failures", topology_.refresh_failures());
  Line(out, "slot_map_last_error", topology_.last_error());
}

void ProxyServer::AppendHotKeysInfo(std::string& out) const {
  if (!key_load_) {
    out += "# Hotkeys\r\nhotkeys_tracked:0\r\nhotkeys_requests:0\r\n";
    return;
  }
  proxy::AppendHotKeysInfo(out, key_load_->Merged(key_load_->capacity()));
}

void ProxyServer::AppendProxyInfo(std::string& out) const {
  out += "# Proxy\r\n";
  AppendSlotMapInfo(out);
  Line(out, "split_commands", Get(stats_.split_commands));
  Line(out, "local_commands", Get(stats_.local_commands));
  Line(out, "proxy_error_replies", Get(stats_.error_replies));
  Line(out, "moved_redirects", Get(stats_.moved));
  Line(out, "ask_redirects", Get(stats_.ask));
  Line(out, "retries", Get(stats_.retries));
  Line(out, "backend_connects", Get(stats_.backend_connects));
  Line(out, "backend_failures", Get(stats_.backend_failures));
  Line(out, "protocol_errors", Get(stats_.protocol_errors));
  Line(out, "tls_errors", Get(stats_.tls_errors));
  Line(out, "tls_reloads", Get(stats_.tls_reloads));
  Line(out, "tls_reload_failures", Get(stats_.tls_reload_failures));
  Line(out, "paused_reads", Get(stats_.paused_reads));
  Line(out, "script_reloads", Get(stats_.script_reloads));
  Line(out, "pinned_connections_opened", Get(stats_.pinned_opened));
  Line(out, "pinned_connections_reused", Get(stats_.pinned_reused));
  Line(out, "read_from", std::string(ReadFromName(options_.read_from)));
  Line(out, "replica_reads", Get(stats_.replica_reads));
  Line(out, "replica_fallbacks", Get(stats_.replica_fallbacks));
  Line(out, "pubsub_messages", Get(stats_.pubsub_messages));
  Line(out, "pubsub_slow_disconnects", Get(stats_.pubsub_slow_disconnects));
  Line(out, "pinned_connections_idle",
       static_cast<uint64_t>(std::max<int64_t>(0, stats_.pinned_idle.load())));
  if (const auto map = topology_.Snapshot()) {
    for (size_t i = 0; i < map->primaries().size(); ++i) {
      const common::NodeAddress& primary = map->primaries()[i];
      Line(out, "primary" + std::to_string(i),
           "ip=" + primary.host + ",port=" + std::to_string(primary.port));
    }
  }
}

std::string ProxyServer::InfoText(std::string_view section) const {
  const bool all =
      section.empty() || section == "all" || section == "everything" || section == "default";
  using Appender = void (ProxyServer::*)(std::string&) const;
  // hotkeys: only when asked for (INFO hotkeys, or INFO proxy: the proxy's own view), or with
  // all/everything (as Redis' commandstats); not in the default INFO.
  const bool every = section == "all" || section == "everything";
  const bool proxy_asked = section == "proxy";
  struct Section {
    std::string_view name;
    Appender append;
    bool in_default;
  };
  constexpr Section kSections[] = {{"server", &ProxyServer::AppendServerInfo, true},
                                   {"clients", &ProxyServer::AppendClientsInfo, true},
                                   {"stats", &ProxyServer::AppendStatsInfo, true},
                                   {"proxy", &ProxyServer::AppendProxyInfo, true},
                                   {"hotkeys", &ProxyServer::AppendHotKeysInfo, false}};
  std::string out;
  for (const auto& [name, append, in_default] : kSections) {
    const bool with_proxy = proxy_asked && name == "hotkeys";
    if (section != name && !with_proxy && !(in_default ? all : every)) continue;
    if (!out.empty()) out += "\r\n";  // a blank line between sections, none after the last
    (this->*append)(out);
  }
  return out;
}

}  // namespace shardctl::proxy
