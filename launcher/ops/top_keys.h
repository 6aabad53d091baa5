// What `shardctl top --keys` shows: the hottest keys the deployment's shardproxy routed (PROXY
// HOTKEYS, INFO hotkeys), their rates between two refreshes, and the shard that owns each key's
// slot (CLUSTER NODES of the first shard that answers). Nothing here prints.
//
//   TopKeysFeed::Next() (I/O) ──▶ TopKeysSample ──┐
//                       the previous TopKeysSample ─┴▶ TopKeyRows() (pure) ──▶ TopKeysTable()
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/model/deployment.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// One entry of PROXY HOTKEYS: requests counted since the proxy started (at most `error` too
// many), of which `reads` by read-only commands.
struct ProxyHotKey {
  std::string key;
  uint64_t requests = 0;
  uint64_t reads = 0;
  uint64_t error = 0;
  friend bool operator==(const ProxyHotKey&, const ProxyHotKey&) = default;
};

// Pure: PROXY HOTKEYS' reply flattened one level (key, requests, reads, error, key, ...).
common::Result<std::vector<ProxyHotKey>> ParseProxyHotKeys(std::span<const std::string> flat);

// Pure: the keys of `keys` whose reads are at least `min_reads` (0..1) of the requests counted
// since they entered the proxy's table (requests - error), in their order: what replicas could
// serve (`rebalance --by load` names them).
std::vector<ProxyHotKey> ReadMostlyKeys(std::span<const ProxyHotKey> keys, double min_reads = 0.9);

// The deployment's shardproxy's hottest `count` keys (PROXY HOTKEYS). Errors: no proxy, or it
// does not answer.
common::Result<std::vector<ProxyHotKey>> ReadProxyHotKeys(const Access& access,
                                                          const Deployment& deployment,
                                                          size_t count,
                                                          std::chrono::milliseconds timeout);

struct TopKeysSample {
  std::chrono::steady_clock::time_point at;
  std::vector<ProxyHotKey> keys;   // hottest first
  uint64_t requests = 0;           // every key the proxy counted (INFO hotkeys_requests)
  std::vector<int> owner_of_slot;  // shard index by slot, -1 unknown; empty: no shard answered
};

struct TopKeyRow {
  std::string key;
  uint64_t requests = 0;                      // since the proxy started
  std::optional<double> requests_per_second;  // nullopt on the first refresh
  double share = 0;                           // of every counted request: over the interval,
                                              // or since the start on the first refresh
  std::optional<double> reads_share;          // reads / requests; nullopt without requests
  int slot = 0;
  int shard = -1;  // the plan's index of the slot's owner; -1 unknown
};

// Pure: the rows of `current`, hottest first; rates and shares over the interval from
// `previous` (a key new since then counts from zero), else since the proxy started.
std::vector<TopKeyRow> TopKeyRows(const TopKeysSample* previous, const TopKeysSample& current);

// Pure: the table's lines, a header first (KEY REQ/S SHARE READS SLOT SHARD). Keys are shown
// with bytes outside printable ASCII as \xHH, cut to 40 characters.
std::vector<std::string> TopKeysTable(const std::vector<TopKeyRow>& rows);

// `shardctl top --keys`'s data, one refresh after another.
class TopKeysFeed {
 public:
  // Loads the deployment `spec` names. Fails (Fault::kRuntime) when it runs no shardproxy.
  static Outcome<TopKeysFeed> Open(const Spec& spec, std::chrono::milliseconds timeout,
                                   size_t keys);

  // One refresh. An error when the proxy does not answer (the deployment is down).
  common::Result<std::vector<TopKeyRow>> Next();
  const std::string& name() const { return deployment_.plan.name; }

 private:
  TopKeysFeed(Deployment deployment, Access access, std::chrono::milliseconds timeout, size_t keys);
  common::Result<TopKeysSample> Sample();

  Deployment deployment_;
  Access access_;
  std::chrono::milliseconds timeout_;
  size_t keys_;
  std::optional<RedisConnection> proxy_;
  std::optional<TopKeysSample> previous_;
};

}  // namespace shardctl::launcher
