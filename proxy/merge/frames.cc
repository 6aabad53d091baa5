#include "proxy/merge/frames.h"

#include <algorithm>

#include "common/numbers.h"
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
  std::optional<int64_t> parsed = common::ParseInteger<int64_t>(digits);
  if (parsed) value = *parsed;
  return parsed.has_value();
}

Result<std::vector<std::string_view>> ArrayElements(std::string_view frame, bool allow_set) {
  const size_t header_end = frame.find("\r\n");
  if (frame.empty() || (frame[0] != '*' && !(allow_set && frame[0] == '~')) ||
      header_end == std::string_view::npos) {
    return Error("expected an array reply");
  }
  std::optional<size_t> count = common::ParseInteger<size_t>(frame.substr(1, header_end - 1));
  if (!count) return Error("bad array header");
  const std::string_view body = frame.substr(header_end + 2);
  common::RespScanner scanner;
  scanner.Feed(body);
  std::vector<std::string_view> elements;
  elements.reserve(std::min(*count, body.size() / 3));
  size_t consumed = 0;
  for (size_t i = 0; i < *count; ++i) {
    const common::ScanResult element = scanner.Next();
    if (element.status != common::ScanStatus::kFrame) return Error("truncated array reply");
    elements.push_back(body.substr(element.begin, element.end - element.begin));
    consumed = element.end;
  }
  if (consumed != body.size()) return Error("bytes after the array reply");
  return elements;
}

}  // namespace shardctl::proxy
