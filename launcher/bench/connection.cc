#include "launcher/bench/connection.h"

#include <utility>

#include "common/uv/address.h"

namespace shardctl::launcher {
namespace {

common::RespLimits ReplyLimits() {
  common::RespLimits limits;
  limits.max_line_length = 1 << 20;
  return limits;
}

}  // namespace

ConnectionFlusher::ConnectionFlusher(uv_loop_t* loop)
    : hooks_(loop, this, [](void* self) { static_cast<ConnectionFlusher*>(self)->marked_.Run(); }) {
}

void ConnectionFlusher::Mark(BenchConnection* connection) { marked_.Mark(connection); }

void ConnectionFlusher::Forget(BenchConnection* connection) { marked_.Forget(connection); }

BenchConnection::BenchConnection(uv_loop_t* loop, ConnectionFlusher& flusher,
                                 ConnectionEvents& events, void* user)
    : flusher_(flusher),
      events_(events),
      user_(user),
      stream_(loop, this),
      replies_(ReplyLimits()) {}

BenchConnection* BenchConnection::Open(uv_loop_t* loop, ConnectionFlusher& flusher,
                                       const common::Endpoint& target,
                                       std::shared_ptr<const common::TlsContext> tls,
                                       ConnectionEvents& events, void* user, std::string& error) {
  auto address = common::uv::ResolveAddress(loop, target);
  if (!address.ok()) {
    error = address.error().message();
    return nullptr;
  }
  auto* connection = new BenchConnection(loop, flusher, events, user);
  if (tls) connection->stream_.UseTls(*tls);  // its ClientHello waits for the connect
  if (const int rc = connection->stream_.Connect(*address); rc != 0) {
    error = uv_strerror(rc);
    connection->closed_ = true;
    connection->CloseHandle();
    return nullptr;
  }
  return connection;
}

void BenchConnection::OnStreamConnected() {
  if (closed_) return;
  // The ClientHello, or what was sent while connecting (the login, a redirected request): a
  // flush before the connect finished wrote nothing.
  if (stream_.tls() != nullptr || !out_.empty()) flusher_.Mark(this);
  AnnounceWhenReady();
}

void BenchConnection::AnnounceWhenReady() {
  if (announced_ || !stream_.ready()) return;
  announced_ = true;
  events_.OnConnected(user_, "");
}

void BenchConnection::Send(std::string_view request) {
  out_ += request;
  flusher_.Mark(this);
}

void BenchConnection::Flush() {
  if (closed_) return;
  const common::uv::FlushOutcome flushed = stream_.Flush(out_);
  if (!flushed.failed) return;
  const std::string detail(stream_.failure_detail());
  Fail(flushed.failure == common::uv::StreamFailure::kTls ? detail : "write: " + detail);
}

void BenchConnection::OnStreamFailure(common::uv::StreamFailure failure, std::string_view detail) {
  switch (failure) {
    case common::uv::StreamFailure::kPeerClosed:
      return Fail("the server closed the connection");
    case common::uv::StreamFailure::kWrite:
      return Fail("write: " + std::string(detail));
    default:
      return Fail(std::string(detail));
  }
}

uv_buf_t BenchConnection::StreamReadBuffer() {
  // Reads are handled before the next one: one buffer per thread serves every connection.
  thread_local char buffer[64 * 1024];
  return uv_buf_init(buffer, sizeof buffer);
}

void BenchConnection::OnStreamRead(std::string_view bytes) {
  if (closed_) return;
  AnnounceWhenReady();
  if (closed_) return;
  replies_.Feed(bytes);
  size_t consumed = 0;
  while (!closed_) {
    const common::ScanResult frame = replies_.Next();
    if (frame.status == common::ScanStatus::kIncomplete) break;
    if (frame.status == common::ScanStatus::kError) return Fail("bad reply: " + frame.error);
    consumed = frame.end;
    events_.OnReply(user_, replies_.FrameBytes(frame));
  }
  if (!closed_) replies_.Consume(consumed);
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
  stream_.Close();
}

}  // namespace shardctl::launcher
