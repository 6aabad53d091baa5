// MULTI / EXEC / DISCARD through the proxy.
//
// The proxy queues the transaction itself (answering +QUEUED) and checks that every command
// hashes to one slot, as Redis Cluster requires. EXEC sends "MULTI, the commands, EXEC" as one
// request to the slot's primary. Because a worker appends a request's bytes to the shared shard
// connection in one piece, no other client's command can land inside the transaction, so no
// pinned connection is needed. The replies before EXEC's (+OK, +QUEUED...) are dropped; if one
// of them was a MOVED or CLUSTERDOWN, the aborted transaction is sent again (worker.cc).
// Under WATCH the batch goes over the connection holding the watch instead (session_pinned.cc),
// and is never sent again: a moved slot means the watch is lost, so EXEC answers null.
#include "proxy/frames.h"
#include "proxy/server.h"
#include "proxy/session.h"
#include "proxy/worker.h"

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
  return common::Error("ERR command '" + std::string(args[0]) +
                       "' cannot be queued in a transaction through shardproxy");
}

}  // namespace

bool Session::HandleTransaction(std::string_view frame, std::span<const std::string_view> args,
                                const CommandInfo& info) {
  const std::string_view name = info.name;
  if (!transaction_) {
    if (name == "WATCH") {
      HandleWatch(frame, args, info);
    } else if (name == "UNWATCH") {
      HandleUnwatch(frame);
    } else if (name == "MULTI") {
      transaction_.emplace();
      Reply("+OK\r\n");
    } else if (name == "EXEC" || name == "DISCARD") {
      ReplyError("ERR " + std::string(name) + " without MULTI");
    } else {
      return false;
    }
    return true;
  }
  if (name == "QUIT") return false;
  if (name == "RESET") {
    transaction_.reset();
    return false;
  }
  if (name == "MULTI") {
    ReplyError("ERR MULTI calls can not be nested");
  } else if (name == "WATCH") {
    ReplyError("ERR WATCH inside MULTI is not allowed");  // the transaction goes on
  } else if (name == "DISCARD") {
    transaction_.reset();
    EndWatch();  // DISCARD unwatches, as in Redis
    Reply("+OK\r\n");
  } else if (name == "EXEC") {
    ExecTransaction();
  } else {
    QueueInTransaction(frame, args, info);
  }
  return true;
}

void Session::QueueInTransaction(std::string_view frame, std::span<const std::string_view> args,
                                 const CommandInfo& info) {
  Transaction& transaction = *transaction_;
  auto slot = QueuedSlot(info, args);
  if (slot && *slot >= 0 &&
      ((transaction.slot >= 0 && *slot != transaction.slot) || (watch_ && *slot != watch_->slot))) {
    slot = common::Error("CROSSSLOT Keys in request don't hash to the same slot");
  }
  if (slot &&
      transaction.queued.size() + frame.size() > worker_.server().options().max_client_buffer) {
    slot = common::Error("ERR transaction too big for shardproxy (see --max-client-buffer)");
  }
  if (!slot) {
    transaction.failed = true;  // Redis, too, aborts EXEC after an error while queueing
    return ReplyError(slot.error().message());
  }
  if (*slot >= 0) transaction.slot = *slot;
  transaction.queued += frame;
  ++transaction.count;
  Reply("+QUEUED\r\n");
}

void Session::ExecTransaction() {
  Transaction transaction = std::move(*transaction_);
  transaction_.reset();
  if (transaction.failed) {
    EndWatch();  // EXEC unwatches even when it aborts
    return ReplyError("EXECABORT Transaction discarded because of previous errors.");
  }
  if (watch_ && watch_->broken) {
    EndWatch();
    return Reply(NullArray(protocol_));  // aborted, as for a changed key
  }
  if (transaction.count == 0 && !watch_) return Reply("*0\r\n");
  PendingReply& pending = pending_.emplace_back();
  // Under WATCH: the watched slot, over the watch's connection (NewSubRequest() marks it).
  SubRequest* request = NewSubRequest(pending, watch_ ? watch_->slot : transaction.slot);
  request->request.reserve(kMulti.size() + transaction.queued.size() + kExec.size());
  request->request.append(kMulti).append(transaction.queued).append(kExec);
  request->skip_replies = transaction.count + 1;
  request->watched_exec = request->watched;
  worker_.Route(request);
  watch_.reset();  // Redis unwatches at EXEC; the connection is pooled once EXEC's reply is in
}

}  // namespace shardctl::proxy
