// libFuzzer target for the proxy's request path, everything a client's bytes reach before a
// socket: framing (RespScanner), ParseCommandArgs, the command table (LookupCommand, ResolveKeys,
// RequestSlot), SplitBySlot, PlanFanOut, SCAN cursors, and MergeReplies fed with replies derived
// from the input; plus ClassifyReply on every frame.
//
// Checks: no crash or out-of-bounds access (ASan/UBSan); a split's parts cover every key exactly
// once, each part's keys share its slot, and each part is itself a valid request of the same
// command; merging replies of the right shape gives one complete frame.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/commands/command_table.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/redirect.h"
#include "proxy/merge/split.h"

namespace {

using namespace shardctl;

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "proxy_request_fuzz: %s\n", what);
    std::abort();
  }
}

// One reply per part, shaped as the shard would answer that part.
std::string ReplyFor(const proxy::SplitRequest& split, const proxy::SubCommand& part) {
  std::string reply;
  switch (split.merge) {
    case proxy::MergeKind::kArrayByKey:
      common::AppendArrayHeader(reply, part.key_order.size());
      for (size_t key : part.key_order) common::AppendBulk(reply, std::to_string(key));
      break;
    case proxy::MergeKind::kSumIntegers:
      common::AppendInteger(reply, static_cast<int64_t>(part.key_order.size()));
      break;
    default:
      common::AppendSimple(reply, "OK");
  }
  return reply;
}

void CheckSplit(const proxy::CommandInfo& info, const proxy::SplitRequest& split) {
  std::vector<int> seen(split.key_count, 0);
  std::vector<std::string> replies;
  for (const proxy::SubCommand& part : split.parts) {
    auto args = common::ParseCommandArgs(part.request);
    Check(args.ok(), "a part is not a valid request");
    auto keys = proxy::ResolveKeys(info, *args);
    Check(keys.ok() && keys->count() == part.key_order.size(), "a part's keys do not resolve");
    for (size_t i = keys->first; i <= keys->last; i += keys->step) {
      Check(common::KeySlot((*args)[i]) == part.slot, "a part mixes slots");
    }
    for (size_t key : part.key_order) {
      Check(key < seen.size(), "key index out of range");
      ++seen[key];
    }
    replies.push_back(ReplyFor(split, part));
  }
  for (int count : seen) Check(count == 1, "a key is missing or repeated");
  const std::vector<std::string_view> views(replies.begin(), replies.end());
  const std::string merged = proxy::MergeReplies(split, views);
  common::RespScanner scanner;
  scanner.Feed(merged);
  const common::ScanResult frame = scanner.Next();
  Check(frame.status == common::ScanStatus::kFrame && frame.end == merged.size(),
        "the merged reply is not one frame");
  Check(merged[0] != '-', "well-formed parts merged into an error");
}

void Route(std::string_view frame) {
  (void)proxy::ClassifyReply(frame);
  auto args = common::ParseCommandArgs(frame);
  if (!args.ok() || args->empty()) return;
  const proxy::CommandInfo& info = proxy::LookupCommand((*args)[0]);
  switch (info.kind) {
    case proxy::RouteKind::kSingleKey:
    case proxy::RouteKind::kOneSlot:
    case proxy::RouteKind::kBlocking: {
      auto slot = proxy::RequestSlot(info, *args);
      if (slot.ok()) Check(*slot >= -1 && *slot < common::kSlotCount, "slot out of range");
      break;
    }
    case proxy::RouteKind::kSplitBySlot: {
      auto split = proxy::SplitBySlot(info, *args);
      if (split.ok()) CheckSplit(info, *split);
      break;
    }
    case proxy::RouteKind::kUnsupported:
      Check(!info.UnsupportedError((*args)[0]).empty(), "empty unsupported error");
      break;
    case proxy::RouteKind::kFanOut:
      (void)proxy::PlanFanOut(*args);
      break;
    case proxy::RouteKind::kScan:
      if (args->size() >= 2) {
        auto position = proxy::DecodeScanCursor((*args)[1], 3);
        if (position.ok()) {
          Check(position->shard < 3, "cursor names a shard that does not exist");
          auto again = proxy::DecodeScanCursor(proxy::EncodeScanCursor(*position), 3);
          Check(again.ok() && *again == *position, "cursor does not round-trip");
        }
      }
      break;
    case proxy::RouteKind::kLocal:
    case proxy::RouteKind::kPubSub:
      (void)proxy::RequestSlot(info, *args);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  common::RespLimits limits;
  limits.max_depth = 8;
  limits.max_bulk_length = 1 << 16;
  limits.max_aggregate_count = 1 << 12;
  limits.max_line_length = 256;
  common::RespScanner scanner(limits);
  scanner.Feed(std::string_view(reinterpret_cast<const char*>(data), size));
  for (int frames = 0; frames < 64; ++frames) {
    const common::ScanResult result = scanner.Next();
    if (result.status != common::ScanStatus::kFrame) break;
    Route(scanner.FrameBytes(result));
  }
  return 0;
}
