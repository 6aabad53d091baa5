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

  uv_tcp_t* handle() { return &tcp_; }
  // Starts reading after the handle was accepted and the client admitted (--max-clients).
  void Start();
  // Refuses the client: writes `error` and closes once it is written.
  void Refuse(std::string_view error);
  // Writes the session's output (the worker's flush phase).
  void Flush();
  // Closes the connection now; replies owed are dropped.
  void Close();
  bool closed() const { return closed_; }
  bool flush_scheduled = false;  // owned by the worker's ScheduleFlush

  // ClientLink: what the session asks of its connection.
  void OutputReady() override;
  size_t BytesInFlight() const override { return in_write_.size(); }
  void CloseNow() override { Close(); }
  void SessionIdle() override { MaybeDelete(); }

 private:
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnClose(uv_handle_t* handle);

  void ProcessInput();
  bool HandleInlineCommand();
  void UpdateReading();
  void MaybeDelete();
  std::string PeerName();
  // What to write next: the session's output, or with TLS what it was sealed into.
  std::string* PendingWire();

  ConnectionHost& host_;
  ProxyServices& services_;
  Session session_;
  std::unique_ptr<common::TlsSession> tls_;  // null for plain RESP
  uv_tcp_t tcp_{};
  uv_write_t write_req_{};
  common::RespScanner requests_;
  std::vector<std::string_view> args_;  // the current request's arguments, reused
  std::string in_write_;                // the buffer of the write in progress
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
  bool handle_closed_ = false;
  bool admitted_ = false;
};

}  // namespace shardctl::proxy
