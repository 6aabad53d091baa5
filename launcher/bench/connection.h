// One connection of the load generator, on its thread's libuv loop: a common::uv::Stream (TCP, in
// TLS when given a client context); requests are appended as RESP and written once per loop turn
// by the loop's ConnectionFlusher; replies are framed by common::RespScanner and handed over one
// frame at a time, raw. It replaces hiredis' async API (Debian's hiredis 0.14 has no TLS) and
// keeps what our hiredis adapter was for: the socket stays registered for reading only, writes
// are batched (uv_try_write; libuv watches for writability only while a write is partial).
//
// Lifetime: Open() allocates; the connection deletes itself once its handle is closed, after
// Close() or after it failed (OnClosed). The events interface hears nothing after Close().
#pragma once

#include <uv.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/endpoint.h"
#include "common/resp.h"
#include "common/result.h"
#include "common/tls.h"
#include "common/uv/flush.h"
#include "common/uv/stream.h"

namespace shardctl::launcher {

class BenchConnection;

// What a connection reports to its owner; `user` is what Open() was given.
class ConnectionEvents {
 public:
  virtual ~ConnectionEvents() = default;
  // The connection is up (and its TLS handshake done), or failed to come up (`error` set; the
  // connection is gone after this call).
  virtual void OnConnected(void* user, const std::string& error) = 0;
  // One complete reply frame, in the order the requests were sent.
  virtual void OnReply(void* user, std::string_view frame) = 0;
  // The connection failed after it was up (reset, EOF, a bad frame); it is gone after this call.
  virtual void OnClosed(void* user, const std::string& error) = 0;
};

// Writes every connection with queued requests once, just before the loop polls.
class ConnectionFlusher {
 public:
  explicit ConnectionFlusher(uv_loop_t* loop);
  ConnectionFlusher(const ConnectionFlusher&) = delete;
  ConnectionFlusher& operator=(const ConnectionFlusher&) = delete;
  // Flushes `connection` before the next poll (once, however often it is marked).
  void Mark(BenchConnection* connection);
  // `connection` is closing: no flush.
  void Forget(BenchConnection* connection);
  // Closes the prepare handle; call once, after which the loop can end.
  void Close() { hooks_.Close(); }

 private:
  common::uv::FlushList<BenchConnection> marked_;
  common::uv::LoopTurnHooks hooks_;
};

class BenchConnection {
 public:
  // Starts connecting to `target` (a name is resolved here, blocking: at start only). Null with
  // `error` set when it cannot even start.
  static BenchConnection* Open(uv_loop_t* loop, ConnectionFlusher& flusher,
                               const common::Endpoint& target,
                               std::shared_ptr<const common::TlsContext> tls,
                               ConnectionEvents& events, void* user, std::string& error);
  BenchConnection(const BenchConnection&) = delete;
  BenchConnection& operator=(const BenchConnection&) = delete;

  // Queues `request` (RESP bytes); written at the end of this loop turn.
  void Send(std::string_view request);
  // Closes now; requests without replies are dropped, and no event follows.
  void Close();
  // Writes what is queued (sealed first with TLS): as much as the socket takes now, the rest
  // with one uv_write. The flusher calls it once per loop turn.
  void Flush();
  bool flush_scheduled = false;  // owned by the flusher

 private:
  BenchConnection(uv_loop_t* loop, ConnectionFlusher& flusher, ConnectionEvents& events,
                  void* user);
  ~BenchConnection() = default;

  // common::uv::Stream's hooks (stream.h).
  friend class common::uv::Stream;
  uv_buf_t StreamReadBuffer();
  void OnStreamConnected();
  void OnStreamRead(std::string_view bytes);
  void OnStreamFlushWanted() { flusher_.Mark(this); }
  void OnStreamWritten() { Flush(); }
  void OnStreamFailure(common::uv::StreamFailure failure, std::string_view detail);
  void OnStreamClosed() { delete this; }

  // Ends the connection after a failure: OnConnected(error) before it was up, else OnClosed.
  void Fail(const std::string& error);
  void CloseHandle();
  // Calls OnConnected once the connection is up and its handshake done.
  void AnnounceWhenReady();

  ConnectionFlusher& flusher_;
  ConnectionEvents& events_;
  void* const user_;
  common::uv::Stream stream_;
  common::RespScanner replies_;
  std::string out_;         // queued requests, plain
  bool announced_ = false;  // OnConnected was called
  bool closed_ = false;     // Close() or Fail(): no more events
};

}  // namespace shardctl::launcher
