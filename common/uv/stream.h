// Stream: one TCP connection on a libuv loop, in TLS when given a context, with batched writes:
// the byte plumbing of shardproxy's client, shard and subscriber connections and of the load
// generator's connections (the part Redis' anet.c and ae.c play for redis-server and redis-cli).
//
//   socket ──read──▶ [TlsSession::Open] ──plain bytes──▶ Owner::OnStreamRead()
//   owner's buffer ──Flush() (once per loop turn)──▶ [TlsSession::Seal] ──▶ uv_try_write, the
//                                                     rest in one uv_write ──▶ socket
//
// The owner appends what it sends to a buffer of its own and calls Flush() once per loop turn
// (FlushList, flush.h): many requests, one write. With a WriteBatch (write_batch.h) the loop
// turn's writes of many streams go to the kernel in one system call first (QueueWrite()), and
// Flush() takes its stream's result in place of the uv_try_write. The socket is registered for
// reading only; libuv watches it for writability only while a uv_write holds what uv_try_write
// could not send. TLS runs on memory BIOs (common::TlsSession): nothing else knows it is there.
//
// The owner (a type, not an interface: the data path makes no virtual call) provides
//   uv_buf_t StreamReadBuffer()                  where the next read goes (one per thread: reads
//                                                are handled before the next one)
//   void OnStreamRead(std::string_view plain)    bytes read, after TLS (a view into that buffer,
//                                                valid during the call; empty in a handshake)
//   void OnStreamFlushWanted()                   TLS has bytes to send (the handshake) or just
//                                                finished its handshake: Flush() soon
//   void OnStreamFailure(StreamFailure, std::string_view detail)
//                                                the connection cannot go on; the owner closes it
//   void OnStreamClosed()                        the handle is closed; the owner may delete itself
//                                                and so the stream (the last call it gets)
// and, when it uses them, OnStreamConnected() (after Connect(): TCP is up, reading started; what
// was queued meanwhile, a TLS ClientHello included, waits for a Flush()) and OnStreamWritten() (a
// uv_write finished; what was queued meanwhile waits for a Flush()).
//
// Lifetime: the owner holds the Stream (by value) and frees it only from OnStreamClosed(), after
// Close(); no callback reaches the owner once Close() was called, except OnStreamClosed().
// Loop thread only.
#pragma once

#include <uv.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/tls.h"
#include "common/uv/write_batch.h"

namespace shardctl::common::uv {

// Why a stream cannot go on (OnStreamFailure); `detail` is libuv's or TLS' text.
enum class StreamFailure {
  kConnect,     // the connect failed (refused, unreachable)
  kPeerClosed,  // EOF, or a TLS close_notify after the bytes that came with it
  kRead,        // a read error (reset)
  kWrite,       // a write error
  kTls,         // a failed handshake or a bad record; the alert was tried on the socket
};

// What Flush() did.
struct FlushOutcome {
  bool reached_socket = false;  // bytes were written, or handed to the uv_write now in flight
  bool failed = false;          // the connection cannot go on (failure and failure_detail())
  StreamFailure failure = StreamFailure::kWrite;
};

class Stream {
 public:
  // A TCP handle on `loop` for `owner`, whose hooks (the file comment) it calls.
  template <typename Owner>
  Stream(uv_loop_t* loop, Owner* owner);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // TLS for this connection: a client context starts the handshake (its ClientHello waits for
  // the first Flush() after the connect), a server context waits for the peer's. Before
  // Connect() or right after the accept.
  void UseTls(const TlsContext& context) { tls_ = std::make_unique<TlsSession>(context); }
  // Starts connecting; OnStreamConnected() or OnStreamFailure(kConnect) follows. Returns 0, or
  // the libuv error that kept it from starting (no callback follows then).
  int Connect(const sockaddr_storage& address);
  // Accepts a connection pending on `listener` into this stream; 0 or a libuv error.
  int Accept(uv_stream_t* listener);
  // TCP_NODELAY: each write goes out at once (the writes are batched already).
  void SetNoDelay() { uv_tcp_nodelay(&tcp_, 1); }
  // Starts and stops reading (backpressure). Owner is the owner's type.
  template <typename Owner>
  void ReadStart();
  void ReadStop();

  // Writes `plain` (sealed into the TLS session first): what the socket takes now, the rest with
  // one uv_write. `plain` is left empty, except while a TLS handshake holds it back. Does
  // nothing while not connected, closing or writing (call again after OnStreamWritten()).
  FlushOutcome Flush(std::string& plain);
  // Queues what Flush(plain) would write on `batch` (plain TCP, connected, no write in flight);
  // the next Flush() takes the batch's result instead of writing. `plain` must not change until
  // then. Does nothing when the stream cannot take part (TLS seals in Flush()).
  void QueueWrite(WriteBatch& batch, const std::string& plain);
  // libuv's or TLS' words for the last failed Flush().
  std::string_view failure_detail() const { return failure_detail_; }

  // Closes the handle; OnStreamClosed() follows from the loop. Idempotent.
  void Close();

  bool connected() const { return connected_; }
  // Connected, and the TLS handshake (if any) done: what the owner sends now reaches the peer.
  bool ready() const { return connected_ && (!tls_ || tls_->established()); }
  bool writing() const { return writing_; }
  bool closing() const { return closing_; }
  // Bytes handed to the uv_write in flight.
  size_t bytes_in_flight() const { return in_write_.size(); }
  // The TLS session, null for plain TCP.
  TlsSession* tls() { return tls_.get(); }
  const TlsSession* tls() const { return tls_.get(); }
  uv_tcp_t* tcp() { return &tcp_; }
  const uv_tcp_t* tcp() const { return &tcp_; }
  uv_loop_t* loop() const { return tcp_.loop; }

 private:
  // The hooks called from libuv callbacks that are not on the per-read path.
  struct Hooks {
    void (*start_reading)(Stream* stream);
    void (*connected)(void* owner);
    void (*written)(void* owner);
    void (*failure)(void* owner, StreamFailure failure, std::string_view detail);
    void (*closed)(void* owner);
  };
  template <typename Owner>
  static const Hooks kHooks;

  enum class TlsStep { kDone, kFlushWanted, kFailed };
  // Passes `bytes` through the TLS session: replaced by the plain bytes they completed.
  TlsStep OpenTls(std::string_view& bytes);

  template <typename Owner>
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  template <typename Owner>
  static void OnRead(uv_stream_t* handle, ssize_t nread, const uv_buf_t* buf);
  static void OnConnect(uv_connect_t* request, int status);
  static void OnWrite(uv_write_t* request, int status);
  static void OnClose(uv_handle_t* handle);

  void* const owner_;
  const Hooks* const hooks_;
  std::unique_ptr<TlsSession> tls_;  // null for plain TCP
  uv_tcp_t tcp_{};
  uv_connect_t connect_request_{};
  uv_write_t write_request_{};
  std::string in_write_;  // the bytes of the uv_write in flight
  std::string failure_detail_;
  int batched_result_ = 0;  // what the WriteBatch send did (bytes, or a negative errno)
  bool batched_ = false;    // a QueueWrite() result waits for Flush()
  bool connected_ = false;
  bool writing_ = false;
  bool closing_ = false;
};

// ---- templates ----

template <typename Owner>
const Stream::Hooks Stream::kHooks = {
    [](Stream* stream) { stream->ReadStart<Owner>(); },
    [](void* owner) {
      if constexpr (requires(Owner & o) { o.OnStreamConnected(); }) {
        static_cast<Owner*>(owner)->OnStreamConnected();
      }
    },
    [](void* owner) {
      if constexpr (requires(Owner & o) { o.OnStreamWritten(); }) {
        static_cast<Owner*>(owner)->OnStreamWritten();
      }
    },
    [](void* owner, StreamFailure failure, std::string_view detail) {
      static_cast<Owner*>(owner)->OnStreamFailure(failure, detail);
    },
    [](void* owner) { static_cast<Owner*>(owner)->OnStreamClosed(); },
};

template <typename Owner>
Stream::Stream(uv_loop_t* loop, Owner* owner) : owner_(owner), hooks_(&kHooks<Owner>) {
  uv_tcp_init(loop, &tcp_);
  tcp_.data = this;
}

template <typename Owner>
void Stream::ReadStart() {
  uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &Stream::OnAlloc<Owner>,
                &Stream::OnRead<Owner>);
}

template <typename Owner>
void Stream::OnAlloc(uv_handle_t* handle, size_t, uv_buf_t* buf) {
  *buf = static_cast<Owner*>(static_cast<Stream*>(handle->data)->owner_)->StreamReadBuffer();
}

template <typename Owner>
void Stream::OnRead(uv_stream_t* handle, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<Stream*>(handle->data);
  if (nread == 0 || self->closing_) return;
  auto* owner = static_cast<Owner*>(self->owner_);
  if (nread < 0) {
    const auto why = nread == UV_EOF ? StreamFailure::kPeerClosed : StreamFailure::kRead;
    return owner->OnStreamFailure(why, uv_strerror(static_cast<int>(nread)));
  }
  std::string_view bytes(buf->base, static_cast<size_t>(nread));
  if (self->tls_) {
    const TlsStep step = self->OpenTls(bytes);
    if (step == TlsStep::kFailed) {
      return owner->OnStreamFailure(StreamFailure::kTls, self->failure_detail_);
    }
    if (step == TlsStep::kFlushWanted) owner->OnStreamFlushWanted();
  }
  owner->OnStreamRead(bytes);
  // close_notify: like a TCP EOF, after the bytes that came with it.
  if (self->tls_ && self->tls_->peer_closed() && !self->closing_) {
    owner->OnStreamFailure(StreamFailure::kPeerClosed, "close_notify");
  }
}

}  // namespace shardctl::common::uv
