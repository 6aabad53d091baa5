// ProxyServices: what every session shares, whatever thread it runs on: the options, the users,
// the counters INFO shows, the scripts loaded through the proxy, the proxy's own INFO text.
// ProxyServer implements it; unit tests use a fake. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "proxy/services/auth.h"
#include "proxy/services/engine_identity.h"
#include "proxy/services/options.h"
#include "proxy/services/pubsub_counts.h"

namespace shardctl::proxy {

struct ProxyStats;
class ThreadMetrics;
class KeyLoadBoard;

class ProxyServices {
 public:
  virtual ~ProxyServices() = default;
  virtual const ProxyOptions& options() const = 0;
  virtual const AuthConfig& auth() const = 0;
  virtual ProxyStats& stats() = 0;
  // A script every shard loaded through the proxy (SCRIPT LOAD), kept by sha so that a shard
  // that lost it (a restart, a failover) gets it again on NOSCRIPT.
  virtual void RememberScript(std::string sha, std::string body) = 0;
  // SCRIPT FLUSH: the scripts remembered are not loaded again (EVALSHA answers NOSCRIPT).
  virtual void ForgetScripts() = 0;
  // The text of INFO for `section` ("" for the default sections), the proxy's own parts.
  virtual std::string InfoText(std::string_view section) const = 0;
  // redis_version of the cluster, for HELLO; "" before it is known.
  virtual std::string ServerVersion() const = 0;
  // The engine behind the proxy (Redis unless INFO says otherwise): HELLO's server and version,
  // and the transaction rules that differ by engine.
  virtual EngineIdentity ServerEngine() const { return {}; }
  // The /metrics counters of worker `thread` (metrics.h), written only by that thread; null
  // without --metrics-port.
  virtual ThreadMetrics* metrics(int /*thread*/) { return nullptr; }
  // The workers' published key and slot counts (key_load.h); null with --hot-keys 0.
  virtual KeyLoadBoard* key_load_board() { return nullptr; }
  // Every worker's clients' channel and pattern subscriptions, counted (pubsub_counts.h).
  virtual PubSubCounts& pubsub_counts() = 0;
};

}  // namespace shardctl::proxy
