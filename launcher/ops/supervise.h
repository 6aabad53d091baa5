// `shardctl supervise`: this process becomes the supervisor of a recorded deployment (what `up`
// starts in the background, with --ready-fd).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// Runs the supervisor until it stops; `events` hears its progress, "ready" and "failed" events.
// Returns its exit code; no record is a usage fault.
Outcome<int> Supervise(const Spec& spec, const std::function<void(const nlohmann::json&)>& events);

}  // namespace shardctl::launcher
