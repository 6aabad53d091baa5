#include "proxy/session/session.h"

#include <utility>

#include "common/resp.h"
#include "common/text.h"
#include "proxy/merge/fanout.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/services/key_load.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {

Session::Session(RequestRouter& router, ProxyServices& services, ClientLink& link, uint64_t id,
                 int thread)
    : router_(router),
      services_(services),
      link_(link),
      id_(id),
      thread_(thread),
      options_(services.options()),
      metrics_(services.metrics(thread)),
      key_load_(router.key_load()),
      replies_(router.reply_pool()),
      pinned_(router, this),
      authenticated_(!services.auth().required()) {}

void Session::HandleCommand(std::string_view frame, std::span<const std::string_view> args) {
  if (done_reading()) return;
  const CommandInfo& info = LookupCommand(args[0]);
  // An HTTP request (a web page posting to localhost, as in cross-protocol attacks): closed
  // unanswered, nothing after it run, as Redis does; its lines would be run as commands. Only
  // names the table does not know are compared.
  if (info.kind == RouteKind::kUnsupported && info.unsupported_reason.empty() &&
      (common::MatchesUpperCase(args[0], "POST") || common::MatchesUpperCase(args[0], "HOST:")))
      [[unlikely]] {
    services_.stats().protocol_errors.fetch_add(1, std::memory_order_relaxed);
    return Reply("", /*close_after=*/true);
  }
  // CLIENT CACHING applies to the one command after it (a whole transaction), as in Redis.
  if (tracking_.caching_armed()) [[unlikely]]
    return HandleCachedCommand(frame, args, info);
  if (metrics_ == nullptr) return Dispatch(frame, args, info);
  // Timed until its reply is complete (Fill); a command answered here and now, at once.
  stamp_ = metrics_->OnCommand(info);
  Dispatch(frame, args, info);
  if (stamp_.started_ns != 0) metrics_->OnReply(stamp_);
  stamp_ = {};
}

void Session::HandleCachedCommand(std::string_view frame, std::span<const std::string_view> args,
                                  const CommandInfo& info) {
  if (metrics_ != nullptr) stamp_ = metrics_->OnCommand(info);
  Dispatch(frame, args, info);
  if (stamp_.started_ns != 0) metrics_->OnReply(stamp_);
  stamp_ = {};
  if (info.name != "CLIENT" && !transaction_) tracking_.DisarmCaching();
}

void Session::Dispatch(std::string_view frame, std::span<const std::string_view> args,
                       const CommandInfo& info) {
  ProxyStats& stats = services_.stats();
  stats.commands.fetch_add(1, std::memory_order_relaxed);
  if (!authenticated_ && info.name != "AUTH" && info.name != "HELLO" && info.name != "QUIT" &&
      info.name != "RESET") {
    return ReplyError("NOAUTH Authentication required.");
  }
  if (subscriptions_ && SubscribedModeRefuses(args, info)) return;
  if (HandleTransaction(frame, args, info)) return;
  switch (info.kind) {
    case RouteKind::kSingleKey:
    case RouteKind::kOneSlot: {
      auto keyed = RequestKeyedSlot(info, args);
      if (!keyed) return ReplyError(keyed.error().message());
      const int slot = keyed->slot;
      if (key_load_ != nullptr && slot >= 0) {
        key_load_->Count(slot, args[keyed->first_key], info.read_only);
      }
      // A keyless script may run long (until SCRIPT KILL): over this client's own connection,
      // so that the shard's shared one is not stuck behind it and others see -BUSY as on Redis.
      // Keyless: PUBLISH's reply counts the proxy's subscribers (session_pubsub.cc).
      if (slot < 0 && info.name == "PUBLISH") return ForwardPublish(frame, args);
      if (slot < 0 && info.keys.numkeys_at > 0) return ForwardScript(frame);
      const bool blocks = BlocksWithOption(info, args);
      return Forward(frame, slot, blocks, blocks, !blocks && ReadsFromReplica(info, slot));
    }
    case RouteKind::kSplitBySlot: {
      auto split = SplitBySlot(info, args);
      if (!split) return ReplyError(split.error().message());
      if (key_load_ != nullptr) CountSplit(*split, info, args);
      // One slot: the request goes out as the client wrote it.
      if (split->parts.size() == 1) {
        const int slot = split->parts[0].slot;
        return Forward(frame, slot, false, false, ReadsFromReplica(info, slot));
      }
      stats.split_commands.fetch_add(1, std::memory_order_relaxed);
      return ForwardSplit(std::move(split).value(), info);
    }
    case RouteKind::kLocal:
      stats.local_commands.fetch_add(1, std::memory_order_relaxed);
      return HandleLocal(args);
    case RouteKind::kBlocking: {
      if (info.name == "WAIT") return ForwardWait(frame, args);
      auto keyed = RequestKeyedSlot(info, args);
      if (!keyed) return ReplyError(keyed.error().message());
      if (key_load_ != nullptr && keyed->slot >= 0) {
        key_load_->Count(keyed->slot, args[keyed->first_key], info.read_only);
      }
      return Forward(frame, keyed->slot, /*pinned=*/true, /*may_block=*/true);
    }
    case RouteKind::kFanOut:
      return ForwardFanOut(frame, args);
    case RouteKind::kScan:
      return ForwardScan(args);
    case RouteKind::kPubSub:
      return HandlePubSub(args, info);
    case RouteKind::kUnsupported:
      return ReplyError(info.UnsupportedError(args[0]));
  }
}

// ---- requests ----

SubRequest* Session::NewSubRequest(PendingReply& pending, int slot, bool pinned) {
  SubRequest* request = router_.NewRequest();
  request->sink = this;
  request->pending = &pending;
  request->slot = slot;
  request->protocol = protocol_;
  request->mode.pinned = pinned;
  if (stamp_.started_ns != 0) pending.stamp = std::exchange(stamp_, {});
  if (slot >= 0) {
    request->mode.watched = pinned_.watched_slot(slot);
    if (request->mode.watched || pinned_.wait_mode()) request->mode.pinned = true;
    if (!request->mode.pinned) shared_keyed_ = true;
  }
  // A tracking client's commands all go over its own connections: the shards track what those
  // read, and push invalidations there in their place among the replies.
  if (tracking_.on()) [[unlikely]] {
    request->mode.pinned = true;
    if (slot >= 0) NoteTrackedRequest(*request);
  }
  ++inflight_;
  return request;
}

void Session::Forward(std::string_view frame, int slot, bool pinned, bool may_block,
                      bool read_only) {
  PendingReply& pending = replies_.Push();
  SubRequest* request = NewSubRequest(pending, slot, pinned);
  request->request.assign(frame);
  request->mode.may_block = may_block;
  // WATCH and WAIT keep reads on the client's own connections.
  request->mode.read_only = read_only && !request->mode.pinned;
  router_.Route(request);
}

bool Session::ReadsFromReplica(const CommandInfo& info, int slot) {
  const ReadFrom mode = options_.read_from;
  if (mode == ReadFrom::kPrimary || slot < 0) return false;
  constexpr uint64_t kReadYourWritesMs = 1000;
  constexpr size_t kMaxRememberedWrites = 1024;
  const uint64_t now = router_.NowMs();
  if (!info.read_only) {
    if (mode == ReadFrom::kPreferReplica) {
      if (recent_writes_.size() > kMaxRememberedWrites) {
        std::erase_if(recent_writes_,
                      [&](const auto& entry) { return now - entry.second >= kReadYourWritesMs; });
      }
      recent_writes_[slot] = now;
    }
    return false;
  }
  if (mode == ReadFrom::kPreferReplica) {
    auto written = recent_writes_.find(slot);
    if (written != recent_writes_.end() && now - written->second < kReadYourWritesMs) return false;
  }
  return true;
}

void Session::ForwardSplit(SplitRequest split, const CommandInfo& info) {
  PendingReply& pending = replies_.Push();
  std::vector<SubRequest*> parts;
  for (size_t i = 0; i < split.parts.size(); ++i) {
    SubCommand& part = split.parts[i];
    SubRequest* request = NewSubRequest(pending, part.slot);
    request->part = static_cast<int>(i);
    request->request = std::move(part.request);
    request->mode.read_only = ReadsFromReplica(info, part.slot) && !request->mode.pinned;
    parts.push_back(request);
  }
  // Before any part is routed: a part may be answered at once (an error).
  pending.assembly = SplitAssembly(std::move(split));
  for (SubRequest* request : parts) router_.Route(request);
}

void Session::CountSplit(const SplitRequest& split, const CommandInfo& info,
                         std::span<const std::string_view> args) {
  // SplitBySlot resolved these positions already; resolving them again is arithmetic only.
  auto keys = ResolveKeys(info, args);
  if (!keys) return;
  for (const SubCommand& part : split.parts) {
    key_load_->CountSlot(part.slot);
    for (size_t index : part.key_order) {
      key_load_->CountKey(args[keys->first + index * keys->step], info.read_only);
    }
  }
}

bool Session::ForwardToEveryPrimary(PendingReply& pending, std::string_view request, bool pinned) {
  const auto& primaries = router_.CurrentMap().primaries();
  if (primaries.empty()) return false;
  std::vector<SubRequest*> parts;
  for (size_t i = 0; i < primaries.size(); ++i) {
    SubRequest* part = NewSubRequest(pending, -1, pinned);
    part->part = static_cast<int>(i);
    part->request.assign(request);
    part->host = primaries[i].host;
    part->port = primaries[i].port;
    parts.push_back(part);
  }
  for (SubRequest* part : parts) router_.Route(part);
  return true;
}

void Session::ForwardFanOut(std::string_view frame, std::span<const std::string_view> args) {
  auto plan = PlanFanOut(args);
  if (!plan) return ReplyError(plan.error().message());
  if (!plan->every_shard) return Forward(frame, -1);
  const size_t shards = router_.CurrentMap().primaries().size();
  if (shards == 0) return ReplyError("CLUSTERDOWN Hash slot not served");
  const bool script = LookupCommand(args[0]).name == "SCRIPT";
  // Else a shard answering NOSCRIPT would be given the flushed script again.
  if (script && args.size() >= 2 && LowerCase(args[1]) == "flush") services_.ForgetScripts();
  PendingReply& pending = replies_.Push();
  const bool script_load = plan->merge == FanOutMerge::kSameReply && args.size() == 3 && script &&
                           LowerCase(args[1]) == "load";
  if (script_load) {
    pending.assembly = ScriptLoadAssembly(
        shards, [&services = services_, body = std::string(args[2])](std::string sha) {
          services.RememberScript(std::move(sha), body);
        });
  } else {
    pending.assembly = FanOutAssembly(plan->merge, shards, id_ + fan_outs_++, plan->limit);
  }
  // A shard running a script reads nothing more from the connection that sent it: KILL goes
  // over this client's own connections, which are not queued behind it.
  ForwardToEveryPrimary(pending, frame, /*pinned=*/plan->merge == FanOutMerge::kAnyOk);
}

void Session::ForwardScan(std::span<const std::string_view> args) {
  if (args.size() < 2) return ReplyError(WrongArgCountError(args[0]));
  const auto& primaries = router_.CurrentMap().primaries();
  if (primaries.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  auto position = DecodeScanCursor(args[1], primaries.size());
  if (!position) return ReplyError(position.error().message());
  std::vector<std::string_view> shard_args(args.begin(), args.end());
  const std::string cursor = std::to_string(position->cursor);
  shard_args[1] = cursor;
  PendingReply& pending = replies_.Push();
  pending.assembly = ScanAssembly(position->shard, primaries.size());
  SubRequest* request = NewSubRequest(pending, -1);
  request->part = 0;
  common::AppendCommand(request->request, shard_args);
  request->host = primaries[position->shard].host;
  request->port = primaries[position->shard].port;
  router_.Route(request);
}

// ---- replies ----

void Session::OnReply(SubRequest* request, std::string_view frame) {
  if (request->mode.queue_probe) {
    DeliverProbe(*request);
  } else if (request->mode.receiver) [[unlikely]] {
    DeliverReceiverId(*request, frame);
  } else {
    Deliver(*request, frame);
  }
  if (request->mode.tracked) [[unlikely]] {
    --tracked_inflight_;
    read_since_flush_ = true;  // its reply may be cached: the next "everything" must be heard
  }
  if (request->mode.pinned && !closed_) pinned_.ReleaseIdle();
  const bool sequenced = request->sequenced;
  const int slot = request->slot;
  router_.FreeRequest(request);
  // Before this request stops counting: the requests it held are routed, and may be answered.
  if (sequenced) {
    for (SubRequest* held : sequencer_.Leave(slot)) router_.Route(held);
  }
  --inflight_;
  if (closed_ && inflight_ == 0) link_.SessionIdle();  // last: the session may be deleted
}

void Session::Deliver(const SubRequest& request, std::string_view frame) {
  // Closed, or past the last reply (QUIT): the PendingReply is gone, nobody reads this.
  if (closed_ || replies_.closing()) return;
  PendingReply& pending = *request.pending;
  if (!pending.assembly) return Fill(pending, frame);
  std::optional<std::string> reply =
      pending.assembly->Add(static_cast<size_t>(request.part), frame);
  if (reply) return Fill(pending, *reply);
  pending.progressed = true;  // a push that came after this part goes after the reply
}

bool Session::Admit(SubRequest* request, const void* connection) {
  return sequencer_.Admit(request, connection);
}

PinnedLink* Session::PinnedLinkFor(const SubRequest& request, const std::string& host, int port) {
  PinnedLink* link = pinned_.For(request, host, port);
  if (request.mode.tracking_command) {
    link->tracking = true;
  } else if (tracking_.on() && !link->tracking && !request.mode.receiver) [[unlikely]] {
    BringIntoTracking(link);
  }
  return link;
}

void Session::Reply(std::string_view bytes, bool close_after) {
  if (close_after) last_reply_queued_ = true;
  if (replies_.empty() && !close_after && !replies_.silencing()) {
    out_ += bytes;
    link_.OutputReady();
    return;
  }
  PendingReply& pending = replies_.Push();
  pending.close_after = close_after;
  Fill(pending, bytes);
}

bool Session::EndOfRequests() {
  if (closed_) return false;
  for (const PinnedLink* link : pinned_.links()) {
    if (link->HasRequests()) return false;
  }
  if (!last_reply_queued_) Reply("", /*close_after=*/true);  // an implicit QUIT, unanswered
  return true;
}

void Session::ReplyError(std::string_view message, bool close_after) {
  services_.stats().error_replies.fetch_add(1, std::memory_order_relaxed);
  std::string frame;
  common::AppendError(frame, message);
  Reply(frame, close_after);
}

void Session::ProtocolError(std::string_view what) {
  services_.stats().protocol_errors.fetch_add(1, std::memory_order_relaxed);
  ReplyError("ERR Protocol error: " + std::string(what), /*close_after=*/true);
}

void Session::Refuse(std::string_view error) { ReplyError(error, /*close_after=*/true); }

void Session::Fill(PendingReply& pending, std::string_view bytes) {
  if (pending.stamp.started_ns != 0) metrics_->OnReply(std::exchange(pending.stamp, {}));
  replies_.Fill(pending, bytes, out_);
  if (barrier_pending_ != nullptr && replies_.IsFront(*barrier_pending_)) RunWaitBarrier();
  link_.OutputReady();
}

void Session::PushMessage(std::string_view frame) {
  if (closed_ || replies_.closing()) return;
  if (ClosedForSlowReading(frame.size())) return;
  services_.stats().pubsub_messages.fetch_add(1, std::memory_order_relaxed);
  out_ += frame;
  link_.OutputReady();
}

bool Session::ClosedForSlowReading(size_t more) {
  if (out_.size() + link_.BytesInFlight() + more <= options_.pubsub_buffer_limit) return false;
  // A client that does not read would make the proxy hold every message or invalidation for it.
  services_.stats().pubsub_slow_disconnects.fetch_add(1, std::memory_order_relaxed);
  link_.CloseNow();
  return true;
}

bool Session::OverLimits() const {
  return replies_.size() >= options_.max_pending || out_.size() >= options_.max_client_buffer ||
         waiting_finish_ != Finish::kNone || holding_for_receivers_;
}

void Session::Discard(SubRequest* request) {
  if (request->mode.tracked) --tracked_inflight_;
  router_.FreeRequest(request);
  --inflight_;
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  replies_.Clear();
  // Held requests were never sent: nothing will answer them.
  for (SubRequest* request : barrier_requests_) Discard(request);
  barrier_requests_.clear();
  barrier_pending_ = nullptr;
  for (SubRequest* request : sequencer_.TakeAllHeld()) Discard(request);
  pinned_.ReleaseAll();
  held_subscribes_.clear();  // their replies went with replies_
  subscriptions_.reset();    // unsubscribes everything at the hub
}

}  // namespace shardctl::proxy
