// The counters INFO shows, summed over every worker thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace shardctl::proxy {

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
  // Client connections closed by a failed TLS handshake or a bad record.
  std::atomic<uint64_t> tls_errors{0};
  std::atomic<uint64_t> tls_reloads{0};          // SIGHUP: the --tls-* files loaded again
  std::atomic<uint64_t> tls_reload_failures{0};  // SIGHUP: they did not load; the old ones serve
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
  // Blocking commands (BLPOP, XREAD BLOCK, WAIT: one per client command) routed and not yet
  // answered: INFO's proxy_blocked_clients (blocked_clients is the shards' own count).
  std::atomic<int64_t> blocked_clients{0};
  // Keyless scripts and functions (over a client's own connection, no --timeout) routed and not
  // yet answered: while one runs, PING asks the shards, so a client sees -BUSY as on Redis.
  // Not blocked clients: Redis does not count a running script as one.
  std::atomic<int64_t> running_scripts{0};
};

}  // namespace shardctl::proxy
