// One connection of the load generator, on its thread's libuv loop: TCP, in TLS when given a
// client context (common/tls.h); requests are appended as RESP and written once per loop turn
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
#include <vector>

#include "common/endpoint.h"
#include "common/resp.h"
#include "common/result.h"
#include "common/tls.h"

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
  void Mark(BenchConnection* connection);
  void Forget(BenchConnection* connection);
  // Closes the prepare handle; call once, after which the loop can end.
  void Close();

 private:
  static void OnPrepare(uv_prepare_t* prepare);
  uv_prepare_t prepare_{};
  std::vector<BenchConnection*> marked_;
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

 private:
  friend class ConnectionFlusher;
  BenchConnection(uv_loop_t* loop, ConnectionFlusher& flusher,
                  std::shared_ptr<const common::TlsContext> tls, ConnectionEvents& events,
                  void* user);
  ~BenchConnection() = default;

  static void OnConnect(uv_connect_t* request, int status);
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* request, int status);
  // Writes what is queued (sealed first with TLS): as much as the socket takes now, the rest
  // with one uv_write.
  void Flush();
  // Ends the connection after a failure: OnConnected(error) before it was up, else OnClosed.
  void Fail(const std::string& error);
  void CloseHandle();
  bool ready() const { return connected_ && (!tls_ || tls_->established()); }

  ConnectionFlusher& flusher_;
  std::shared_ptr<const common::TlsContext> tls_context_;
  std::unique_ptr<common::TlsSession> tls_;
  ConnectionEvents& events_;
  void* const user_;
  uv_tcp_t tcp_{};
  uv_connect_t connect_request_{};
  uv_write_t write_request_{};
  common::RespScanner replies_;
  std::string out_;         // queued requests, plain
  std::string in_write_;    // the buffer of the uv_write in progress
  bool connected_ = false;  // TCP is up
  bool announced_ = false;  // OnConnected was called
  bool writing_ = false;
  bool marked_ = false;  // in the flusher's list
  bool closed_ = false;  // Close() or Fail(): no more events
};

}  // namespace shardctl::launcher
