// Scripts that run long. A keyless EVAL or FCALL goes over the client's own connection to one
// shard (a script may loop until SCRIPT KILL; the shard's shared connection must not wait behind
// it). While it runs, that shard answers every other client -BUSY; the proxy answers PING itself,
// so PING is the one command that would hide it: with a script running, PING is asked of the
// shards instead, and the first error (BUSY) is the client's reply, as from one Redis.
#include "common/resp.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/services/stats.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {

void Session::ForwardScript(std::string_view frame) {
  PendingReply& pending = replies_.Push();
  SubRequest* request = NewSubRequest(pending, -1, /*pinned=*/true);
  request->request.assign(frame);
  request->mode.may_block = true;
  request->mode.script = true;
  router_.Route(request);
}

bool Session::PingMeetsScript(std::span<const std::string_view> args) {
  if (services_.stats().running_scripts.load(std::memory_order_relaxed) <= 0) return false;
  // This client's own earlier commands (its own script) come first: Redis answers its PING
  // after them, when its script is over.
  if (inflight_ > 0) return false;
  const size_t shards = router_.CurrentMap().primaries().size();
  if (shards == 0) return false;
  std::string request;
  common::AppendCommand(request, args);
  PendingReply& pending = replies_.Push();
  pending.assembly = FanOutAssembly(FanOutMerge::kFirst, shards, id_, -1);
  return ForwardToEveryPrimary(pending, request);
}

}  // namespace shardctl::proxy
