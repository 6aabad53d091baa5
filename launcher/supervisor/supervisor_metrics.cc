// The supervisor's Prometheus endpoint: what Supervisor::StartMetrics sets up and what a scrape
// returns. The numbers come from the MetricsPoller thread (the shards), the loop (restarts) and
// the ForkScheduler; formatting them is metrics.h. The HTTP side is common/uv/http_server.h.
#include <unistd.h>

#include "common/endpoint.h"
#include "launcher/supervisor/metrics.h"
#include "launcher/supervisor/supervisor_internal.h"

namespace shardctl::launcher {
namespace {

constexpr auto kMetricsPollInterval = std::chrono::seconds(1);
constexpr auto kMetricsPollTimeout = std::chrono::milliseconds(500);

// This machine's name, for the host label of shardctl_shard_info ("" when it has none).
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

common::Status Supervisor::StartMetrics() {
  const MetricsConfig& config = deployment_.metrics;
  if (!config.enabled()) return common::Ok();
  metrics_server_ =
      std::make_unique<common::uv::MetricsHttpServer>(&loop_, [this] { return MetricsText(); });
  if (auto listening = metrics_server_->Listen(config.bind, config.port); !listening.ok()) {
    return listening.error().Context("--metrics-port " + std::to_string(config.port) +
                                     ": cannot listen (pick another --metrics-port or stop what "
                                     "listens there)");
  }
  RestartMetricsPoller();
  log_->info("Prometheus metrics on http://{}/metrics",
             common::FormatEndpoint(config.bind, config.port));
  return common::Ok();
}

void Supervisor::RestartMetricsPoller() {
  if (!metrics_server_) return;
  metrics_poller_.reset();  // joins the old thread before the new one polls
  metrics_poller_ = std::make_unique<MetricsPoller>(access_, deployment_.plan, dir_,
                                                    kMetricsPollInterval, kMetricsPollTimeout);
  metrics_poller_->Start();
}

std::string Supervisor::MetricsText() const {
  DeploymentMetrics metrics{.name = deployment_.plan.name,
                            .engine = deployment_.engine.Name(),
                            .engine_version = deployment_.engine.version,
                            .host = HostName(),
                            .address = AddressInCluster(deployment_.plan)};
  std::vector<MetricsPoller::Sample> samples;
  if (metrics_poller_) samples = metrics_poller_->Latest();
  // Slots, plan and samples line up by position (plan order); indices can have gaps after scale.
  for (const auto& slot : slots_) {
    const auto position = static_cast<size_t>(slot->position);
    if (position >= deployment_.plan.shards.size()) continue;
    const ShardPlan& shard = deployment_.plan.shards[position];
    ShardMetrics entry{.index = shard.index,
                       .port = shard.port,
                       .numa_node = shard.numa_node,
                       .planned_role = RoleName(shard.role),
                       .restarts = slot->watcher.restarts(),
                       .cpus = shard.cpus};
    if (position < samples.size()) {
      entry.info = samples[position].info;
      entry.cpu_seconds = samples[position].cpu_seconds;
      entry.load_share = samples[position].load_share;
    }
    metrics.shards.push_back(std::move(entry));
  }
  if (forks_) {
    metrics.forks_in_progress = forks_->forks_running();
    metrics.fork_wait_seconds = forks_->fork_wait_seconds();
  }
  metrics.import = ReadLiveImport(dir_);
  if (metrics_poller_) metrics.hot_slots = metrics_poller_->LatestSlots().hot;
  return RenderSupervisorMetrics(metrics);
}

}  // namespace shardctl::launcher
