// Whole-string number parsing: the one number parser of launcher, proxy and bench.
//
// "42" parses; "", " 42", "42x", "+42" and values that do not fit the type do not. Callers say
// what the number was for in their own error ("--shards: expected a number, got \"x\"").
#pragma once

#include <charconv>
#include <concepts>
#include <optional>
#include <string_view>

namespace shardctl::common {

// All of `text` as an integer of type T in `base`, or nullopt.
template <std::integral T>
std::optional<T> ParseInteger(std::string_view text, int base = 10) {
  if (text.empty()) return std::nullopt;
  T value{};
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value, base);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// ParseInteger, and also nullopt when the value is outside [min, max].
template <std::integral T>
std::optional<T> ParseIntegerIn(std::string_view text, T min, T max) {
  std::optional<T> value = ParseInteger<T>(text);
  if (!value || *value < min || *value > max) return std::nullopt;
  return value;
}

// All of `text` as a decimal number ("1.5", "2", "1e3"), or nullopt.
inline std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace shardctl::common
