// ClientConnection: one client's socket. It frames what the client sends and hands each request
// to its Session, and writes the Session's output back; the Session does everything else.
//
//   socket ──read──▶ RespScanner (inline commands too) ──frames──▶ Session::HandleCommand()
//   socket ◀──write (once per loop turn)── Session::output()
//
// Backpressure: while the session is over its limits (--max-pending commands in flight,
// --max-client-buffer reply bytes) the connection stops reading (uv_read_stop), and resumes once
// it has drained below both.
//
// TLS (--tls-cert ...): bytes read go through the connection's TlsSession before the scanner,
// and the session's output is sealed before it is written; the handshake is read and answered
// whatever the session's limits, so even a refused client hears why.
//
// Lifetime: owned by its worker. Close() closes the handle; the object (and its Session) is
// deleted once the handle is closed and no request still points at the session.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "common/tls.h"
#include "common/uv/stream.h"
#include "proxy/routing/routing.h"
#include "proxy/services/services.h"
#include "proxy/session/session.h"

namespace shardctl::proxy {

class ClientConnection;

// What a client connection needs from the worker thread it belongs to.
class ConnectionHost {
 public:
  virtual ~ConnectionHost() = default;
  virtual uv_loop_t* loop() = 0;
  // The thread's read buffer: reads are handled synchronously, so one per loop is enough.
  virtual uv_buf_t ReadBuffer() = 0;
  // Write `connection`'s output at the end of this loop turn.
  virtual void ScheduleFlush(ClientConnection* connection) = 0;
  // The connection's handle closed: the worker forgets it (and its --max-clients place, once it
  // was admitted).
  virtual void OnConnectionClosed(ClientConnection* connection, bool admitted) = 0;
};

class ClientConnection final : public ClientLink {
 public:
  // `tls`: a server context when clients speak TLS, else null.
  ClientConnection(ConnectionHost& host, RequestRouter& router, ProxyServices& services,
                   uint64_t id, int thread, const common::TlsContext* tls = nullptr);
  ClientConnection(const ClientConnection&) = delete;
  ClientConnection& operator=(const ClientConnection&) = delete;

  // Accepts the connection pending on `listener`; 0 or a libuv error (then Close() it).
  int Accept(uv_stream_t* listener) { return stream_.Accept(listener); }
  // Starts reading after the handle was accepted and the client admitted (--max-clients).
  void Start();
  // Refuses the client: writes `error` and closes once it is written.
  void Refuse(std::string_view error);
  // Writes the session's output (the worker's flush phase).
  void Flush();
  // Queues that write on the worker's batch; the Flush() that follows takes its result.
  void QueueFlush(common::uv::WriteBatch& batch) {
    if (!closed_) stream_.QueueWrite(batch, session_.output());
  }
  // Closes the connection now; replies owed are dropped.
  void Close();
  bool closed() const { return closed_; }
  Session& session() { return session_; }
  bool flush_scheduled = false;  // owned by the worker's ScheduleFlush

  // ClientLink: what the session asks of its connection.
  void OutputReady() override;
  size_t BytesInFlight() const override { return stream_.bytes_in_flight(); }
  void CloseNow() override { Close(); }
  void SessionIdle() override { MaybeDelete(); }

 private:
  // common::uv::Stream's hooks (stream.h).
  friend class common::uv::Stream;
  uv_buf_t StreamReadBuffer() { return host_.ReadBuffer(); }
  void OnStreamRead(std::string_view bytes);
  void OnStreamFlushWanted() { OutputReady(); }
  void OnStreamWritten();
  void OnStreamFailure(common::uv::StreamFailure failure, std::string_view detail);
  void OnStreamClosed();

  void ProcessInput();
  bool HandleInlineCommand();
  bool HandleQuotedInline(std::string_view line);
  void UpdateReading();
  // The client sends nothing more (EOF on plain TCP, as `nc -N` or a script's
  // shutdown(SHUT_WR) leaves it): every complete request it sent is still answered, then the
  // connection closes, as Redis answers what it read before the end of the stream.
  void EndInput();
  void MaybeDelete();

  ConnectionHost& host_;
  ProxyServices& services_;
  Session session_;
  common::uv::Stream stream_;  // TCP, in TLS with a server context
  common::RespScanner requests_;
  std::vector<std::string_view> args_;  // the current request's arguments, reused
  bool reading_ = false;
  bool peer_closed_ = false;  // EOF read: reading is over for good
  bool input_ended_ = false;  // EndInput() has served every complete request
  bool closed_ = false;
  bool handle_closed_ = false;
  bool admitted_ = false;
};

}  // namespace shardctl::proxy
