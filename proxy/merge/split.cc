#include "proxy/merge/split.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/merge/frames.h"

namespace shardctl::proxy {
namespace {

using common::Error;
using common::Result;

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
