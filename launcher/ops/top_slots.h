// What `shardctl top --slots` shows below the command line: the deployment's hottest slots over
// each interval, from the primaries' CLUSTER SLOT-STATS and, when a supervised shardproxy answers
// PROXY SLOTS, the requests it routed to each slot. Nothing here prints.
//
//   Open: the live primaries (CLUSTER NODES), cluster-slot-stats-enabled turned on where it was
//         off (put back when the feed goes) ─▶ the first reading
//   Next: a reading (SLOT-STATS of each primary's slots, PROXY SLOTS) ─▶ HottestSlots against
//         the previous one
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/slot_heat.h"
#include "launcher/cluster/slot_mover.h"
#include "launcher/model/deployment.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// One refresh: the hottest slots over the last `seconds`.
struct SlotTopFrame {
  double seconds = 0;
  std::vector<SlotHeat> slots;
  bool slot_stats = false;  // the primaries answer CLUSTER SLOT-STATS
  bool proxy = false;       // the proxy answered PROXY SLOTS both times
};

class SlotTopFeed {
 public:
  // Loads the deployment `spec` names, turns per-slot counting on and takes the first reading.
  // Errors as LoadTarget's; a runtime failure when no primary answers, or when the engine has no
  // CLUSTER SLOT-STATS and no proxy answers PROXY SLOTS (the message says which engines have it).
  static Outcome<std::unique_ptr<SlotTopFeed>> Open(const Spec& spec,
                                                    std::chrono::milliseconds timeout);
  ~SlotTopFeed();  // puts cluster-slot-stats-enabled back where it was off

  // The `limit` hottest slots since the previous call (or Open).
  SlotTopFrame Next(size_t limit);
  const std::string& name() const { return deployment_.plan.name; }

 private:
  struct Primary {
    MoveNode node;
    int shard = -1;
    std::vector<common::SlotRange> slots;
    std::optional<RedisConnection> connection;
  };
  SlotTopFeed(Deployment deployment, Access access, std::chrono::milliseconds timeout);
  common::Status Connect(std::vector<Primary> primaries);
  SlotReading Read();
  void ReadProxy(SlotReading& reading);

  Deployment deployment_;
  Access access_;
  std::chrono::milliseconds timeout_;
  SlotCounting counting_;
  std::vector<Primary> primaries_;
  bool slot_stats_ = false;
  std::optional<RedisConnection> proxy_;
  std::chrono::steady_clock::time_point read_at_;
  SlotReading previous_;
};

}  // namespace shardctl::launcher
