#include "launcher/bench_cluster.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <charconv>
#include <memory>

namespace shardctl::launcher {

using common::Error;
using common::Result;

int SlotTable::NodeIndex(const Endpoint& node) {
  auto found = std::find(nodes_.begin(), nodes_.end(), node);
  if (found != nodes_.end()) return static_cast<int>(found - nodes_.begin());
  nodes_.push_back(node);
  return static_cast<int>(nodes_.size()) - 1;
}

void SlotTable::Assign(int first, int last, const Endpoint& node) {
  auto index = static_cast<int16_t>(NodeIndex(node));
  first = std::max(first, 0);
  last = std::min(last, common::kSlotCount - 1);
  for (int slot = first; slot <= last; ++slot) owner_[static_cast<size_t>(slot)] = index;
}

int SlotTable::Unassigned() const {
  return static_cast<int>(std::count(owner_.begin(), owner_.end(), kNoNode));
}

std::optional<Redirect> ParseRedirect(std::string_view error, const std::string& default_host) {
  Redirect redirect;
  if (error.rfind("MOVED ", 0) == 0) {
    error.remove_prefix(6);
  } else if (error.rfind("ASK ", 0) == 0) {
    redirect.ask = true;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  size_t space = error.find(' ');
  size_t colon = error.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return std::nullopt;
  }
  auto number = [](std::string_view text, int& out) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
  };
  std::string_view port = error.substr(colon + 1);
  if (size_t extra = port.find_first_of(" \r\n"); extra != std::string_view::npos) {
    port = port.substr(0, extra);
  }
  if (!number(error.substr(0, space), redirect.slot) || !number(port, redirect.target.port) ||
      redirect.slot < 0 || redirect.slot >= common::kSlotCount) {
    return std::nullopt;
  }
  redirect.target.host = std::string(error.substr(space + 1, colon - space - 1));
  if (redirect.target.host.empty()) redirect.target.host = default_host;
  return redirect;
}

namespace {

struct FreeContext {
  void operator()(redisContext* context) const { redisFree(context); }
};
struct FreeReply {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};

// One CLUSTER SLOTS entry: [first, last, [host, port, id...], replicas...].
common::Status AssignEntry(const redisReply& entry, const std::string& seed_host,
                           SlotTable& table) {
  if (entry.type != REDIS_REPLY_ARRAY || entry.elements < 3 ||
      entry.element[0]->type != REDIS_REPLY_INTEGER ||
      entry.element[1]->type != REDIS_REPLY_INTEGER ||
      entry.element[2]->type != REDIS_REPLY_ARRAY || entry.element[2]->elements < 2 ||
      entry.element[2]->element[0]->type != REDIS_REPLY_STRING ||
      entry.element[2]->element[1]->type != REDIS_REPLY_INTEGER) {
    return Error("CLUSTER SLOTS: unexpected reply shape");
  }
  const redisReply& primary = *entry.element[2];
  Endpoint node{std::string(primary.element[0]->str, primary.element[0]->len),
                static_cast<int>(primary.element[1]->integer)};
  if (node.host.empty() || node.host == "?") node.host = seed_host;
  table.Assign(static_cast<int>(entry.element[0]->integer),
               static_cast<int>(entry.element[1]->integer), node);
  return common::Ok();
}

}  // namespace

Result<SlotTable> FetchSlotTable(const std::string& host, int port,
                                 std::chrono::milliseconds timeout) {
  std::string where = host + ":" + std::to_string(port);
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  std::unique_ptr<redisContext, FreeContext> context(
      redisConnectWithTimeout(host.c_str(), port, tv));
  if (!context || context->err) {
    return Error("cannot connect to " + where + ": " +
                 (context ? context->errstr : "out of memory") + " (is the server running?)");
  }
  redisSetTimeout(context.get(), tv);
  std::unique_ptr<redisReply, FreeReply> reply(
      static_cast<redisReply*>(redisCommand(context.get(), "CLUSTER SLOTS")));
  if (!reply) return Error("CLUSTER SLOTS on " + where + ": " + context->errstr);
  if (reply->type == REDIS_REPLY_ERROR) {
    return Error(where + " is not a cluster node (CLUSTER SLOTS: " +
                 std::string(reply->str, reply->len) + "; use --host/--port for a plain server)");
  }
  if (reply->type != REDIS_REPLY_ARRAY)
    return Error("CLUSTER SLOTS on " + where + ": not an array");
  SlotTable table;
  for (size_t i = 0; i < reply->elements; ++i) {
    if (auto status = AssignEntry(*reply->element[i], host, table); !status.ok()) {
      return status.error().Context(where);
    }
  }
  if (int missing = table.Unassigned(); missing > 0) {
    return Error("the cluster at " + where + " serves no node for " + std::to_string(missing) +
                 " slot(s) (wait until CLUSTER INFO says cluster_state:ok)");
  }
  return table;
}

}  // namespace shardctl::launcher
