#include "common/cpu_list.h"

#include <algorithm>

#include "common/numbers.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

Error BadList(std::string_view text, const std::string& what) {
  return Error("bad CPU list \"" + std::string(text) + "\": " + what);
}

// Parses one CPU id: "-1" and "+1" are rejected, not read as signed.
bool ParseId(std::string_view text, int& id) {
  std::optional<int> parsed = ParseIntegerIn(text, 0, kMaxCpuId);
  if (parsed) id = *parsed;
  return parsed.has_value();
}

// Appends the ids of one entry ("8" or "0-3") to `cpus`. `text` is the whole list, for errors.
Status ParseEntry(std::string_view text, std::string_view entry, std::vector<int>& cpus) {
  const std::string quoted = "\"" + std::string(entry) + "\"";
  const std::string expected = "a CPU id 0-" + std::to_string(kMaxCpuId) + " or a range like 0-3";
  const size_t dash = entry.find('-');
  int first = 0;
  int last = 0;
  if (dash == std::string_view::npos) {
    if (!ParseId(entry, first)) return BadList(text, quoted + " is not " + expected);
    cpus.push_back(first);
    return Ok();
  }
  if (!ParseId(entry.substr(0, dash), first) || !ParseId(entry.substr(dash + 1), last)) {
    return BadList(text, quoted + " is not " + expected);
  }
  if (last < first) {
    return BadList(text, "range " + std::string(entry) + " runs backwards (write it as " +
                             std::to_string(last) + "-" + std::to_string(first) + ")");
  }
  for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  return Ok();
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  text = TrimSpace(text);
  std::vector<int> cpus;
  if (text.empty()) return cpus;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    const std::string_view entry = TrimSpace(text.substr(begin, comma - begin));
    if (entry.empty()) {
      return BadList(text, "empty entry at character " + std::to_string(begin + 1) +
                               " (remove the extra comma)");
    }
    if (Status status = ParseEntry(text, entry, cpus); !status) return status.error();
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::vector<int> sorted = cpus;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t run_end = i;
    while (run_end + 1 < sorted.size() && sorted[run_end + 1] == sorted[run_end] + 1) ++run_end;
    if (!out.empty()) out += ',';
    out += std::to_string(sorted[i]);
    // Two neighbours print as "0-1" rather than "0,1": same length, and it is what sysfs prints.
    if (run_end > i) out += "-" + std::to_string(sorted[run_end]);
    i = run_end + 1;
  }
  return out;
}

}  // namespace shardctl::common
