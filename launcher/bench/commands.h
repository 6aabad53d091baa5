// The load generator's entry points: `shardctl bench run` and `shardctl bench compare` (their own
// flags, parsed here, not by the CLI), and the two steps `bench compare` reuses in process.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/bench/client.h"

namespace shardctl::launcher {

// `bench ...`: `args` are the words after "bench". Returns the exit code (term/exit_codes.h).
int RunBench(const std::vector<std::string>& args);
// `bench compare ...`: `args` start with "compare".
int RunBenchCompare(const std::vector<std::string>& args);

// Writes every key the workload's SETs will use once, unmeasured, so GETs hit (a no-op phase
// list when the workload does not populate). `slots` set: cluster mode. Errors name the step.
common::Status PopulateKeys(const BenchOptions& options, const SlotTable* slots,
                            const std::atomic<bool>* stop, bool terminal);

// Runs the workload's measured phases, as `bench run` does; `on_second` as in RunLoad.
common::Result<LoadResult> MeasureLoad(const BenchOptions& options, const SlotTable* slots,
                                       const std::atomic<bool>* stop,
                                       const std::function<void(const LiveSecond&)>& on_second);

}  // namespace shardctl::launcher
