// Whole-string number parsing: the one number parser of launcher, proxy and bench.
//
// "42" parses; "", " 42", "42x", "+42" and values that do not fit the type do not. Callers say
// what the number was for in their own error ("--shards: expected a number, got \"x\"").
#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
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

// All of `text` as an integer by Redis' string2ll rules, which RESP lengths and integers follow:
// an optional '-', no '+', no leading zeros, no "-0", fits in int64. Stricter than
// ParseInteger(), which accepts "007".
inline std::optional<int64_t> ParseRedisInteger(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  constexpr size_t kMaxDigits = 19;  // 19 digits cannot overflow 64 bits
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  if (text[0] == '0') {
    if (text.size() == 1 && !negative) return 0;
    return std::nullopt;
  }
  uint64_t magnitude = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (magnitude > limit) return std::nullopt;
  return negative ? static_cast<int64_t>(~magnitude + 1) : static_cast<int64_t>(magnitude);
}

// All of `text` as a finite decimal number ("1.5", "2", "1e3"), or nullopt. from_chars also
// reads "nan" and "inf", which no flag or setting means: every comparison with NaN is false, so
// a range check would let it through.
inline std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace shardctl::common
