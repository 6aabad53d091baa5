// ClusterTopology: the one slot-map refresher, shared by all worker threads.
//
//   start ──RefreshNow()──▶ CLUSTER SLOTS from a node ──▶ SlotMap ──swap──▶ snapshot_ (version+1)
//   timer / RequestRefresh() (MOVED, connection error) ──▶ refresher thread (one refresh at a
//   time, at most one per min_gap) ──▶ same
//   workers: version() (one atomic load per request) and Snapshot() only when it changed
//
// Nodes are asked in order: the primaries of the current map, then the --cluster seeds; the
// first complete map wins, else the one with the fewest unassigned slots.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/tls.h"
#include "proxy/routing/slot_map.h"
#include "proxy/services/engine_identity.h"
#include "proxy/services/options.h"

namespace shardctl::proxy {

class ClusterTopology {
 public:
  // `login`: the AUTH arguments for the nodes ({"AUTH", [user,] password}), empty for none.
  ClusterTopology(std::vector<Endpoint> seeds, std::chrono::milliseconds interval,
                  std::vector<std::string> login = {},
                  std::chrono::milliseconds min_gap = std::chrono::milliseconds(100));
  ~ClusterTopology();  // stops the refresher thread
  ClusterTopology(const ClusterTopology&) = delete;
  ClusterTopology& operator=(const ClusterTopology&) = delete;

  // The nodes serve TLS: every later query runs in it (a client context). Any thread.
  void UseTls(std::shared_ptr<const common::TlsContext> tls);

  // Reads the map now, on the calling thread. Errors list every node tried and why it failed.
  common::Status RefreshNow();

  // Starts the refresher thread (after a successful RefreshNow()).
  void Start();
  void Stop();

  // Asks for a refresh soon; never blocks. Calls while one is pending or running coalesce.
  void RequestRefresh();

  // Bumped on every successful refresh that changed the map.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // The current map; never null after a successful RefreshNow().
  std::shared_ptr<const SlotMap> Snapshot() const;

  // What INFO shows.
  uint64_t refreshes() const { return refreshes_.load(std::memory_order_relaxed); }
  uint64_t refresh_failures() const { return failures_.load(std::memory_order_relaxed); }
  std::string last_error() const;
  std::string server_version() const;  // redis_version of the node last asked
  EngineIdentity engine() const;       // its server_name and version

 private:
  void Loop();
  std::vector<Endpoint> Candidates() const;

  const std::vector<Endpoint> seeds_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds min_gap_;
  const std::vector<std::string> login_;
  std::shared_ptr<const common::TlsContext> tls_;  // guarded by mutex_

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  std::shared_ptr<const SlotMap> snapshot_;
  std::string last_error_;
  std::string server_version_;
  EngineIdentity engine_;
  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> refreshes_{0};
  std::atomic<uint64_t> failures_{0};
  std::thread thread_;
};

}  // namespace shardctl::proxy
