// Session: one client connection.
//
//   socket ──read──▶ RespScanner ──frames──▶ HandleCommand()
//                                              │ local: PING, HELLO, CLIENT, INFO ... answered here
//                                              │ single slot: one SubRequest ──▶ Worker::Route()
//                                              │ split by slot: one SubRequest per slot
//                                              ▼
//                        pending_ (FIFO, one PendingReply per command, in the client's order)
//                                              ▲ Deliver(): a reply fills its PendingReply; the
//                                              │ ready ones at the front go to out_, in order
//   socket ◀──write (once per loop turn)── out_
//
// Backpressure: past --max-pending commands in flight or --max-client-buffer reply bytes the
// session stops reading (uv_read_stop) and resumes once it has drained below both.
//
// Lifetime: owned by the Worker; Close() closes the handle, and the object is deleted once the
// handle is closed and no SubRequest still points at it (replies for a closed client are dropped).
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>

#include "common/resp.h"
#include "proxy/command_table.h"
#include "proxy/request.h"

namespace shardctl::proxy {

class Worker;

class Session {
 public:
  Session(Worker& worker, uint64_t id);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uv_tcp_t* handle() { return &tcp_; }
  // Starts reading after the handle was accepted; `peer` is "ip:port" for CLIENT INFO.
  void Start();
  // A reply (or an error frame) for one of this session's requests.
  void Deliver(const SubRequest& request, std::string_view frame);
  // One SubRequest fewer points at this session; may delete the session.
  void Release();
  // Writes out_ (the worker's flush phase).
  void Flush();
  // Closes the connection now; pending replies are dropped.
  void Close();
  // Refuses the client: writes `error` and closes once it is written.
  void Refuse(std::string_view error);

  bool closed() const { return closed_; }
  bool flush_scheduled = false;  // owned by Worker::ScheduleFlush

 private:
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnClose(uv_handle_t* handle);

  void ProcessInput();
  void HandleCommand(std::string_view frame, std::span<const std::string_view> args);
  void Forward(std::string_view frame, int slot);
  void ForwardSplit(SplitRequest split);
  SubRequest* NewSubRequest(PendingReply& pending, int slot);
  // Local commands (session_local.cc).
  void HandleLocal(std::span<const std::string_view> args);
  void HandleHello(std::span<const std::string_view> args);
  void HandleClient(std::span<const std::string_view> args);
  void HandleCommandCommand(std::span<const std::string_view> args);
  void HandleInfo(std::span<const std::string_view> args);
  bool CheckAuth(std::string_view user, std::string_view password);

  // Replies made by the proxy, queued in order behind pending ones.
  void Reply(std::string_view bytes, bool close_after = false);
  void ReplyError(std::string_view message, bool close_after = false);
  void ProtocolError(std::string_view what);
  void Fill(PendingReply& pending, std::string_view bytes);
  void DrainReady();
  bool OverLimits() const;
  void UpdateReading();
  void MaybeDelete();

  Worker& worker_;
  const uint64_t id_;
  uv_tcp_t tcp_{};
  uv_write_t write_req_{};
  common::RespScanner requests_;
  std::deque<PendingReply> pending_;
  std::string out_;
  std::string in_write_;
  size_t inflight_ = 0;  // SubRequests pointing at this session
  int protocol_ = 2;
  std::string name_;
  std::string peer_;
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
  bool handle_closed_ = false;
  bool close_after_write_ = false;
  bool admitted_ = false;
};

}  // namespace shardctl::proxy
