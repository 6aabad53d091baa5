#include "common/request_text.h"

#include <climits>

#include "common/numbers.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

// The line after a header byte at `pos`: its text and the position after its "\r\n".
std::optional<std::pair<std::string_view, size_t>> HeaderLine(std::string_view bytes, size_t pos) {
  const size_t end = bytes.find("\r\n", pos);
  if (end == std::string_view::npos) return std::nullopt;
  return std::make_pair(bytes.substr(pos + 1, end - pos - 1), end + 2);
}

RequestProblem Refuse(std::string what) { return {0, "Protocol error: " + std::move(what)}; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char Escaped(char c) {
  switch (c) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'b':
      return '\b';
    case 'a':
      return '\a';
    default:
      return c;
  }
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0'; }

// One quoted part starting after its opening quote at `pos`; `pos` ends after the closing one.
bool ReadQuoted(std::string_view line, size_t& pos, char quote, std::string& out) {
  while (pos < line.size()) {
    const char c = line[pos];
    if (c == quote) {
      ++pos;
      return pos == line.size() || IsSpace(line[pos]);  // "a"b is unbalanced, as in Redis
    }
    if (quote == '"' && c == '\\' && pos + 3 < line.size() && line[pos + 1] == 'x' &&
        HexValue(line[pos + 2]) >= 0 && HexValue(line[pos + 3]) >= 0) {
      out += static_cast<char>(HexValue(line[pos + 2]) * 16 + HexValue(line[pos + 3]));
      pos += 4;
    } else if (c == '\\' && pos + 1 < line.size() && (quote == '"' || line[pos + 1] == '\'')) {
      out += quote == '"' ? Escaped(line[pos + 1]) : '\'';
      pos += 2;
    } else {
      out += c;
      ++pos;
    }
  }
  return false;  // the line ended inside the quotes
}

}  // namespace

std::optional<RequestProblem> ExamineBadRequest(std::string_view bytes, int64_t max_bulk_length) {
  if (bytes.empty() || bytes[0] != '*') return std::nullopt;
  auto header = HeaderLine(bytes, 0);
  if (!header) return std::nullopt;
  const std::optional<int64_t> count = ParseInteger<int64_t>(header->first);
  if (!count || *count > INT_MAX) return Refuse("invalid multibulk length");
  if (*count <= 0) return RequestProblem{header->second, ""};
  size_t pos = header->second;
  for (int64_t i = 0; i < *count && pos < bytes.size(); ++i) {
    if (bytes[pos] != '$') return Refuse("expected '$', got '" + PrintableByte(bytes[pos]) + "'");
    auto bulk = HeaderLine(bytes, pos);
    if (!bulk) return std::nullopt;
    const std::optional<int64_t> length = ParseInteger<int64_t>(bulk->first);
    if (!length || *length < 0 || *length > max_bulk_length) return Refuse("invalid bulk length");
    pos = bulk->second + static_cast<size_t>(*length) + 2;
  }
  return std::nullopt;
}

Result<std::vector<std::string>> SplitQuotedArgs(std::string_view line) {
  std::vector<std::string> args;
  size_t pos = 0;
  while (true) {
    while (pos < line.size() && IsSpace(line[pos])) ++pos;
    if (pos == line.size()) return args;
    std::string arg;
    while (pos < line.size() && !IsSpace(line[pos])) {
      const char c = line[pos++];
      if (c != '"' && c != '\'') {
        arg += c;
      } else if (!ReadQuoted(line, pos, c, arg)) {
        return Error("Protocol error: unbalanced quotes in request");
      }
    }
    args.push_back(std::move(arg));
  }
}

}  // namespace shardctl::common
