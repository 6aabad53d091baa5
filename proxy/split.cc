#include "proxy/split.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "common/resp.h"
#include "common/slots.h"

namespace shardctl::proxy {
namespace {

using common::Error;
using common::Result;

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

// The element frames of an array reply, as views into `frame`.
Result<std::vector<std::string_view>> ArrayElements(std::string_view frame) {
  const size_t header_end = frame.find("\r\n");
  if (frame.empty() || frame[0] != '*' || header_end == std::string_view::npos) {
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

std::string MergeArrays(const SplitRequest& split, std::span<const std::string_view> replies) {
  std::vector<std::string_view> by_key(split.key_count);
  for (size_t p = 0; p < split.parts.size(); ++p) {
    auto elements = ArrayElements(replies[p]);
    if (!elements) return MergeError(elements.error().message());
    const std::vector<size_t>& order = split.parts[p].key_order;
    if (elements->size() != order.size()) {
      return MergeError("a shard answered " + std::to_string(elements->size()) + " values for " +
                        std::to_string(order.size()) + " keys");
    }
    for (size_t i = 0; i < order.size(); ++i) by_key[order[i]] = (*elements)[i];
  }
  std::string out;
  common::AppendArrayHeader(out, split.key_count);
  for (std::string_view element : by_key) out.append(element);
  return out;
}

}  // namespace

Result<SplitRequest> SplitBySlot(const CommandInfo& info, std::span<const std::string_view> args) {
  auto keys = ResolveKeys(info, args);
  if (!keys) return keys.error();
  SplitRequest split;
  split.merge = info.merge;
  split.key_count = keys->count();
  // (slot, key index), stably sorted by slot: keys of one slot keep their request order.
  std::vector<std::pair<int, size_t>> slots;
  slots.reserve(split.key_count);
  for (size_t k = 0; k < split.key_count; ++k) {
    slots.emplace_back(common::KeySlot(args[keys->first + k * keys->step]), k);
  }
  std::stable_sort(slots.begin(), slots.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string_view> sub_args;
  for (size_t i = 0; i < slots.size();) {
    SubCommand part;
    part.slot = slots[i].first;
    sub_args.assign({args[0]});
    for (; i < slots.size() && slots[i].first == part.slot; ++i) {
      const size_t position = keys->first + slots[i].second * keys->step;
      // The key and, for MSET, its value (the arguments up to the next key).
      for (size_t a = 0; a < keys->step; ++a) sub_args.push_back(args[position + a]);
      part.key_order.push_back(slots[i].second);
    }
    common::AppendCommand(part.request, sub_args);
    split.parts.push_back(std::move(part));
  }
  return split;
}

std::string MergeReplies(const SplitRequest& split, std::span<const std::string_view> replies) {
  if (replies.size() != split.parts.size()) {
    return MergeError("internal error: " + std::to_string(replies.size()) + " replies for " +
                      std::to_string(split.parts.size()) + " sub-commands");
  }
  for (std::string_view reply : replies) {
    if (!reply.empty() && reply[0] == '-') return std::string(reply);
  }
  std::string out;
  switch (split.merge) {
    case MergeKind::kArrayByKey:
      return MergeArrays(split, replies);
    case MergeKind::kSumIntegers: {
      int64_t sum = 0;
      for (std::string_view reply : replies) {
        int64_t value = 0;
        if (!ParseIntegerReply(reply, value)) return MergeError("expected an integer reply");
        sum += value;
      }
      common::AppendInteger(out, sum);
      return out;
    }
    case MergeKind::kAllOk:
      for (std::string_view reply : replies) {
        if (reply != "+OK\r\n") return MergeError("expected +OK from every shard");
      }
      common::AppendSimple(out, "OK");
      return out;
    case MergeKind::kNone:
      break;
  }
  return MergeError("internal error: not a split command");
}

}  // namespace shardctl::proxy
