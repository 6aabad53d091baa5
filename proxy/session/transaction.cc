#include "proxy/session/transaction.h"

#include <optional>

#include "proxy/merge/fanout.h"

namespace shardctl::proxy {
namespace {

constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kExec = "*1\r\n$4\r\nEXEC\r\n";

// The slot a queued command needs (-1: none), or the error that makes EXEC abort.
common::Result<int> QueuedSlot(const CommandInfo& info, std::span<const std::string_view> args) {
  switch (info.kind) {
    case RouteKind::kSingleKey:
    case RouteKind::kOneSlot:
    case RouteKind::kSplitBySlot:
    case RouteKind::kBlocking:  // inside MULTI, Redis runs them without blocking
      return RequestSlot(info, args);
    case RouteKind::kLocal:
      if (info.name == "PING" || info.name == "ECHO" || info.name == "UNWATCH") return -1;
      break;
    default:
      break;
  }
  // Redis' "no-multi" commands of this kind: refused as one Redis refuses them.
  if (info.name == "SAVE" || LowerCase(args[0]) == "shutdown") {
    return common::Error("ERR Command not allowed inside a transaction");
  }
  return common::Error("ERR command '" + std::string(args[0]) +
                       "' cannot be queued in a transaction through shardproxy");
}

}  // namespace

common::Status Transaction::Queue(std::string_view frame, const CommandInfo& info,
                                  std::span<const std::string_view> args, int watch_slot,
                                  size_t max_bytes) {
  std::optional<FanOutPlan> server_wide;
  common::Result<int> slot = -1;
  if (info.kind == RouteKind::kFanOut && info.name != "SAVE") {
    auto plan = PlanFanOut(args);
    if (plan) server_wide = *plan;
    if (!plan) slot = plan.error();
  } else {
    slot = QueuedSlot(info, args);
  }
  if (slot && *slot >= 0 &&
      ((slot_ >= 0 && *slot != slot_) || (watch_slot >= 0 && *slot != watch_slot))) {
    slot = common::Error("CROSSSLOT Keys in request don't hash to the same slot");
  }
  if (slot && queued_.size() + frame.size() > max_bytes) {
    slot = common::Error("ERR transaction too big for shardproxy (see --max-client-buffer)");
  }
  if (!slot) {
    failed_ = true;  // Redis, too, aborts EXEC after an error while queueing
    return slot.error();
  }
  if (*slot >= 0) slot_ = *slot;
  if (server_wide) {
    server_wide_.push_back({count_, *server_wide});
    if (server_wide->every_shard) {
      everywhere_ += frame;
      ++everywhere_count_;
    }
  }
  queued_ += frame;
  ++count_;
  return common::Ok();
}

std::string Transaction::server_wide_batch() const {
  return std::string(kMulti) + everywhere_ + std::string(kExec);
}

std::string Transaction::Batch() const {
  std::string batch;
  batch.reserve(kMulti.size() + queued_.size() + kExec.size());
  batch.append(kMulti).append(queued_).append(kExec);
  return batch;
}

}  // namespace shardctl::proxy
