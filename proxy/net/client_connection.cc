#include "proxy/net/client_connection.h"

#include <netinet/in.h>

#include <utility>

#include "proxy/services/stats.h"

namespace shardctl::proxy {
namespace {

const common::RespLimits& RequestLimits() {
  static const common::RespLimits limits = [] {
    common::RespLimits request_limits;
    request_limits.max_depth = 8;  // requests are flat arrays; nesting is a protocol error anyway
    return request_limits;
  }();
  return limits;
}

constexpr size_t kMaxInlineBytes = 64 * 1024;  // Redis' PROTO_INLINE_MAX_SIZE
// An incomplete request is left to the fast path again (parsed from its start when more bytes
// come) while it is this small; a bigger one goes to the resumable scanner.
constexpr size_t kFastPathBytes = 16 * 1024;

}  // namespace

ClientConnection::ClientConnection(ConnectionHost& host, RequestRouter& router,
                                   ProxyServices& services, uint64_t id, int thread,
                                   const common::TlsContext* tls)
    : host_(host),
      services_(services),
      session_(router, services, *this, id, thread),
      tls_(tls != nullptr ? std::make_unique<common::TlsSession>(*tls) : nullptr),
      requests_(RequestLimits()) {
  uv_tcp_init(host_.loop(), &tcp_);
  tcp_.data = this;
}

std::string ClientConnection::PeerName() {
  sockaddr_storage address{};
  int length = sizeof address;
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "";
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
  return std::string(ip) + ":" + std::to_string(port);
}

void ClientConnection::Start() {
  admitted_ = true;
  session_.set_peer(PeerName());
  uv_tcp_nodelay(&tcp_, 1);
  UpdateReading();
}

void ClientConnection::Refuse(std::string_view error) {
  session_.Refuse(error);
  // A TLS client hears the refusal only after its handshake, which needs reading.
  if (tls_) UpdateReading();
}

void ClientConnection::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = static_cast<ClientConnection*>(handle->data)->host_.ReadBuffer();
}

void ClientConnection::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<ClientConnection*>(stream->data);
  if (nread == 0 || self->closed_) return;
  if (nread < 0) {
    self->Close();  // EOF or reset: the client is gone
    return;
  }
  const ThreadMetrics::ReadBatch batch(self->session_.metrics());
  std::string_view bytes(buf->base, static_cast<size_t>(nread));
  if (self->tls_) {
    auto plain = self->tls_->Open(bytes);
    if (!plain) {
      self->services_.stats().tls_errors.fetch_add(1, std::memory_order_relaxed);
      // The alert says why ("unknown ca", "certificate required"): one try, then close.
      std::string& alert = self->tls_->wire();
      uv_buf_t alert_buf = uv_buf_init(alert.data(), static_cast<unsigned>(alert.size()));
      if (!alert.empty() && !self->writing_) uv_try_write(stream, &alert_buf, 1);
      return self->Close();
    }
    bytes = *plain;
    // The handshake's answer, and replies held while it ran.
    if (self->tls_->HasWire() || !self->session_.output().empty()) self->OutputReady();
  }
  self->requests_.Feed(bytes);
  self->ProcessInput();
  // close_notify: like a TCP EOF, after the requests that came with it.
  if (self->tls_ && self->tls_->peer_closed()) self->Close();
}

// An inline command ("PING\r\n", as telnet, nc and HAProxy's redis-check send): arguments
// separated by spaces, no quoting. Returns false when the line is not complete yet.
bool ClientConnection::HandleInlineCommand() {
  const std::string_view rest = requests_.Unreturned();
  const size_t newline = rest.find('\n');
  if (newline == std::string_view::npos) {
    if (rest.size() > kMaxInlineBytes) session_.ProtocolError("too big inline request");
    return false;
  }
  const std::vector<std::string_view> args = common::SplitInlineArgs(rest.substr(0, newline));
  std::string request;
  common::AppendCommand(request, args);
  requests_.SkipUnreturned(newline + 1);  // the views stay valid until the next Consume()
  if (!args.empty()) session_.HandleCommand(request, args);
  return true;
}

void ClientConnection::ProcessInput() {
  while (!closed_ && !session_.done_reading() && !session_.OverLimits()) {
    const std::string_view rest = requests_.Unreturned();
    if (!rest.empty() && common::IsInlineCommand(rest[0])) {
      if (!HandleInlineCommand()) break;
      continue;
    }
    // The usual request in one pass; the resumable scanner for the rest (a big request arriving
    // in pieces, whose header would otherwise be parsed again on every read) and for errors.
    const common::FastRequest fast = common::ScanRequest(rest, RequestLimits(), args_);
    if (fast.kind == common::FastRequest::Kind::kRequest && requests_.SkipUnreturned(fast.length)) {
      if (!args_.empty()) session_.HandleCommand(rest.substr(0, fast.length), args_);
      continue;
    }
    if (fast.kind == common::FastRequest::Kind::kIncomplete && rest.size() < kFastPathBytes &&
        requests_.AtFrameStart()) {
      break;
    }
    const common::ScanResult frame = requests_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) {
      session_.ProtocolError(frame.error.substr(frame.error.find(':') + 2));
      break;
    }
    const std::string_view bytes = requests_.FrameBytes(frame);
    if (auto parsed = common::ParseCommandArgsInto(bytes, args_); !parsed) {
      session_.ProtocolError(parsed.error().message());
      break;
    }
    if (!args_.empty()) session_.HandleCommand(bytes, args_);
  }
  if (!closed_) requests_.Consume(requests_.Buffered().size() - requests_.Unreturned().size());
  UpdateReading();
}

void ClientConnection::UpdateReading() {
  if (closed_) return;
  const bool handshaking = tls_ && !tls_->established();
  const bool want = handshaking || (!session_.done_reading() && !session_.OverLimits());
  if (want == reading_) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  if (want) {
    reading_ = true;
    uv_read_start(stream, &ClientConnection::OnAlloc, &ClientConnection::OnRead);
    // Requests read before the pause are still buffered: serve them first.
    if (!requests_.Buffered().empty()) ProcessInput();
  } else {
    reading_ = false;
    uv_read_stop(stream);
    if (!session_.done_reading()) {
      services_.stats().paused_reads.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void ClientConnection::OutputReady() {
  if (!closed_) host_.ScheduleFlush(this);
}

std::string* ClientConnection::PendingWire() {
  std::string& out = session_.output();
  if (!tls_) return &out;
  // (Not `if (auto sealed = ...)`: GCC 12 -O2 then warns of a dangling pointer that is not.)
  const bool sealed = tls_->Seal(out).ok();
  return sealed ? &tls_->wire() : nullptr;
}

void ClientConnection::Flush() {
  if (closed_ || writing_) return;
  std::string* wire = PendingWire();
  if (wire == nullptr) return Close();
  if (wire->empty()) {
    if (session_.close_after_output() && session_.output().empty()) Close();
    return;
  }
  std::string& out = *wire;
  uv_buf_t buf = uv_buf_init(out.data(), static_cast<unsigned>(out.size()));
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  const int written = uv_try_write(stream, &buf, 1);
  if (written == static_cast<int>(out.size())) {
    out.clear();
    if (session_.close_after_output() && session_.output().empty()) return Close();
    return UpdateReading();
  }
  if (written < 0 && written != UV_EAGAIN) return Close();
  if (written > 0) out.erase(0, static_cast<size_t>(written));
  std::swap(out, in_write_);
  out.clear();
  writing_ = true;
  write_req_.data = this;
  buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
  if (uv_write(&write_req_, stream, &buf, 1, &ClientConnection::OnWrite) != 0) {
    writing_ = false;
    Close();
  }
}

void ClientConnection::OnWrite(uv_write_t* req, int status) {
  auto* self = static_cast<ClientConnection*>(req->data);
  self->writing_ = false;
  self->in_write_.clear();
  if (self->closed_) return;
  if (status != 0) return self->Close();
  self->Flush();
  self->UpdateReading();
}

void ClientConnection::Close() {
  if (closed_) return;
  closed_ = true;
  session_.Close();
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &ClientConnection::OnClose);
}

void ClientConnection::OnClose(uv_handle_t* handle) {
  auto* self = static_cast<ClientConnection*>(handle->data);
  self->handle_closed_ = true;
  self->host_.OnConnectionClosed(self, self->admitted_);
  self->MaybeDelete();
}

void ClientConnection::MaybeDelete() {
  if (handle_closed_ && session_.inflight() == 0) delete this;
}

}  // namespace shardctl::proxy
