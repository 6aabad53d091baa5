// CPU lists in the kernel's notation ("0-3,8,10-11"), as in sysfs, numactl and taskset.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

// The largest CPU id ParseCpuList accepts: Linux' NR_CPUS tops out at 8192, and the cap keeps a
// typo like "0-4000000000" from allocating gigabytes.
inline constexpr int kMaxCpuId = 8191;

// Parses "0-3,8,10-11" into sorted, de-duplicated CPU ids. Whitespace around tokens and a trailing
// newline (as sysfs files have) are accepted; an empty string gives an empty list. Errors name the
// bad token: "bad CPU list \"3-1\": range 3-1 runs backwards (write it as 1-3)".
Result<std::vector<int>> ParseCpuList(std::string_view text);

// Formats ids (any order, duplicates allowed) as the shortest kernel-style list: {0,1,2,3,8} ->
// "0-3,8". An empty list formats as "".
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace shardctl::common
