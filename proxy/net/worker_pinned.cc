// The worker's pinned connections: a client's own connection to one shard, for the commands that
// hold a connection's state (a blocked BLPOP, a WATCH, the write offset WAIT counts).
//
// Opening one per command would cost a connect and a HELLO/AUTH per BLPOP, so an idle pinned
// connection goes back to a per-worker pool and the next client that needs that shard takes it.
// Only connections in a clean state are pooled: nothing waiting on them, and no WATCH (UNWATCH is
// sent first). The pool keeps what a burst of blocking clients needs (up to kIdlePinnedPerShard
// per shard) and closes a connection once it has been idle for kPinnedIdleMs: closing on give-back
// when a small pool was full, then opening again for the next client, made a steady load of N
// blocking clients open a connection per command. A shard closing an idle pooled connection fails
// it, and OnBackendClosing() takes it out of the pool.
#include <algorithm>

#include "proxy/net/worker.h"
#include "proxy/net/worker_host.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {
namespace {

constexpr uint64_t kPinnedIdleMs = 30'000;
constexpr std::string_view kUnwatch = "*1\r\n$7\r\nUNWATCH\r\n";

}  // namespace

PinnedLink* Worker::AcquirePinned(const std::string& host, int port, int protocol,
                                  ReplySink* owner) {
  ProxyStats& stats = server_.stats();
  auto found = idle_pinned_.find(BackendKey(host, port, protocol));
  if (found != idle_pinned_.end() && !found->second.empty()) {
    Backend* backend = found->second.back().first;  // the most recently used: warmest
    found->second.pop_back();
    stats.pinned_idle.fetch_sub(1, std::memory_order_relaxed);
    stats.pinned_reused.fetch_add(1, std::memory_order_relaxed);
    backend->pinned_for = owner;
    return backend;
  }
  auto* backend =
      new Backend(*this, host, port, protocol, "pinned:" + BackendKey(host, port, protocol));
  backend->pinned = true;
  backend->pinned_for = owner;
  pinned_all_.push_back(backend);
  stats.pinned_opened.fetch_add(1, std::memory_order_relaxed);
  backend->Connect();
  return backend;
}

void Worker::ReleasePinned(PinnedLink* link) {
  auto* backend = static_cast<Backend*>(link);  // AcquirePinned() made every pinned link
  backend->pinned_for = nullptr;
  if (backend->closing()) return;
  if (backend->tracking) return backend->Close("closed with its tracking client");
  if (stopping_ || backend->HasRequests()) {
    // Still blocked in a command (the client left mid-BLPOP): Redis unblocks it when the
    // connection closes, which is the only way to take it back.
    return backend->Close("closed with its client");
  }
  if (backend->needs_unwatch) {
    backend->SendUnanswered(kUnwatch);
    backend->needs_unwatch = false;
  }
  auto& idle = idle_pinned_[BackendKey(backend->host(), backend->port(), backend->protocol())];
  if (idle.size() >= kIdlePinnedPerShard) return backend->Close("pinned pool full");
  idle.emplace_back(backend, uv_now(&loop_));
  server_.stats().pinned_idle.fetch_add(1, std::memory_order_relaxed);
}

void Worker::ForgetIdlePinned(Backend* backend) {
  auto found = idle_pinned_.find(BackendKey(backend->host(), backend->port(), backend->protocol()));
  if (found == idle_pinned_.end()) return;
  const size_t removed =
      std::erase_if(found->second, [&](const auto& entry) { return entry.first == backend; });
  if (removed > 0) server_.stats().pinned_idle.fetch_sub(1, std::memory_order_relaxed);
}

void Worker::ExpireIdlePinned(uint64_t now) {
  std::vector<Backend*> expired;
  for (auto& [key, idle] : idle_pinned_) {
    for (const auto& [backend, since] : idle) {
      if (now - since >= kPinnedIdleMs) expired.push_back(backend);
    }
  }
  // Close() takes each out of the pool (OnBackendClosing()).
  for (Backend* backend : expired) backend->Close("idle in the pinned pool");
}

void Worker::CloseIdlePinned() {
  std::vector<Backend*> idle;
  for (auto& [key, backends] : idle_pinned_) {
    for (const auto& [backend, since] : backends) idle.push_back(backend);
  }
  for (Backend* backend : idle) backend->Close("shardproxy is shutting down");
}

}  // namespace shardctl::proxy
