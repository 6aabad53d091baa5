// Memory sizes written the way Redis' own config file writes them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::common {

// Parses a size with Redis' units, case-insensitive: "100" (bytes), "1k" = 1000, "1kb" = 1024,
// "1m" = 10^6, "1mb" = 2^20, "1g" = 10^9, "1gb" = 2^30, plus "t"/"tb". A decimal fraction is
// allowed with a unit ("1.5gb"); no whitespace anywhere. Errors name the text and show an example
// of a valid size.
Result<uint64_t> ParseSize(std::string_view text);

// Formats bytes for humans in binary units with at most one decimal: 1073741824 -> "1gb",
// 1610612736 -> "1.5gb", 1000 -> "1000b". The output parses back with ParseSize to within 5%.
std::string FormatSize(uint64_t bytes);

}  // namespace shardctl::common
