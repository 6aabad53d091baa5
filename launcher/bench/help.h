// The help texts of `shardctl bench run` and `shardctl bench compare` (shown by --help and by
// `shardctl help bench`).
#pragma once

#include <string>

namespace shardctl::launcher {

// "bench" (bench run) or "bench compare"; "" for anything else.
std::string BenchHelpText(const std::string& command);

}  // namespace shardctl::launcher
