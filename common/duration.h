// Durations written the way ops write them: "500ms", "3s", "2m", or a bare number of milliseconds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::common {

// Parses "250ms", "3s", "1.5s", "2m", "1h" or "500" (milliseconds). Errors name the text and show
// an example.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "250ms", "3s", "1.5s", "2m": the shortest form that parses back to the same value (to the ms).
std::string FormatDuration(std::chrono::milliseconds duration);

}  // namespace shardctl::common
