#include "launcher/bench/client.h"

#include <uv.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "launcher/bench/worker.h"

namespace shardctl::launcher {
namespace {

// Adds one thread's numbers to the total.
void MergeWorker(const Worker& worker, LoadResult& total,
                 std::vector<std::pair<uint64_t, uint64_t>>& phase_times) {
  const LoadResult& part = worker.result();
  for (size_t i = 0; i < part.phases.size(); ++i) {
    PhaseResult& phase = total.phases[i];
    phase.latency.Merge(part.phases[i].latency);
    phase.ops += part.phases[i].ops;
    phase.errors += part.phases[i].errors;
    phase.hits += part.phases[i].hits;
    phase.misses += part.phases[i].misses;
    phase_times[i].first = std::min(phase_times[i].first, worker.phase_times()[i].first);
    phase_times[i].second = std::max(phase_times[i].second, worker.phase_times()[i].second);
  }
  if (total.per_second.size() < part.per_second.size()) {
    total.per_second.resize(part.per_second.size());
  }
  for (size_t i = 0; i < part.per_second.size(); ++i) total.per_second[i] += part.per_second[i];
  total.moved += part.moved;
  total.asked += part.asked;
  if (total.first_error.empty()) total.first_error = part.first_error;
  total.seconds = std::max(total.seconds, part.seconds);
  total.interrupted = total.interrupted || part.interrupted;
}

// Until every worker is done: once a second, the live numbers to `on_second`.
void WatchWorkers(const std::vector<std::unique_ptr<Worker>>& workers,
                  const std::atomic<uint64_t>& start_ns,
                  const std::function<void(const LiveSecond&)>& on_second) {
  uint64_t last_ops = 0;
  uint64_t next_report = 0;
  while (true) {
    bool all_done = std::all_of(workers.begin(), workers.end(),
                                [](const auto& worker) { return worker->live().finished.load(); });
    if (all_done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    uint64_t start = start_ns.load();
    uint64_t now = uv_hrtime();
    if (start == 0 || !on_second) continue;
    if (next_report == 0) next_report = start + 1000000000;
    if (now < next_report) continue;
    next_report += 1000000000;
    LiveSecond live{.elapsed_seconds = static_cast<double>(now - start) / 1e9};
    LatencyHistogram window;
    for (const auto& worker : workers) {
      live.total_ops += worker->live().ops.load();
      live.errors += worker->live().errors.load();
      std::lock_guard lock(worker->live().mutex);
      window.Merge(worker->live().window);
      worker->live().window = LatencyHistogram();
    }
    live.ops = live.total_ops - last_ops;
    last_ops = live.total_ops;
    live.p99_ns = window.ValueAtPercentile(99);
    on_second(live);
  }
}

}  // namespace

common::Result<LoadResult> RunLoad(const LoadSpec& spec,
                                   const std::function<void(const LiveSecond&)>& on_second) {
  const int threads = spec.options->threads;
  WorkerShared shared(threads);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < threads; ++i) {
    workers.push_back(std::make_unique<Worker>(spec, i, shared));
  }
  std::vector<std::thread> running;
  for (auto& worker : workers) running.emplace_back([&worker] { worker->Run(); });
  WatchWorkers(workers, shared.start_ns, on_second);
  for (auto& thread : running) thread.join();

  LoadResult total;
  total.phases.resize(spec.phases.size());
  for (size_t i = 0; i < spec.phases.size(); ++i) total.phases[i].name = spec.phases[i].name;
  std::vector<std::pair<uint64_t, uint64_t>> phase_times(spec.phases.size(), {UINT64_MAX, 0});
  for (const auto& worker : workers) {
    if (!worker->failure().empty()) return common::Error(worker->failure());
    MergeWorker(*worker, total, phase_times);
  }
  for (size_t i = 0; i < spec.phases.size(); ++i) {
    auto [first, last] = phase_times[i];
    total.phases[i].seconds = last > first ? static_cast<double>(last - first) / 1e9 : 0;
  }
  return total;
}

}  // namespace shardctl::launcher
