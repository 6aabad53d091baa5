#include "launcher/bench/connection.h"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace shardctl::launcher {
namespace {

common::RespLimits ReplyLimits() {
  common::RespLimits limits;
  limits.max_line_length = 1 << 20;
  return limits;
}

// The first address `target` resolves to.
common::Result<sockaddr_storage> Resolve(uv_loop_t* loop, const common::Endpoint& target) {
  sockaddr_storage address{};
  if (uv_ip4_addr(target.host.c_str(), target.port, reinterpret_cast<sockaddr_in*>(&address)) ==
          0 ||
      uv_ip6_addr(target.host.c_str(), target.port, reinterpret_cast<sockaddr_in6*>(&address)) ==
          0) {
    return address;
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  // IPv4 first, as hiredis does: "localhost" is often ::1 first in /etc/hosts, while servers
  // bound to 127.0.0.1 are the common case.
  hints.ai_family = AF_INET;
  uv_getaddrinfo_t request{};
  const std::string service = std::to_string(target.port);
  // No callback: libuv resolves synchronously (connections open at start, or on a redirect).
  int rc = uv_getaddrinfo(loop, &request, nullptr, target.host.c_str(), service.c_str(), &hints);
  if (rc != 0) {
    hints.ai_family = AF_UNSPEC;
    rc = uv_getaddrinfo(loop, &request, nullptr, target.host.c_str(), service.c_str(), &hints);
  }
  if (rc != 0 || request.addrinfo == nullptr) {
    return common::Error(std::string("cannot resolve it: ") + uv_strerror(rc));
  }
  std::memcpy(&address, request.addrinfo->ai_addr, request.addrinfo->ai_addrlen);
  uv_freeaddrinfo(request.addrinfo);
  return address;
}

}  // namespace

ConnectionFlusher::ConnectionFlusher(uv_loop_t* loop) {
  uv_prepare_init(loop, &prepare_);
  prepare_.data = this;
  uv_prepare_start(&prepare_, OnPrepare);
}

void ConnectionFlusher::Mark(BenchConnection* connection) {
  if (connection->marked_) return;
  connection->marked_ = true;
  marked_.push_back(connection);
}

void ConnectionFlusher::Forget(BenchConnection* connection) {
  if (!connection->marked_) return;
  std::replace(marked_.begin(), marked_.end(), connection, static_cast<BenchConnection*>(nullptr));
  connection->marked_ = false;
}

void ConnectionFlusher::Close() {
  uv_prepare_stop(&prepare_);
  uv_close(reinterpret_cast<uv_handle_t*>(&prepare_), nullptr);
}

void ConnectionFlusher::OnPrepare(uv_prepare_t* prepare) {
  auto* self = static_cast<ConnectionFlusher*>(prepare->data);
  std::vector<BenchConnection*> batch;
  batch.swap(self->marked_);
  for (BenchConnection* connection : batch) {
    if (connection == nullptr) continue;  // closed earlier in this batch
    connection->marked_ = false;
    connection->Flush();
  }
}

BenchConnection::BenchConnection(uv_loop_t* loop, ConnectionFlusher& flusher,
                                 std::shared_ptr<const common::TlsContext> tls,
                                 ConnectionEvents& events, void* user)
    : flusher_(flusher),
      tls_context_(std::move(tls)),
      events_(events),
      user_(user),
      replies_(ReplyLimits()) {
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
}

BenchConnection* BenchConnection::Open(uv_loop_t* loop, ConnectionFlusher& flusher,
                                       const common::Endpoint& target,
                                       std::shared_ptr<const common::TlsContext> tls,
                                       ConnectionEvents& events, void* user, std::string& error) {
  auto address = Resolve(loop, target);
  if (!address.ok()) {
    error = address.error().message();
    return nullptr;
  }
  auto* connection = new BenchConnection(loop, flusher, std::move(tls), events, user);
  connection->connect_request_.data = connection;
  const int rc = uv_tcp_connect(&connection->connect_request_, &connection->tcp_,
                                reinterpret_cast<const sockaddr*>(&*address), OnConnect);
  if (rc != 0) {
    error = uv_strerror(rc);
    connection->closed_ = true;
    connection->CloseHandle();
    return nullptr;
  }
  return connection;
}

void BenchConnection::OnConnect(uv_connect_t* request, int status) {
  auto* self = static_cast<BenchConnection*>(request->data);
  if (self->closed_) return;
  if (status != 0) return self->Fail(uv_strerror(status));
  self->connected_ = true;
  uv_tcp_nodelay(&self->tcp_, 1);
  if (self->tls_context_) {
    self->tls_ = std::make_unique<common::TlsSession>(*self->tls_context_);  // ClientHello
  }
  // The ClientHello, or what was sent while connecting (the login, a redirected request): a
  // flush before the connect finished wrote nothing.
  if (self->tls_ || !self->out_.empty()) self->flusher_.Mark(self);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&self->tcp_), OnAlloc, OnRead);
  if (self->ready()) {
    self->announced_ = true;
    self->events_.OnConnected(self->user_, "");
  }
}

void BenchConnection::Send(std::string_view request) {
  out_ += request;
  flusher_.Mark(this);
}

void BenchConnection::Flush() {
  if (closed_ || !connected_ || writing_) return;
  std::string* wire = &out_;
  if (tls_) {
    if (auto sealed = tls_->Seal(out_); !sealed.ok()) return Fail(sealed.error().message());
    wire = &tls_->wire();
  }
  if (wire->empty()) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  uv_buf_t buf = uv_buf_init(wire->data(), static_cast<unsigned>(wire->size()));
  const int written = uv_try_write(stream, &buf, 1);
  if (written == static_cast<int>(wire->size())) {
    wire->clear();
    return;
  }
  if (written < 0 && written != UV_EAGAIN)
    return Fail(std::string("write: ") + uv_strerror(written));
  if (written > 0) wire->erase(0, static_cast<size_t>(written));
  std::swap(*wire, in_write_);
  wire->clear();
  writing_ = true;
  write_request_.data = this;
  buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
  if (const int rc = uv_write(&write_request_, stream, &buf, 1, OnWrite); rc != 0) {
    writing_ = false;
    Fail(std::string("write: ") + uv_strerror(rc));
  }
}

void BenchConnection::OnWrite(uv_write_t* request, int status) {
  auto* self = static_cast<BenchConnection*>(request->data);
  self->writing_ = false;
  self->in_write_.clear();
  if (self->closed_) return;
  if (status != 0) return self->Fail(std::string("write: ") + uv_strerror(status));
  self->Flush();
}

void BenchConnection::OnAlloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  // Reads are handled before the next one: one buffer per thread serves every connection.
  thread_local char buffer[64 * 1024];
  *buf = uv_buf_init(buffer, sizeof buffer);
}

void BenchConnection::OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<BenchConnection*>(stream->data);
  if (nread == 0 || self->closed_) return;
  if (nread < 0) {
    return self->Fail(nread == UV_EOF ? "the server closed the connection"
                                      : uv_strerror(static_cast<int>(nread)));
  }
  std::string_view bytes(buf->base, static_cast<size_t>(nread));
  if (self->tls_) {
    auto plain = self->tls_->Open(bytes);
    if (!plain.ok()) return self->Fail(plain.error().message());
    bytes = *plain;
    if (self->tls_->HasWire() || !self->out_.empty()) self->flusher_.Mark(self);
    if (!self->announced_ && self->tls_->established()) {
      self->announced_ = true;
      self->events_.OnConnected(self->user_, "");
      if (self->closed_) return;
    }
  }
  self->replies_.Feed(bytes);
  size_t consumed = 0;
  while (!self->closed_) {
    const common::ScanResult frame = self->replies_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) return self->Fail("bad reply: " + frame.error);
    consumed = frame.end;
    self->events_.OnReply(self->user_, self->replies_.FrameBytes(frame));
  }
  if (self->closed_) return;
  self->replies_.Consume(consumed);
  if (self->tls_ && self->tls_->peer_closed()) self->Fail("the server closed the connection");
}

void BenchConnection::Fail(const std::string& error) {
  if (closed_) return;
  closed_ = true;
  if (announced_) {
    events_.OnClosed(user_, error);
  } else {
    events_.OnConnected(user_, error);
  }
  CloseHandle();
}

void BenchConnection::Close() {
  if (closed_) return;
  closed_ = true;
  CloseHandle();
}

void BenchConnection::CloseHandle() {
  flusher_.Forget(this);
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_),
           [](uv_handle_t* handle) { delete static_cast<BenchConnection*>(handle->data); });
}

}  // namespace shardctl::launcher
