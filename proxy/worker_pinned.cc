// The worker's pinned connections: a client's own connection to one shard, for the commands
// that hold a connection's state (a blocked BLPOP, a WATCH, the write offset WAIT counts).
//
// Opening one per command would cost a connect and a HELLO/AUTH per BLPOP, so an idle pinned
// connection goes back to a small per-worker pool and the next client that needs that shard
// takes it. Only connections in a clean state are pooled: nothing waiting on them, and no
// WATCH (the session sends UNWATCH first). A shard closing an idle pooled connection fails it,
// and ForgetBackend() takes it out of the pool.
#include <algorithm>

#include "proxy/backend.h"
#include "proxy/server.h"
#include "proxy/worker.h"

namespace shardctl::proxy {

Backend* Worker::AcquirePinned(const std::string& host, int port, int protocol, Session* session) {
  ProxyStats& stats = server_.stats();
  const std::string key = ConnectionKey(host, port, protocol);
  auto found = idle_pinned_.find(key);
  if (found != idle_pinned_.end() && !found->second.empty()) {
    Backend* backend = found->second.back();
    found->second.pop_back();
    stats.pinned_idle.fetch_sub(1, std::memory_order_relaxed);
    stats.pinned_reused.fetch_add(1, std::memory_order_relaxed);
    backend->pinned_for = session;
    return backend;
  }
  auto* backend = new Backend(*this, host, port, protocol, "pinned:" + key);
  backend->pinned = true;
  backend->pinned_for = session;
  pinned_all_.push_back(backend);
  stats.pinned_opened.fetch_add(1, std::memory_order_relaxed);
  backend->Connect();
  return backend;
}

void Worker::ReleasePinned(Backend* backend) {
  backend->pinned_for = nullptr;
  if (backend->closing()) return;
  if (stopping_ || backend->HasRequests()) {
    // Still blocked in a command (the client left mid-BLPOP): Redis unblocks it when the
    // connection closes, which is the only way to take it back.
    return backend->Close("closed with its client");
  }
  if (backend->needs_unwatch) {
    backend->SendUnanswered("*1\r\n$7\r\nUNWATCH\r\n");
    backend->needs_unwatch = false;
  }
  std::vector<Backend*>& idle =
      idle_pinned_[ConnectionKey(backend->host(), backend->port(), backend->protocol())];
  if (idle.size() >= kIdlePinnedPerShard) return backend->Close("pinned pool full");
  idle.push_back(backend);
  server_.stats().pinned_idle.fetch_add(1, std::memory_order_relaxed);
}

void Worker::ForgetIdlePinned(Backend* backend) {
  auto found =
      idle_pinned_.find(ConnectionKey(backend->host(), backend->port(), backend->protocol()));
  if (found == idle_pinned_.end()) return;
  const size_t before = found->second.size();
  std::erase(found->second, backend);
  if (found->second.size() != before) {
    server_.stats().pinned_idle.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Worker::CloseIdlePinned() {
  std::vector<Backend*> idle;
  for (auto& [key, backends] : idle_pinned_)
    idle.insert(idle.end(), backends.begin(), backends.end());
  for (Backend* backend : idle) backend->Close("shardproxy is shutting down");
}

}  // namespace shardctl::proxy
