#include "proxy/frames.h"

#include <algorithm>
#include <charconv>

#include "common/resp.h"

namespace shardctl::proxy {

using common::Error;
using common::Result;

std::string_view NullArray(int protocol) { return protocol >= 3 ? "_\r\n" : "*-1\r\n"; }

std::string MergeError(std::string_view what) {
  std::string out;
  common::AppendError(out, "ERR shardproxy: " + std::string(what));
  return out;
}

bool ParseIntegerReply(std::string_view frame, int64_t& value) {
  if (frame.size() < 4 || frame[0] != ':' || !frame.ends_with("\r\n")) return false;
  const std::string_view digits = frame.substr(1, frame.size() - 3);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc() && end == digits.data() + digits.size();
}

Result<std::vector<std::string_view>> ArrayElements(std::string_view frame, bool allow_set) {
  const size_t header_end = frame.find("\r\n");
  if (frame.empty() || (frame[0] != '*' && !(allow_set && frame[0] == '~')) ||
      header_end == std::string_view::npos) {
    return Error("expected an array reply");
  }
  size_t count = 0;
  auto [end, error] = std::from_chars(frame.data() + 1, frame.data() + header_end, count);
  if (error != std::errc() || end != frame.data() + header_end) return Error("bad array header");
  const std::string_view body = frame.substr(header_end + 2);
  common::RespScanner scanner;
  scanner.Feed(body);
  std::vector<std::string_view> elements;
  elements.reserve(std::min(count, body.size() / 3));
  size_t consumed = 0;
  for (size_t i = 0; i < count; ++i) {
    const common::ScanResult element = scanner.Next();
    if (element.status != common::ScanStatus::kFrame) return Error("truncated array reply");
    elements.push_back(body.substr(element.begin, element.end - element.begin));
    consumed = element.end;
  }
  if (consumed != body.size()) return Error("bytes after the array reply");
  return elements;
}

}  // namespace shardctl::proxy
