// Small text helpers every reader of config files, sysfs and /proc needs.
#pragma once

#include <string>
#include <string_view>

namespace shardctl::common {

// True when `text` is `upper` (written in capitals) in any ASCII case: command names and
// subcommands, which Redis matches case-insensitively.
inline bool MatchesUpperCase(std::string_view text, std::string_view upper) {
  if (text.size() != upper.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c) != upper[i]) return false;
  }
  return true;
}

// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
inline std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

// `word` as one shell word, for the commands our hints print: unchanged when it holds only
// characters no shell treats specially, else in single quotes ('it'\''s').
inline std::string ShellQuote(std::string_view word) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string_view::npos) {
    return std::string(word);
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// One byte as an error message may quote it: itself when printable ASCII, else "\x0d".
inline std::string PrintableByte(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  static constexpr char kHex[] = "0123456789abcdef";
  const auto byte = static_cast<unsigned char>(c);
  return std::string("\\x") + kHex[byte >> 4] + kHex[byte & 0xf];
}

}  // namespace shardctl::common
