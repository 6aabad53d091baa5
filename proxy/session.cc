#include "proxy/session.h"

#include <utility>

#include "proxy/backend.h"
#include "proxy/server.h"
#include "proxy/split.h"
#include "proxy/worker.h"

namespace shardctl::proxy {
namespace {

common::RespLimits RequestLimits() {
  common::RespLimits limits;
  limits.max_depth = 8;  // requests are flat arrays; nesting is a protocol error anyway
  return limits;
}

}  // namespace

Session::Session(Worker& worker, uint64_t id)
    : worker_(worker),
      id_(id),
      requests_(RequestLimits()),
      authenticated_(!worker.server().auth().required()) {
  uv_tcp_init(worker_.loop(), &tcp_);
  tcp_.data = this;
}

void Session::Start() {
  admitted_ = true;
  sockaddr_storage address{};
  int length = sizeof address;
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    char ip[64] = {};
    int port = 0;
    if (address.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
      uv_ip6_name(v6, ip, sizeof ip);
      port = ntohs(v6->sin6_port);
    } else {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
      uv_ip4_name(v4, ip, sizeof ip);
      port = ntohs(v4->sin_port);
    }
    peer_ = std::string(ip) + ":" + std::to_string(port);
  }
  uv_tcp_nodelay(&tcp_, 1);
  UpdateReading();
}

void Session::Refuse(std::string_view error) { ReplyError(error, /*close_after=*/true); }

void Session::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = static_cast<Session*>(handle->data)->worker_.ReadBuffer();
}

void Session::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<Session*>(stream->data);
  if (nread == 0 || self->closed_) return;
  if (nread < 0) {
    self->Close();  // EOF or reset: the client is gone
    return;
  }
  self->requests_.Feed(std::string_view(buf->base, static_cast<size_t>(nread)));
  self->ProcessInput();
}

// An inline command ("PING\r\n", as telnet, nc and HAProxy's redis-check send): arguments
// separated by spaces, no quoting. Returns false when the line is not complete yet.
bool Session::HandleInlineCommand() {
  constexpr size_t kMaxInline = 64 * 1024;  // Redis' PROTO_INLINE_MAX_SIZE
  const std::string_view rest = requests_.Unreturned();
  const size_t newline = rest.find('\n');
  if (newline == std::string_view::npos) {
    if (rest.size() > kMaxInline) ProtocolError("too big inline request");
    return false;
  }
  const std::vector<std::string_view> args = common::SplitInlineArgs(rest.substr(0, newline));
  std::string request;
  common::AppendCommand(request, args);
  requests_.SkipUnreturned(newline + 1);  // the views stay valid until the next Consume()
  if (!args.empty()) HandleCommand(request, args);
  return true;
}

void Session::ProcessInput() {
  while (!close_after_write_ && !closed_ && !OverLimits()) {
    const std::string_view rest = requests_.Unreturned();
    if (!rest.empty() && common::IsInlineCommand(rest[0])) {
      if (!HandleInlineCommand()) break;
      continue;
    }
    const common::ScanResult frame = requests_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) {
      ProtocolError(frame.error.substr(frame.error.find(':') + 2));
      break;
    }
    const std::string_view bytes = requests_.FrameBytes(frame);
    auto args = common::ParseCommandArgs(bytes);
    if (!args) {
      ProtocolError(args.error().message());
      break;
    }
    if (!args->empty()) HandleCommand(bytes, *args);
  }
  if (!closed_) requests_.Consume(requests_.Buffered().size() - requests_.Unreturned().size());
  UpdateReading();
}

void Session::HandleCommand(std::string_view frame, std::span<const std::string_view> args) {
  ProxyStats& stats = worker_.server().stats();
  stats.commands.fetch_add(1, std::memory_order_relaxed);
  const CommandInfo& info = LookupCommand(args[0]);
  if (!authenticated_ && info.name != "AUTH" && info.name != "HELLO" && info.name != "QUIT" &&
      info.name != "RESET") {
    return ReplyError("NOAUTH Authentication required.");
  }
  if (subscriptions_ && SubscribedModeRefuses(args, info)) return;
  if (HandleTransaction(frame, args, info)) return;
  switch (info.kind) {
    case RouteKind::kSingleKey:
    case RouteKind::kOneSlot: {
      auto slot = RequestSlot(info, args);
      if (!slot) return ReplyError(slot.error().message());
      const bool blocks = BlocksWithOption(info, args);
      return Forward(frame, *slot, blocks, blocks, !blocks && ReadsFromReplica(info, *slot));
    }
    case RouteKind::kSplitBySlot: {
      auto split = SplitBySlot(info, args);
      if (!split) return ReplyError(split.error().message());
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
      auto slot = RequestSlot(info, args);
      if (!slot) return ReplyError(slot.error().message());
      return Forward(frame, *slot, /*pinned=*/true, /*may_block=*/true);
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

SubRequest* Session::NewSubRequest(PendingReply& pending, int slot, bool pinned) {
  auto* request = new SubRequest;
  request->session = this;
  request->pending = &pending;
  request->slot = slot;
  request->protocol = protocol_;
  request->pinned = pinned;
  if (slot >= 0) {
    request->watched = watch_ && !watch_->broken && watch_->slot == slot;
    if (request->watched || wait_mode_) request->pinned = true;
    if (!request->pinned) shared_keyed_ = true;
  }
  ++inflight_;
  return request;
}

void Session::Forward(std::string_view frame, int slot, bool pinned, bool may_block,
                      bool read_only) {
  PendingReply& pending = pending_.emplace_back();
  SubRequest* request = NewSubRequest(pending, slot, pinned);
  request->request.assign(frame);
  request->may_block = may_block;
  request->read_only = read_only && !request->pinned;  // WATCH and WAIT keep reads on theirs
  worker_.Route(request);
}

bool Session::ReadsFromReplica(const CommandInfo& info, int slot) {
  const ReadFrom mode = worker_.server().options().read_from;
  if (mode == ReadFrom::kPrimary || slot < 0) return false;
  constexpr uint64_t kReadYourWritesMs = 1000;
  const uint64_t now = uv_now(worker_.loop());
  if (!info.read_only) {
    if (mode == ReadFrom::kPreferReplica) {
      if (recent_writes_.size() > 1024) {
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
  PendingReply& pending = pending_.emplace_back();
  pending.split = std::make_unique<SplitRequest>(std::move(split));
  const size_t parts = pending.split->parts.size();
  pending.part_replies.resize(parts);
  pending.parts_left = parts;
  for (size_t i = 0; i < parts; ++i) {
    SubCommand& part = pending.split->parts[i];
    SubRequest* request = NewSubRequest(pending, part.slot);
    request->part = static_cast<int>(i);
    request->request = std::move(part.request);
    request->read_only = ReadsFromReplica(info, part.slot) && !request->pinned;
    worker_.Route(request);
  }
}

void Session::ForwardFanOut(std::string_view frame, std::span<const std::string_view> args) {
  auto plan = PlanFanOut(args);
  if (!plan) return ReplyError(plan.error().message());
  if (!plan->every_shard) return Forward(frame, -1);
  const auto& backends = worker_.CurrentMap().primaries();
  if (backends.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  PendingReply& pending = pending_.emplace_back();
  pending.fanout = plan->merge;
  if (plan->merge == FanOutMerge::kSameReply && args.size() == 3 &&
      LookupCommand(args[0]).name == "SCRIPT") {
    pending.script_body.assign(args[2]);
  }
  pending.rotate = static_cast<size_t>(id_) + pending_.size();
  pending.part_replies.resize(backends.size());
  pending.parts_left = backends.size();
  for (size_t i = 0; i < backends.size(); ++i) {
    SubRequest* request = NewSubRequest(pending, -1);
    request->part = static_cast<int>(i);
    request->request.assign(frame);
    request->host = backends[i].host;
    request->port = backends[i].port;
    worker_.Route(request);
  }
}

void Session::ForwardScan(std::span<const std::string_view> args) {
  if (args.size() < 2) return ReplyError(WrongArgCountError(args[0]));
  const auto& backends = worker_.CurrentMap().primaries();
  if (backends.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  auto position = DecodeScanCursor(args[1], backends.size());
  if (!position) return ReplyError(position.error().message());
  std::vector<std::string_view> shard_args(args.begin(), args.end());
  const std::string cursor = std::to_string(position->cursor);
  shard_args[1] = cursor;
  PendingReply& pending = pending_.emplace_back();
  SubRequest* request = NewSubRequest(pending, -1);
  common::AppendCommand(request->request, shard_args);
  request->host = backends[position->shard].host;
  request->port = backends[position->shard].port;
  request->scan_shard = static_cast<int>(position->shard);
  request->scan_shards = backends.size();
  worker_.Route(request);
}

void Session::Deliver(const SubRequest& request, std::string_view frame) {
  if (closed_) return;
  PendingReply& pending = *request.pending;
  if (request.scan_shard >= 0) {
    return Fill(pending, RewriteScanReply(frame, static_cast<size_t>(request.scan_shard),
                                          request.scan_shards));
  }
  if (request.part < 0) return Fill(pending, frame);
  pending.part_replies[static_cast<size_t>(request.part)].assign(frame);
  if (--pending.parts_left > 0) return;
  std::vector<std::string_view> replies(pending.part_replies.begin(), pending.part_replies.end());
  if (pending.fanout == FanOutMerge::kKeyspace) {
    return Fill(pending,
                InfoReply(pending.info_text + MergeKeyspace(replies, pending.shard_names)));
  }
  const std::string merged = pending.split ? MergeReplies(*pending.split, replies)
                                           : MergeFanOut(*pending.fanout, replies, pending.rotate);
  // "$40\r\n<sha>\r\n": the script is loaded everywhere; keep it for NOSCRIPT recovery.
  if (!pending.script_body.empty() && merged.size() == 47 && merged.starts_with("$40\r\n")) {
    worker_.server().RememberScript(merged.substr(5, 40), std::move(pending.script_body));
  }
  pending.split.reset();
  pending.part_replies.clear();
  Fill(pending, merged);
}

bool Session::EnterSlot(SubRequest* request, const void* backend) {
  SlotFlight& flight = flights_[request->slot];
  if (flight.count > 0 && (flight.backend != backend || !flight.held.empty())) {
    flight.held.push_back(request);
    return false;
  }
  flight.backend = backend;
  ++flight.count;
  request->sequenced = true;
  return true;
}

void Session::HoldSlot(int slot) {
  auto found = flights_.find(slot);
  // No backend matches nullptr, so EnterSlot() holds whatever comes next for the slot.
  if (found != flights_.end()) found->second.backend = nullptr;
}

void Session::LeaveSlot(int slot) {
  auto found = flights_.find(slot);
  if (found == flights_.end() || --found->second.count > 0) return;
  std::deque<SubRequest*> held = std::move(found->second.held);
  flights_.erase(found);
  for (SubRequest* request : held) worker_.Route(request);
}

void Session::Release() {
  --inflight_;
  MaybeDelete();
}

void Session::Reply(std::string_view bytes, bool close_after) {
  if (pending_.empty() && !close_after) {
    out_ += bytes;
    worker_.ScheduleFlush(this);
    return;
  }
  PendingReply& pending = pending_.emplace_back();
  pending.close_after = close_after;
  Fill(pending, bytes);
}

void Session::ReplyError(std::string_view message, bool close_after) {
  worker_.server().stats().error_replies.fetch_add(1, std::memory_order_relaxed);
  std::string frame;
  common::AppendError(frame, message);
  Reply(frame, close_after);
}

void Session::ProtocolError(std::string_view what) {
  worker_.server().stats().protocol_errors.fetch_add(1, std::memory_order_relaxed);
  ReplyError("ERR Protocol error: " + std::string(what), /*close_after=*/true);
}

void Session::Fill(PendingReply& pending, std::string_view bytes) {
  if (&pending == &pending_.front() && !pending.close_after) {
    // The common case: the oldest command's reply goes straight out, no copy kept.
    out_ += bytes;
    pending_.pop_front();
  } else {
    pending.bytes.assign(bytes);
    pending.ready = true;
  }
  DrainReady();
  worker_.ScheduleFlush(this);
}

void Session::DrainReady() {
  while (!pending_.empty() && pending_.front().ready) {
    PendingReply& front = pending_.front();
    out_ += front.bytes;
    if (front.close_after) {
      // Nothing after QUIT or a protocol error is answered.
      close_after_write_ = true;
      pending_.clear();
      return;
    }
    pending_.pop_front();
  }
  if (barrier_pending_ != nullptr && !pending_.empty() && &pending_.front() == barrier_pending_) {
    RunWaitBarrier();
  }
}

bool Session::OverLimits() const {
  const ProxyOptions& options = worker_.server().options();
  return pending_.size() >= options.max_pending || out_.size() >= options.max_client_buffer;
}

void Session::UpdateReading() {
  if (closed_) return;
  const bool want = !close_after_write_ && !OverLimits();
  if (want == reading_) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  if (want) {
    reading_ = true;
    uv_read_start(stream, &Session::OnAlloc, &Session::OnRead);
    // Requests read before the pause are still buffered: serve them first.
    if (!requests_.Buffered().empty()) ProcessInput();
  } else {
    reading_ = false;
    uv_read_stop(stream);
    if (!close_after_write_) {
      worker_.server().stats().paused_reads.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void Session::Flush() {
  if (closed_ || writing_) return;
  if (out_.empty()) {
    if (close_after_write_) Close();
    return;
  }
  uv_buf_t buf = uv_buf_init(out_.data(), static_cast<unsigned>(out_.size()));
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  const int written = uv_try_write(stream, &buf, 1);
  if (written == static_cast<int>(out_.size())) {
    out_.clear();
    if (close_after_write_) return Close();
    return UpdateReading();
  }
  if (written < 0 && written != UV_EAGAIN) return Close();
  if (written > 0) out_.erase(0, static_cast<size_t>(written));
  std::swap(out_, in_write_);
  out_.clear();
  writing_ = true;
  write_req_.data = this;
  buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
  if (uv_write(&write_req_, stream, &buf, 1, &Session::OnWrite) != 0) {
    writing_ = false;
    Close();
  }
}

void Session::OnWrite(uv_write_t* req, int status) {
  auto* self = static_cast<Session*>(req->data);
  self->writing_ = false;
  self->in_write_.clear();
  if (self->closed_) return;
  if (status != 0) return self->Close();
  self->Flush();
  self->UpdateReading();
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  pending_.clear();
  ClosePinned();
  if (subscriptions_) UnsubscribeAll();
  // Held requests were never sent: nothing will answer them.
  for (auto& [slot, flight] : flights_) {
    for (SubRequest* request : flight.held) {
      delete request;
      --inflight_;
    }
  }
  flights_.clear();
  if (admitted_) worker_.server().ReleaseClient();
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Session::OnClose);
}

void Session::OnClose(uv_handle_t* handle) {
  auto* self = static_cast<Session*>(handle->data);
  self->handle_closed_ = true;
  self->worker_.ForgetSession(self);
  self->MaybeDelete();
}

void Session::MaybeDelete() {
  if (handle_closed_ && inflight_ == 0) delete this;
}

}  // namespace shardctl::proxy
