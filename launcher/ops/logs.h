// `shardctl logs [SHARD]`: which log, and its last lines. Following it (-f) is the CLI's loop.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct LogTail {
  std::filesystem::path path;  // the supervisor's log, or shard SHARD's
  std::string tail;            // its last `lines` lines
};

// No record is fine: the logs of an `up` that failed (and removed its record) are still there.
// A log that is not there is a runtime fault naming the path and what to check.
Outcome<LogTail> ReadLog(const Spec& spec, std::optional<int> shard, int lines);

}  // namespace shardctl::launcher
