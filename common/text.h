// Small text helpers every reader of config files, sysfs and /proc needs.
#pragma once

#include <string_view>

namespace shardctl::common {

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace shardctl::common
