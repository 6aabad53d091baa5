#include "launcher/ops/serving_cluster.h"

#include <algorithm>
#include <numeric>
#include <thread>

#include "common/numbers.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/ops/cluster_view.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;
using namespace std::chrono_literals;

Result<ServingCluster> ReadServingCluster(const Access& access, const Plan& plan) {
  auto view = ReadClusterView(access, plan, 5s);
  if (!view.ok()) return view.error();
  if (view->cluster_state != "ok") {
    return Error("the cluster is " + view->cluster_state +
                 " (shardctl status --cluster shows why); wait until it is ok");
  }
  ServingCluster serving;
  std::vector<common::NodeLine> nodes;
  for (const auto& entry : view->nodes) {
    nodes.push_back(entry.node);
    if (!entry.node.IsPrimary() || !entry.node.HasSlots()) continue;
    if (entry.node.Failing()) {
      return Error("primary " + entry.node.address.ToString() +
                   " is failing; wait until a replica took over or it is back");
    }
    serving.primaries.push_back(entry.node);
  }
  std::sort(serving.primaries.begin(), serving.primaries.end(), [](const auto& a, const auto& b) {
    return a.slots.front().first < b.slots.front().first;
  });
  auto table = common::SlotTable::FromNodeLines(nodes);
  if (!table.ok()) return table.error();
  if (table->Unassigned() > 0) {
    return Error(std::to_string(table->Unassigned()) +
                 " slots have no owner; run shardctl up again to finish forming the cluster");
  }
  serving.table = std::move(table).value();
  return serving;
}

Result<ServingCluster> WaitForServingCluster(const Access& access, const Plan& plan,
                                             std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    auto serving = ReadServingCluster(access, plan);
    if (serving.ok()) {
      // A primary restarting is not marked failing until the node timeout has passed: the view
      // can be "ok" while it refuses connections. Every primary must answer too.
      auto answering = ConnectPrimaries(access, serving->primaries);
      if (!answering.ok()) serving = answering.error();
    }
    if (serving.ok() || std::chrono::steady_clock::now() >= deadline) return serving;
    std::this_thread::sleep_for(200ms);
  }
}

Result<std::vector<RedisConnection>> ConnectPrimaries(
    const Access& access, const std::vector<common::NodeLine>& primaries) {
  std::vector<RedisConnection> connections;
  for (const auto& primary : primaries) {
    auto connection =
        RedisConnection::Connect(access, primary.address.host, primary.address.port, 5s);
    if (!connection.ok()) return connection.error();
    connections.push_back(std::move(connection).value());
  }
  return connections;
}

Result<std::vector<uint64_t>> CountKeys(const Access& access,
                                        const std::vector<common::NodeLine>& primaries) {
  auto connections = ConnectPrimaries(access, primaries);
  if (!connections.ok()) return connections.error();
  std::vector<uint64_t> counts;
  for (auto& connection : *connections) {
    auto size = connection.Run({"DBSIZE"});
    if (!size.ok()) return size.error().Context(connection.address() + ": DBSIZE");
    counts.push_back(common::ParseInteger<uint64_t>(*size).value_or(0));
  }
  return counts;
}

Result<uint64_t> TotalKeys(const Access& access, const std::vector<common::NodeLine>& primaries) {
  auto counts = CountKeys(access, primaries);
  if (!counts.ok()) return counts.error();
  uint64_t total = 0;
  for (uint64_t count : *counts) total += count;
  return total;
}

KeyDepartures KeyDepartures::Since(const KeyDepartures& before) const {
  auto since = [](const std::vector<uint64_t>& now, const std::vector<uint64_t>& then) {
    std::vector<uint64_t> delta;
    for (size_t i = 0; i < now.size(); ++i) {
      const uint64_t start = i < then.size() ? then[i] : 0;
      delta.push_back(now[i] >= start ? now[i] - start : now[i]);
    }
    return delta;
  };
  return {.expired = since(expired, before.expired), .evicted = since(evicted, before.evicted)};
}

uint64_t KeyDepartures::TotalExpired() const {
  return std::accumulate(expired.begin(), expired.end(), uint64_t{0});
}

uint64_t KeyDepartures::TotalEvicted() const {
  return std::accumulate(evicted.begin(), evicted.end(), uint64_t{0});
}

Result<KeyDepartures> ReadKeyDepartures(const Access& access,
                                        const std::vector<common::NodeLine>& primaries) {
  auto connections = ConnectPrimaries(access, primaries);
  if (!connections.ok()) return connections.error();
  KeyDepartures departures;
  for (auto& connection : *connections) {
    auto stats = connection.Run({"INFO", "stats"});
    if (!stats.ok()) return stats.error().Context(connection.address() + ": INFO stats");
    departures.expired.push_back(InfoNumber<uint64_t>(*stats, "expired_keys"));
    departures.evicted.push_back(InfoNumber<uint64_t>(*stats, "evicted_keys"));
  }
  return departures;
}

}  // namespace shardctl::launcher
