#include "proxy/net/backend.h"

#include <utility>
#include <vector>

#include "common/uv/address.h"
#include "proxy/services/auth.h"
#include "proxy/services/metrics.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {
namespace {

constexpr std::string_view kAskingCommand = "*1\r\n$6\r\nASKING\r\n";
constexpr std::string_view kHello3Command = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";

common::RespLimits BackendLimits() {
  common::RespLimits limits;
  limits.max_line_length = 1 << 26;  // long status lines from Lua scripts
  // A script's reply nests as deep as its Lua tables (Redis stops at its Lua stack limit, some
  // hundreds of levels); the scanner keeps a few bytes per level.
  limits.max_depth = 1 << 14;
  return limits;
}

}  // namespace

std::string BackendKey(const std::string& host, int port, int protocol, bool readonly) {
  return host + ":" + std::to_string(port) + (protocol >= 3 ? "/3" : "/2") +
         (readonly ? "/ro" : "");
}

Backend::Backend(BackendHost& owner, std::string host, int port, int protocol, std::string key,
                 bool readonly)
    : owner_(owner),
      host_(std::move(host)),
      port_(port),
      protocol_(protocol),
      key_(std::move(key)),
      readonly_(readonly),
      stream_(owner_.loop(), this),
      replies_(BackendLimits()) {
  out_ = owner_.auth().BackendLogin();
  if (!out_.empty()) Expect(Waiting::kAuth, nullptr);
  if (protocol_ == 3) {
    out_ += kHello3Command;
    Expect(Waiting::kHello, nullptr);
  }
  if (readonly_) {
    out_ += "*1\r\n$8\r\nREADONLY\r\n";
    Expect(Waiting::kDropReply, nullptr);  // +OK, dropped
  }
}

void Backend::Connect() {
  connect_started_ms_ = uv_now(owner_.loop());
  sockaddr_storage address{};
  if (!common::uv::ParseIpAddress(host_, port_, address)) {
    connect_error_ = "not an IP address";
    owner_.ScheduleFlush(this);
    return;
  }
  // Its ClientHello goes out first, once TCP is up.
  if (const auto tls = owner_.shard_tls()) stream_.UseTls(*tls);
  if (const int rc = stream_.Connect(address); rc != 0) {
    connect_error_ = uv_strerror(rc);
    owner_.ScheduleFlush(this);
    return;
  }
  owner_.stats().backend_connects.fetch_add(1, std::memory_order_relaxed);
}

void Backend::Send(SubRequest* request, bool asking) {
  if (request->extras) {
    // Both go again with every attempt: the request follows MOVED, or is retried after a
    // connection failed before it was written, to a node that needs them as much.
    RequestExtras& extras = *request->extras;
    if (!extras.preamble.empty()) {
      out_ += extras.preamble;
      Expect(Waiting::kDropReply, nullptr);
    }
    // Tracked requests go over pinned links, which wait out a migration instead of following
    // ASK: CACHING never meets ASKING (each would end the other before the request).
    if (!extras.caching.empty()) {
      out_ += extras.caching;
      Expect(Waiting::kDropReply, nullptr);
    }
  }
  // ASKING right before the request: any other command in between would end it.
  if (asking) {
    out_ += kAskingCommand;
    Expect(Waiting::kDropReply, nullptr);
  }
  out_ += request->request;
  for (size_t i = 0; i < request->skip_replies(); ++i) Expect(Waiting::kSkip, request);
  Expect(Waiting::kRequest, request);
  owner_.ScheduleFlush(this);
}

void Backend::Expect(Waiting what, SubRequest* request) {
  waiters_.push_back({what, request, 0});
  ++unwritten_;
}

void Backend::StampWritten() {
  if (unwritten_ == 0) return;
  // The loop's cached time can be a long turn old: a shard is timed from when it was written to.
  uv_update_time(owner_.loop());
  const uint64_t now = uv_now(owner_.loop());
  for (size_t i = waiters_.size() - unwritten_; i < waiters_.size(); ++i) {
    waiters_[i].written_ms = now;
  }
  unwritten_ = 0;
}

void Backend::Flush() {
  if (closing_) return;
  if (!connect_error_.empty()) {
    Fail("cannot connect: " + connect_error_);
    return;
  }
  // Before its handshake is done, TLS holds the requests back: only the handshake goes out.
  const bool sends_requests = !out_.empty() && stream_.ready();
  const common::uv::FlushOutcome flushed = stream_.Flush(out_);
  // What reached the socket counts as sent: a failure from here on must not call it unsent.
  if (flushed.reached_socket && sends_requests) StampWritten();
  if (!flushed.failed) return;
  if (flushed.failure == common::uv::StreamFailure::kTls) {
    return Fail(std::string(stream_.failure_detail()));
  }
  Fail("write failed: " + std::string(stream_.failure_detail()));
}

void Backend::OnStreamFailure(common::uv::StreamFailure failure, std::string_view detail) {
  using common::uv::StreamFailure;
  switch (failure) {
    case StreamFailure::kConnect:
      return Fail("cannot connect: " + std::string(detail));
    case StreamFailure::kPeerClosed:
      return Fail("the shard closed the connection");
    case StreamFailure::kRead:
      return Fail("read failed: " + std::string(detail));
    case StreamFailure::kWrite:
      return Fail("write failed: " + std::string(detail));
    case StreamFailure::kTls:
      return Fail(std::string(detail));
  }
}

void Backend::OnStreamRead(std::string_view bytes) {
  const ThreadMetrics::ReadBatch batch(owner_.metrics());
  // Replies are framed in the thread's read buffer; only a partial one is copied (Detach).
  replies_.FeedBorrowed(bytes);
  HandleFrames();
  replies_.Detach();
}

void Backend::HandleFrames() {
  size_t consumed = 0;
  for (;;) {
    const common::ScanResult frame = replies_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) {
      Fail("bad reply from the shard: " + frame.error);
      return;
    }
    consumed = frame.end;
    // A tracking client's connection: the shard pushes invalidations between the replies.
    if (frame.type == '>' && pinned) {
      owner_.OnBackendPush(this, replies_.FrameBytes(frame));
      if (closing_) return;
      continue;
    }
    if (waiters_.empty()) {
      Fail("a reply nobody asked for (push messages are not expected on this connection)");
      return;
    }
    const Waiter waiter = waiters_.front();
    waiters_.pop_front();
    const std::string_view bytes = replies_.FrameBytes(frame);
    if (waiter.what == Waiting::kAuth && frame.type == '-') {
      // The shard's words (WRONGPASS, "AUTH ... without any password configured"), never ours.
      Fail("refused the proxy's login (" + std::string(bytes.substr(1, bytes.size() - 3)) +
           "); check backend-password in --auth-file");
      return;
    }
    if (waiter.what == Waiting::kHello && frame.type == '-') {
      Fail("HELLO 3 refused (" + std::string(bytes.substr(1, bytes.size() - 3)) +
           "); RESP3 clients need Redis 6 or newer");
      return;
    }
    if (waiter.what == Waiting::kSkip && frame.type == '-' &&
        waiter.request->Extras().hint.empty()) {
      waiter.request->Extras().hint.assign(bytes);
    }
    if (waiter.what == Waiting::kRequest) owner_.OnBackendReply(waiter.request, bytes);
    if (closing_) return;
  }
  replies_.Consume(consumed);
}

void Backend::CheckTimeout(uint64_t now_ms, uint64_t timeout_ms) {
  if (closing_ || waiters_.empty()) return;
  if (!stream_.ready()) {
    if (now_ms - connect_started_ms_ >= timeout_ms) {
      Fail((stream_.connected() ? "TLS handshake timed out after " : "connect timed out after ") +
           std::to_string(timeout_ms) + "ms");
    }
    return;
  }
  // Only what the shard was sent can be late; the rest goes out at the end of this loop turn.
  if (unwritten_ == waiters_.size()) return;
  // A blocked command is silent by design; what is queued behind it waits for it, as on Redis.
  const Waiter& oldest = waiters_.front();
  if (oldest.request != nullptr && oldest.request->mode.may_block) return;
  if (now_ms > oldest.written_ms && now_ms - oldest.written_ms >= timeout_ms) {
    Fail("no reply within " + std::to_string(timeout_ms) + "ms");
  }
}

void Backend::SendUnanswered(std::string_view command) {
  out_ += command;
  Expect(Waiting::kDropReply, nullptr);
  owner_.ScheduleFlush(this);
}

bool Backend::HasRequests() const {
  for (size_t i = 0; i < waiters_.size(); ++i) {
    if (waiters_[i].request != nullptr) return true;
  }
  return false;
}

void Backend::Fail(std::string why) { CloseWithWaiters(std::move(why), /*failure=*/true); }

void Backend::Close(std::string why) { CloseWithWaiters(std::move(why), /*failure=*/false); }

void Backend::CloseWithWaiters(std::string why, bool failure) {
  if (closing_) return;
  closing_ = true;
  owner_.OnBackendClosing(this, failure);
  // Requests not handed to the socket yet (queued before the connection was up, or during its
  // TLS handshake, or in this loop turn) were never written: safe to retry elsewhere.
  const std::string error = "shard " + host_ + ":" + std::to_string(port_) + " " + why;
  common::RingQueue<Waiter> waiters;
  std::swap(waiters, waiters_);
  unwritten_ = 0;
  for (size_t i = 0; i < waiters.size(); ++i) {
    const Waiter& waiter = waiters[i];
    if (waiter.what == Waiting::kRequest) {
      owner_.OnBackendFailure(waiter.request, error, /*never_sent=*/waiter.written_ms == 0);
    }
  }
  stream_.Close();
}

}  // namespace shardctl::proxy
