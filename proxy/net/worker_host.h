// WorkerHost: what a Worker needs of the process that runs it, beyond what every session shares
// (ProxyServices): the slot map, the TLS contexts, client admission, and per-shard error counts.
// ProxyServer implements it; the worker never sees the server itself, so the network room does
// not include the room above it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/tls.h"
#include "proxy/routing/topology.h"
#include "proxy/services/client_directory.h"
#include "proxy/services/services.h"

namespace shardctl::proxy {

class WorkerHost : public ProxyServices {
 public:
  // The one slot-map refresher (any thread).
  virtual ClusterTopology& topology() = 0;
  // The TLS contexts new connections use (any thread); null for plain RESP on that side.
  virtual std::shared_ptr<const common::TlsContext> client_tls() const = 0;
  virtual std::shared_ptr<const common::TlsContext> shard_tls() const = 0;
  // Counts a new client against --max-clients; false when full. ReleaseClient undoes it.
  virtual bool AdmitClient() = 0;
  virtual void ReleaseClient() = 0;
  // A process-wide id for CLIENT ID / CLIENT LIST.
  virtual uint64_t NextClientId() = 0;
  // Every worker's clients by id (CLIENT TRACKING ... REDIRECT).
  virtual ClientDirectory& client_directory() = 0;
  // A shard connection failed: counted for /metrics, if it is served.
  virtual void CountBackendError(const std::string& host, int port) = 0;
  // The body of a script loaded through the proxy, by sha (NOSCRIPT recovery).
  virtual std::optional<std::string> ScriptBody(std::string_view sha) const = 0;
};

}  // namespace shardctl::proxy
