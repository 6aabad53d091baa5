// MULTI / EXEC / DISCARD through the proxy: the session's side of Transaction (transaction.h).
// Under WATCH the batch goes over the connection holding the watch (PinnedLinks) and is never
// sent again: a moved slot means the watch is lost, so EXEC answers null. Without WATCH an
// EXECABORT caused by a moved slot is sent again to the new owner (worker.cc).
// A queued write is first shown to its slot's primary as "MULTI <command> DISCARD" (a queue
// probe): the client gets the shard's own queue-time answer (+QUEUED, or -OOM when the shard is
// out of memory), and EXEC or DISCARD waits for those answers, as Redis decides at queue time.
#include <utility>

#include "proxy/merge/frames.h"
#include "proxy/merge/redirect.h"
#include "proxy/merge/reply_assembly.h"
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
      ++transactions_;
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
  if ((name == "MULTI" || name == "WATCH") && NestingAbortsTransaction()) {
    // Valkey 8 and later reject them as commands not allowed in a transaction (9 names the
    // command), and EXEC then aborts.
    transaction_->MarkFailed();
    ReplyError(services_.ServerEngine().major() >= 9
                   ? "ERR Command '" + LowerCase(name) + "' not allowed inside a transaction"
                   : std::string("ERR Command not allowed inside a transaction"));
  } else if (name == "MULTI") {
    ReplyError("ERR MULTI calls can not be nested");  // Redis: the transaction goes on
  } else if (name == "WATCH") {
    ReplyError("ERR WATCH inside MULTI is not allowed");
  } else if (name == "DISCARD" || name == "EXEC") {
    if (transaction_->probes() == 0) {
      FinishTransaction(name == "EXEC");
    } else {
      waiting_finish_ = name == "EXEC" ? Finish::kExec : Finish::kDiscard;
    }
  } else {
    const int watch_slot = pinned_.watch() ? pinned_.watch()->slot : -1;
    auto queued = transaction_->Queue(frame, info, args, watch_slot, options_.max_client_buffer);
    if (!queued) {
      ReplyError(queued.error().message());
    } else if (info.kind != RouteKind::kLocal && info.kind != RouteKind::kFanOut &&
               !info.read_only && transaction_->slot() >= 0 && !pinned_.watch()) {
      // A write may be refused at queue time (OOM): ask the shard. Not under WATCH: the probe's
      // DISCARD would end the watch on its connection.
      SendQueueProbe(frame, transaction_->slot());
    } else {
      Reply("+QUEUED\r\n");
    }
  }
  return true;
}

bool Session::NestingAbortsTransaction() const {
  const EngineIdentity engine = services_.ServerEngine();
  return engine.valkey() && engine.major() >= 8;
}

// The transaction at its home primary (the keys' slot, else the first primary) and its
// server-wide commands for every shard on each other primary (transaction_fanout.cc).
void Session::ExecServerWide(const Transaction& transaction) {
  std::optional<PinnedLinks::Watch>& watch = pinned_.watch();
  const int slot = watch ? watch->slot : transaction.slot();
  const SlotMap& map = router_.CurrentMap();
  const auto& primaries = map.primaries();
  if (primaries.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  const int owner = slot >= 0 ? map.PrimaryFor(slot) : SlotMap::kNoNode;
  const size_t home = owner == SlotMap::kNoNode ? 0 : static_cast<size_t>(owner);
  const size_t others = transaction.server_wide_everywhere() > 0 ? primaries.size() - 1 : 0;
  PendingReply& pending = replies_.Push();
  pending.assembly = TransactionFanOutAssembly(transaction.server_wide(), others + 1);
  std::vector<SubRequest*> parts;
  SubRequest* request = NewSubRequest(pending, slot);
  request->part = 0;
  request->request = transaction.Batch();
  request->Extras().skip_replies = transaction.replies_before_exec();
  request->mode.watched_exec = request->mode.watched;
  if (slot < 0) {
    request->host = primaries[home].host;
    request->port = primaries[home].port;
  }
  parts.push_back(request);
  for (size_t i = 0; others > 0 && i < primaries.size(); ++i) {
    if (i == home) continue;
    SubRequest* part = NewSubRequest(pending, -1);
    part->part = static_cast<int>(parts.size());
    part->request = transaction.server_wide_batch();
    part->Extras().skip_replies = transaction.server_wide_everywhere() + 1;
    part->host = primaries[i].host;
    part->port = primaries[i].port;
    parts.push_back(part);
  }
  for (SubRequest* part : parts) router_.Route(part);
  pinned_.watch().reset();
}

void Session::FinishTransaction(bool exec) {
  if (exec) {
    ExecTransaction();
  } else {
    transaction_.reset();
    pinned_.EndWatch();  // DISCARD unwatches, as in Redis
    Reply("+OK\r\n");
  }
  // CLIENT CACHING covered the transaction (an EXEC held for its probes ends here, after
  // HandleCommand() looked): the command after it is on its own.
  tracking_.DisarmCaching();
}

void Session::SendQueueProbe(std::string_view frame, int slot) {
  static constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
  static constexpr std::string_view kDiscard = "*1\r\n$7\r\nDISCARD\r\n";
  PendingReply& pending = replies_.Push();
  SubRequest* request = NewSubRequest(pending, slot);
  request->request.append(kMulti).append(frame).append(kDiscard);
  request->mode.queue_probe = true;
  RequestExtras& extras = request->Extras();
  extras.skip_replies = 2;  // MULTI's +OK and the command's own: its error lands in `hint`
  extras.probe_of = transactions_;
  transaction_->ProbeSent();
  router_.Route(request);
}

void Session::DeliverProbe(const SubRequest& request) {
  const std::string_view hint = request.extras ? std::string_view(request.extras->hint) : "";
  // A redirect says nothing about the command itself: EXEC goes to the slot's owner anyway.
  const bool refused = !hint.empty() && ClassifyReply(hint).action == ReplyAction::kDeliver;
  const bool current = transaction_ && request.extras && request.extras->probe_of == transactions_;
  if (current) transaction_->ProbeAnswered(refused);
  if (closed_ || replies_.closing()) return;
  Fill(*request.pending, refused ? hint : std::string_view("+QUEUED\r\n"));
  if (current && transaction_->probes() == 0 && waiting_finish_ != Finish::kNone) {
    FinishTransaction(std::exchange(waiting_finish_, Finish::kNone) == Finish::kExec);
  }
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
  if (!transaction.server_wide().empty()) return ExecServerWide(transaction);
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
