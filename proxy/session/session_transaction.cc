// MULTI / EXEC / DISCARD through the proxy: the session's side of Transaction (transaction.h).
// Under WATCH the batch goes over the connection holding the watch (PinnedLinks) and is never
// sent again: a moved slot means the watch is lost, so EXEC answers null. Without WATCH an
// EXECABORT caused by a moved slot is sent again to the new owner (worker.cc).
#include "proxy/merge/frames.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {

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
    pinned_.EndWatch();  // DISCARD unwatches, as in Redis
    Reply("+OK\r\n");
  } else if (name == "EXEC") {
    ExecTransaction();
  } else {
    const int watch_slot = pinned_.watch() ? pinned_.watch()->slot : -1;
    auto queued = transaction_->Queue(frame, info, args, watch_slot, options_.max_client_buffer);
    if (!queued) {
      ReplyError(queued.error().message());
    } else {
      Reply("+QUEUED\r\n");
    }
  }
  return true;
}

void Session::ExecTransaction() {
  Transaction transaction = std::move(*transaction_);
  transaction_.reset();
  std::optional<PinnedLinks::Watch>& watch = pinned_.watch();
  if (transaction.failed()) {
    pinned_.EndWatch();  // EXEC unwatches even when it aborts
    return ReplyError("EXECABORT Transaction discarded because of previous errors.");
  }
  if (watch && watch->broken) {
    pinned_.EndWatch();
    return Reply(NullArray(protocol_));  // aborted, as for a changed key
  }
  if (transaction.count() == 0 && !watch) return Reply("*0\r\n");
  PendingReply& pending = replies_.Push();
  // Under WATCH: the watched slot, over the watch's connection (NewSubRequest() marks it).
  SubRequest* request = NewSubRequest(pending, watch ? watch->slot : transaction.slot());
  request->request = transaction.Batch();
  request->Extras().skip_replies = transaction.replies_before_exec();
  request->mode.watched_exec = request->mode.watched;
  router_.Route(request);
  // Redis unwatches at EXEC; the connection goes back to the pool once EXEC's reply is in.
  pinned_.watch().reset();
}

}  // namespace shardctl::proxy
