#include "proxy/net/backend.h"

#include <netinet/in.h>

#include <utility>
#include <vector>

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
      replies_(BackendLimits()) {
  uv_tcp_init(owner_.loop(), &tcp_);
  tcp_.data = this;
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
  if (uv_ip4_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in*>(&address)) != 0 &&
      uv_ip6_addr(host_.c_str(), port_, reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
    connect_error_ = "not an IP address";
    owner_.ScheduleFlush(this);
    return;
  }
  connect_req_.data = this;
  const int rc = uv_tcp_connect(&connect_req_, &tcp_, reinterpret_cast<sockaddr*>(&address),
                                &Backend::OnConnect);
  if (rc != 0) {
    connect_error_ = uv_strerror(rc);
    owner_.ScheduleFlush(this);
    return;
  }
  owner_.stats().backend_connects.fetch_add(1, std::memory_order_relaxed);
}

void Backend::OnConnect(uv_connect_t* req, int status) {
  auto* self = static_cast<Backend*>(req->data);
  if (self->closing_) return;
  if (status != 0) {
    self->Fail(std::string("cannot connect: ") + uv_strerror(status));
    return;
  }
  self->connected_ = true;
  if (const auto tls = self->owner_.shard_tls()) {
    self->tls_ = std::make_unique<common::TlsSession>(*tls);  // its ClientHello goes out first
  }
  uv_tcp_nodelay(&self->tcp_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), &Backend::OnAlloc, &Backend::OnRead);
  self->Flush();
}

void Backend::Send(SubRequest* request, bool asking) {
  if (asking) {
    out_ += kAskingCommand;
    Expect(Waiting::kDropReply, nullptr);
  }
  if (request->extras && !request->extras->preamble.empty()) {
    out_ += request->extras->preamble;
    Expect(Waiting::kDropReply, nullptr);
    request->extras->preamble.clear();
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
  for (auto waiter = waiters_.end() - static_cast<std::ptrdiff_t>(unwritten_);
       waiter != waiters_.end(); ++waiter) {
    waiter->written_ms = now;
  }
  unwritten_ = 0;
}

void Backend::Flush() {
  if (closing_) return;
  if (!connect_error_.empty()) {
    Fail("cannot connect: " + connect_error_);
    return;
  }
  if (!connected_ || writing_) return;
  if (!tls_) return Write(out_);
  const bool had_requests = !out_.empty() && tls_->established();
  if (auto sealed = tls_->Seal(out_); !sealed) return Fail(sealed.error().message());
  Write(tls_->wire());
  if (had_requests && !closing_) StampWritten();
}

void Backend::Write(std::string& wire) {
  if (wire.empty()) return;
  uv_buf_t buf = uv_buf_init(wire.data(), static_cast<unsigned>(wire.size()));
  const int written = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  if (written == static_cast<int>(wire.size())) {
    wire.clear();
    if (!tls_) StampWritten();
    return;
  }
  if (written < 0 && written != UV_EAGAIN) {
    Fail(std::string("write failed: ") + uv_strerror(written));
    return;
  }
  if (written > 0) {
    wire.erase(0, static_cast<size_t>(written));
    // Part of it reached the socket: a failure from here on must not call it unsent.
    if (!tls_) StampWritten();
  }
  StartWrite(wire);
}

void Backend::StartWrite(std::string& wire) {
  std::swap(wire, in_write_);
  wire.clear();
  writing_ = true;
  write_req_.data = this;
  uv_buf_t buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
  const int rc =
      uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, &Backend::OnWrite);
  if (rc != 0) {
    writing_ = false;
    Fail(std::string("write failed: ") + uv_strerror(rc));
    return;
  }
  if (!tls_) StampWritten();
}

void Backend::OnWrite(uv_write_t* req, int status) {
  auto* self = static_cast<Backend*>(req->data);
  self->writing_ = false;
  self->in_write_.clear();
  if (self->closing_) return;
  if (status != 0) {
    self->Fail(std::string("write failed: ") + uv_strerror(status));
    return;
  }
  self->Flush();
}

void Backend::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = static_cast<Backend*>(handle->data)->owner_.ReadBuffer();
}

void Backend::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<Backend*>(stream->data);
  if (nread == 0 || self->closing_) return;
  if (nread < 0) {
    self->Fail(nread == UV_EOF
                   ? "the shard closed the connection"
                   : std::string("read failed: ") + uv_strerror(static_cast<int>(nread)));
    return;
  }
  const ThreadMetrics::ReadBatch batch(self->owner_.metrics());
  std::string_view bytes(buf->base, static_cast<size_t>(nread));
  if (self->tls_) {
    const bool was_ready = self->tls_->established();
    auto plain = self->tls_->Open(bytes);
    if (!plain) return self->Fail(plain.error().message());
    bytes = *plain;
    // The handshake's next flight, or (once it is done) the requests that waited for it.
    if (self->tls_->HasWire() || (!was_ready && self->tls_->established())) {
      self->owner_.ScheduleFlush(self);
    }
  }
  self->replies_.Feed(bytes);
  self->HandleFrames();
  if (self->tls_ && self->tls_->peer_closed()) self->Fail("the shard closed the connection");
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
  if (!ready()) {
    if (now_ms - connect_started_ms_ >= timeout_ms) {
      Fail((connected_ ? "TLS handshake timed out after " : "connect timed out after ") +
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
  for (const Waiter& waiter : waiters_) {
    if (waiter.request != nullptr) return true;
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
  std::deque<Waiter> waiters;
  waiters.swap(waiters_);
  unwritten_ = 0;
  for (const Waiter& waiter : waiters) {
    if (waiter.what == Waiting::kRequest) {
      owner_.OnBackendFailure(waiter.request, error, /*never_sent=*/waiter.written_ms == 0);
    }
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Backend::OnClose);
}

void Backend::OnClose(uv_handle_t* handle) { delete static_cast<Backend*>(handle->data); }

}  // namespace shardctl::proxy
