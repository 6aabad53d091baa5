// The load generator's engine: threads x connections x pipeline depth of GET/SET traffic over
// our own RESP connections (bench/connection.h, TLS when asked) on one libuv loop per thread, to
// one server or to a Redis Cluster.
//
//   RunLoad ──spawns──▶ worker thread i (pinned to --cpus[i]) ── uv loop ──▶ connections ─▶ server
//      │                  │  closed loop: a reply frees its slot, the next request goes out
//      │                  │  open loop: a 1 ms timer sends what the schedule says is due
//      │                  └─ per-phase latency histograms, per-second counts (merged at the end)
//      └─ every second: on_second(live numbers) for the progress line
//
// In cluster mode each connection is a set of TCP connections, one per primary; a request goes to
// the primary of its key's slot, MOVED updates the slot and resends, ASK resends after ASKING.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/tls.h"
#include "launcher/bench/args.h"
#include "launcher/bench/cluster.h"
#include "launcher/bench/histogram.h"
#include "launcher/bench/workload.h"

namespace shardctl::launcher {

// One run of the engine.
struct LoadSpec {
  const BenchOptions* options = nullptr;  // connections, bounds, rate, workload; not owned
  std::vector<Phase> phases;              // run in order
  bool bounded = true;  // false: ignore --duration/--requests/--rate (the populate run)
  int pipeline = 1;
  const SlotTable* slots = nullptr;  // cluster mode when set; copied by each thread
  // When set and it turns true, threads stop sending, wait for the replies in flight and end
  // as if the bound was reached (Ctrl-C). Not owned.
  const std::atomic<bool>* stop = nullptr;
};

// What a phase did, over all threads.
struct PhaseResult {
  std::string name;
  LatencyHistogram latency;  // nanoseconds, from (intended) send to reply
  uint64_t ops = 0;          // replies that were not errors
  uint64_t errors = 0;       // error replies (redirects followed are not errors)
  uint64_t hits = 0;         // GETs that found a value
  uint64_t misses = 0;       // GETs that found none
  double seconds = 0;        // first send to last reply
};

// What a run did.
struct LoadResult {
  std::vector<PhaseResult> phases;
  std::vector<uint64_t> per_second;  // replies completed in each second since the start
  uint64_t moved = 0;                // MOVED redirects followed
  uint64_t asked = 0;                // ASK redirects followed
  std::string first_error;           // the first error reply, "" when none
  double seconds = 0;                // start to the last reply of any thread
  bool interrupted = false;          // LoadSpec::stop ended the run early
};

// Numbers for the progress line, once a second.
struct LiveSecond {
  double elapsed_seconds = 0;
  uint64_t ops = 0;  // replies in the last second
  uint64_t total_ops = 0;
  uint64_t errors = 0;  // so far
  uint64_t p99_ns = 0;  // of the last second
};

// Runs the load. Blocks until every thread is done; calls `on_second` from the calling thread
// about once a second meanwhile (may be empty). Errors are runtime failures: a connection
// that could not be made or was lost, a server that stopped answering, a CPU that could not be
// pinned.
common::Result<LoadResult> RunLoad(const LoadSpec& spec,
                                   const std::function<void(const LiveSecond&)>& on_second);

}  // namespace shardctl::launcher
