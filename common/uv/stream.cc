#include "common/uv/stream.h"

#include <utility>

namespace shardctl::common::uv {

int Stream::Connect(const sockaddr_storage& address) {
  connect_request_.data = this;
  return uv_tcp_connect(&connect_request_, &tcp_, reinterpret_cast<const sockaddr*>(&address),
                        &Stream::OnConnect);
}

void Stream::OnConnect(uv_connect_t* request, int status) {
  auto* self = static_cast<Stream*>(request->data);
  if (self->closing_) return;
  if (status != 0)
    return self->hooks_->failure(self->owner_, StreamFailure::kConnect, uv_strerror(status));
  self->connected_ = true;
  self->SetNoDelay();
  self->hooks_->start_reading(self);
  self->hooks_->connected(self->owner_);
}

int Stream::Accept(uv_stream_t* listener) {
  const int rc = uv_accept(listener, reinterpret_cast<uv_stream_t*>(&tcp_));
  connected_ = rc == 0;
  return rc;
}

void Stream::ReadStop() { uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_)); }

Stream::TlsStep Stream::OpenTls(std::string_view& bytes) {
  const bool was_established = tls_->established();
  auto plain = tls_->Open(bytes);
  if (!plain) {
    failure_detail_ = plain.error().message();
    // The alert says why ("unknown ca", "certificate required"): one try, then the owner closes.
    std::string& alert = tls_->wire();
    uv_buf_t buf = uv_buf_init(alert.data(), static_cast<unsigned>(alert.size()));
    if (!alert.empty() && !writing_) uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
    return TlsStep::kFailed;
  }
  bytes = *plain;
  // The handshake's next flight, or (once it is done) what waited for it.
  const bool flush = tls_->HasWire() || (!was_established && tls_->established());
  return flush ? TlsStep::kFlushWanted : TlsStep::kDone;
}

FlushOutcome Stream::Flush(std::string& plain) {
  FlushOutcome outcome;
  if (closing_ || !connected_ || writing_) return outcome;
  std::string* wire = &plain;
  if (tls_) {
    // (Not `if (auto sealed = ...)`: GCC 12 -O2 then warns of a dangling pointer that is not.)
    const Status sealed = tls_->Seal(plain);
    if (!sealed.ok()) {
      failure_detail_ = sealed.error().message();
      outcome.failed = true;
      outcome.failure = StreamFailure::kTls;
      return outcome;
    }
    wire = &tls_->wire();
  }
  // A batched send of these bytes already happened (QueueWrite): its result stands in for the
  // write. libuv's error codes are the negated errnos on Linux, so both read alike.
  const bool batched = std::exchange(batched_, false);
  if (wire->empty()) return outcome;
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  uv_buf_t buf = uv_buf_init(wire->data(), static_cast<unsigned>(wire->size()));
  const int written = batched ? batched_result_ : uv_try_write(stream, &buf, 1);
  if (written == static_cast<int>(wire->size())) {
    wire->clear();
    outcome.reached_socket = true;
    return outcome;
  }
  if (written < 0 && written != UV_EAGAIN) {
    failure_detail_ = uv_strerror(written);
    outcome.failed = true;
    return outcome;
  }
  if (written > 0) wire->erase(0, static_cast<size_t>(written));
  // Part of it reached the socket: from here on it counts as sent even if the rest fails.
  outcome.reached_socket = true;
  std::swap(*wire, in_write_);
  wire->clear();
  writing_ = true;
  write_request_.data = this;
  buf = uv_buf_init(in_write_.data(), static_cast<unsigned>(in_write_.size()));
  if (const int rc = uv_write(&write_request_, stream, &buf, 1, &Stream::OnWrite); rc != 0) {
    writing_ = false;
    outcome.reached_socket = written > 0;
    failure_detail_ = uv_strerror(rc);
    outcome.failed = true;
  }
  return outcome;
}

void Stream::QueueWrite(WriteBatch& batch, const std::string& plain) {
  if (tls_ || closing_ || !connected_ || writing_ || batched_ || plain.empty()) return;
  uv_os_fd_t fd = -1;
  if (uv_fileno(reinterpret_cast<const uv_handle_t*>(&tcp_), &fd) != 0) return;
  batched_ = batch.Add(fd, plain, &batched_result_);
}

void Stream::OnWrite(uv_write_t* request, int status) {
  auto* self = static_cast<Stream*>(request->data);
  self->writing_ = false;
  self->in_write_.clear();
  if (self->closing_) return;
  if (status != 0) {
    return self->hooks_->failure(self->owner_, StreamFailure::kWrite, uv_strerror(status));
  }
  self->hooks_->written(self->owner_);
}

void Stream::Close() {
  if (closing_) return;
  closing_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Stream::OnClose);
}

void Stream::OnClose(uv_handle_t* handle) {
  auto* self = static_cast<Stream*>(handle->data);
  self->hooks_->closed(self->owner_);  // may delete the owner, and so this stream
}

}  // namespace shardctl::common::uv
