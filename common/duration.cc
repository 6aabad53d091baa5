#include "common/duration.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "common/numbers.h"

namespace shardctl::common {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto invalid = [&] {
    return Error("\"" + std::string(text) + "\" is not a duration (write e.g. 500ms, 3s or 2m)");
  };
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
    ++digits;
  }
  if (digits == 0 || digits > 18) return invalid();
  std::string number(text.substr(0, digits));
  if (std::count(number.begin(), number.end(), '.') > 1 || number.back() == '.') return invalid();
  const double value = ParseDecimal(number).value_or(0);  // digits and one inner dot
  std::string_view unit = text.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else {
    return invalid();
  }
  double ms = value * scale;
  if (ms > 1e12) return invalid();
  return std::chrono::milliseconds(static_cast<long long>(std::llround(ms)));
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  long long ms = duration.count();
  if (ms % 60'000 == 0 && ms != 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0 && ms != 0) return std::to_string(ms / 1000) + "s";
  if (ms >= 1000 && ms % 100 == 0) {
    return std::to_string(ms / 1000) + "." + std::to_string((ms % 1000) / 100) + "s";
  }
  return std::to_string(ms) + "ms";
}

}  // namespace shardctl::common
