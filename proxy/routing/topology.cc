#include "proxy/routing/topology.h"

#include <algorithm>
#include <optional>

#include "common/node_query.h"

namespace shardctl::proxy {
namespace {

using namespace std::chrono_literals;

constexpr auto kQueryTimeout = 1000ms;

bool SameMap(const SlotMap& a, const SlotMap& b) {
  if (a.primaries() != b.primaries()) return false;
  for (size_t i = 0; i < a.primaries().size(); ++i) {
    if (a.ReplicasOf(i) != b.ReplicasOf(i)) return false;  // replica reads must see them change
  }
  for (int slot = 0; slot < common::kSlotCount; ++slot) {
    if (a.PrimaryFor(slot) != b.PrimaryFor(slot)) return false;
  }
  return true;
}

}  // namespace

ClusterTopology::ClusterTopology(std::vector<Endpoint> seeds, std::chrono::milliseconds interval,
                                 std::vector<std::string> login, std::chrono::milliseconds min_gap)
    : seeds_(std::move(seeds)), interval_(interval), min_gap_(min_gap), login_(std::move(login)) {}

ClusterTopology::~ClusterTopology() { Stop(); }

void ClusterTopology::UseTls(std::shared_ptr<const common::TlsContext> tls) {
  std::lock_guard lock(mutex_);
  tls_ = std::move(tls);
}

std::vector<Endpoint> ClusterTopology::Candidates() const {
  std::vector<Endpoint> nodes;
  std::lock_guard lock(mutex_);
  if (snapshot_) {
    for (const auto& backend : snapshot_->primaries())
      nodes.push_back({backend.host, backend.port});
  }
  for (const auto& seed : seeds_) {
    if (std::find(nodes.begin(), nodes.end(), seed) == nodes.end()) nodes.push_back(seed);
  }
  return nodes;
}

common::Status ClusterTopology::RefreshNow() {
  std::vector<std::vector<std::string_view>> commands;
  if (!login_.empty()) commands.emplace_back(login_.begin(), login_.end());
  const size_t first = commands.size();  // replies before this answer the login
  commands.push_back({"CLUSTER", "SLOTS"});
  commands.push_back({"INFO", "server"});
  std::shared_ptr<const common::TlsContext> tls;
  {
    std::lock_guard lock(mutex_);
    tls = tls_;
  }
  std::string failures;
  std::optional<SlotMap> best;
  std::string best_version;
  EngineIdentity best_engine;
  for (const Endpoint& node : Candidates()) {
    auto replies = common::QueryNode(node, commands, kQueryTimeout, tls.get());
    if (!replies) {
      failures += (failures.empty() ? "" : "; ") + replies.error().message();
      continue;
    }
    if (first > 0 && !(*replies)[0].empty() && (*replies)[0][0] == '-') {
      const std::string& refused = (*replies)[0];
      failures += (failures.empty() ? "" : "; ") + node.ToString() + ": login refused (" +
                  refused.substr(1, refused.size() - 3) + "; check backend-password)";
      continue;
    }
    auto map = SlotMap::FromClusterSlots((*replies)[first], node.host);
    if (!map) {
      failures += (failures.empty() ? "" : "; ") + node.ToString() + ": " + map.error().message();
      continue;
    }
    if (!best || map->Unassigned() < best->Unassigned()) {
      best = std::move(map).value();
      best_version = common::InfoField((*replies)[first + 1], "redis_version");
      best_engine = EngineIdentityFromInfo((*replies)[first + 1]);
    }
    if (best->Unassigned() == 0) break;
  }
  refreshes_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  if (!best) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    last_error_ = failures;
    return common::Error("cannot read the slot map: " + failures);
  }
  server_version_ = best_version;
  engine_ = best_engine;
  if (!snapshot_ || !SameMap(*snapshot_, *best)) {
    snapshot_ = std::make_shared<const SlotMap>(std::move(*best));
    version_.fetch_add(1, std::memory_order_acq_rel);
  }
  return common::Ok();
}

void ClusterTopology::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void ClusterTopology::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClusterTopology::RequestRefresh() {
  {
    std::lock_guard lock(mutex_);
    if (requested_) return;
    requested_ = true;
  }
  wake_.notify_one();
}

void ClusterTopology::Loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, interval_, [this] { return stopping_ || requested_; });
    if (stopping_) break;
    requested_ = false;
    lock.unlock();
    (void)RefreshNow();  // failures are counted and shown by INFO; the old map stays
    lock.lock();
    // Rate limit: requests arriving now wait for the gap; they coalesce into one refresh.
    wake_.wait_for(lock, min_gap_, [this] { return stopping_; });
  }
}

std::shared_ptr<const SlotMap> ClusterTopology::Snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

std::string ClusterTopology::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

std::string ClusterTopology::server_version() const {
  std::lock_guard lock(mutex_);
  return server_version_;
}

EngineIdentity ClusterTopology::engine() const {
  std::lock_guard lock(mutex_);
  return engine_;
}

}  // namespace shardctl::proxy
