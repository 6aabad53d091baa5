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
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/resp.h"
#include "proxy/command_table.h"
#include "proxy/request.h"

namespace shardctl::proxy {

class Backend;
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

  // Per-slot ordering: a slot's commands must reach the shards in the client's order even when
  // the slot map changes while some are in flight (else a later command sent straight to the new
  // owner overtakes earlier ones still bouncing off the old owner with MOVED). EnterSlot()
  // admits `request` to `backend` when this session has nothing for its slot in flight elsewhere
  // and nothing held; otherwise it holds the request and returns false. LeaveSlot() is called
  // when a sequenced request finishes; the last one out routes the held requests again.
  bool EnterSlot(SubRequest* request, const void* backend);
  void LeaveSlot(int slot);
  // A sequenced request of `slot` waits for a retry (TRYAGAIN, CLUSTERDOWN, a refused connect):
  // the client's later commands for the slot are held until it is done, not sent past it.
  void HoldSlot(int slot);

  bool closed() const { return closed_; }
  int protocol() const { return protocol_; }

  // A pub/sub message for this client, already framed for its protocol (PubSubHub). Appended
  // to the output at once; past --pubsub-buffer-limit unsent bytes the client is disconnected.
  void PushMessage(std::string_view frame);

  // Pinned connections (session_pinned.cc): this client's own connections to shards, for
  // blocking commands, WATCH and WAIT. The connection a pinned `request` goes over: the one
  // holding this client's WATCH for a watched request, else this client's connection to
  // host:port, taken from the worker's pool on first use.
  Backend* PinnedBackend(const SubRequest& request, const std::string& host, int port);
  // A pinned connection failed or closed: forgotten, and a WATCH on it is broken.
  void ForgetPinned(Backend* backend);
  // A pinned request finished: connections this client no longer needs go back to the pool.
  void PinnedRequestDone();
  // The watch can no longer hold (its connection failed, its slot moved): EXEC answers null, as
  // Redis does when a watched key changed, and the client retries.
  void BreakWatch();
  bool flush_scheduled = false;  // owned by Worker::ScheduleFlush

 private:
  static void OnAlloc(uv_handle_t* handle, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnClose(uv_handle_t* handle);

  void ProcessInput();
  bool HandleInlineCommand();
  // Transactions (session_transaction.cc). HandleTransaction() returns false when the command
  // is not part of one and takes the normal path.
  bool HandleTransaction(std::string_view frame, std::span<const std::string_view> args,
                         const CommandInfo& info);
  void QueueInTransaction(std::string_view frame, std::span<const std::string_view> args,
                          const CommandInfo& info);
  void ExecTransaction();
  // WATCH, UNWATCH outside MULTI, WAIT (session_pinned.cc).
  void HandleWatch(std::string_view frame, std::span<const std::string_view> args,
                   const CommandInfo& info);
  void HandleUnwatch(std::string_view frame);
  void EndWatch();
  void ForwardWait(std::string_view frame, std::span<const std::string_view> args);
  void RunWaitBarrier();
  void ReleaseIdlePinned();
  void ClosePinned();
  // Pub/sub (session_pubsub.cc). SubscribedModeRefuses() answers a RESP2 subscriber's command
  // that Redis would refuse in that state and returns true.
  void HandlePubSub(std::span<const std::string_view> args, const CommandInfo& info);
  bool SubscribedModeRefuses(std::span<const std::string_view> args, const CommandInfo& info);
  void UnsubscribeAll();
  void HandleCommand(std::string_view frame, std::span<const std::string_view> args);
  // `may_block`: a blocking command, exempt from --timeout (it waits by design).
  void Forward(std::string_view frame, int slot, bool pinned = false, bool may_block = false,
               bool read_only = false);
  // Whether a command for `slot` may go to a replica (--read-from); notes this client's writes
  // for prefer-replica's read-your-writes rule.
  bool ReadsFromReplica(const CommandInfo& info, int slot);
  void ForwardSplit(SplitRequest split, const CommandInfo& info);
  void ForwardFanOut(std::string_view frame, std::span<const std::string_view> args);
  void ForwardScan(std::span<const std::string_view> args);
  // `pinned`: over this client's own connection (a slot's commands also are while it is
  // watched, and every keyed command once the client has used WAIT).
  SubRequest* NewSubRequest(PendingReply& pending, int slot, bool pinned = false);
  // Local commands (session_local.cc).
  void HandleLocal(std::span<const std::string_view> args);
  void HandleHello(std::span<const std::string_view> args);
  void HandleClient(std::span<const std::string_view> args);
  void HandleCommandCommand(std::span<const std::string_view> args);
  void HandleInfo(std::span<const std::string_view> args);
  // INFO's reply frame for `text`: bulk string (RESP2) or verbatim string (RESP3).
  std::string InfoReply(std::string_view text) const;
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

  struct SlotFlight {
    const void* backend = nullptr;  // where the in-flight requests of the slot were sent
    size_t count = 0;
    std::deque<SubRequest*> held;  // waiting for `count` to reach 0, in the client's order
  };

  Worker& worker_;
  const uint64_t id_;
  std::unordered_map<int, SlotFlight> flights_;
  uv_tcp_t tcp_{};
  uv_write_t write_req_{};
  common::RespScanner requests_;
  std::deque<PendingReply> pending_;
  std::string out_;
  std::string in_write_;
  size_t inflight_ = 0;  // SubRequests pointing at this session
  struct Transaction {
    std::string queued;  // the commands' frames, in order
    size_t count = 0;
    int slot = -1;        // the one slot all keys hash to; -1 until a key was seen
    bool failed = false;  // a command could not be queued: EXEC answers EXECABORT
  };
  std::optional<Transaction> transaction_;  // set between MULTI and EXEC/DISCARD
  int protocol_ = 2;
  std::string name_;
  std::string peer_;
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
  bool handle_closed_ = false;
  bool close_after_write_ = false;
  bool admitted_ = false;
  std::vector<Backend*> pinned_;  // this client's own connections (blocking, WATCH, WAIT)
  struct Subscriptions {
    std::set<std::string> channels, patterns, shard_channels;
    bool empty() const { return channels.empty() && patterns.empty() && shard_channels.empty(); }
  };
  std::unique_ptr<Subscriptions> subscriptions_;  // null until the first (P|S)SUBSCRIBE
  // --read-from prefer-replica: when this client last wrote each slot (uv_now ms); its reads
  // of a slot written in the last second go to the primary.
  std::unordered_map<int, uint64_t> recent_writes_;
  struct Watch {
    int slot = -1;               // every watched key hashes here
    Backend* backend = nullptr;  // the connection WATCH went over, once routed
    bool broken = false;         // the connection failed or the slot moved: EXEC answers null
  };
  std::optional<Watch> watch_;  // from WATCH until EXEC, DISCARD, UNWATCH or RESET
  // WAIT counts the replicas that acknowledged a connection's writes, so once a client has used
  // WAIT its keyed commands stay on its pinned connections (kept, not pooled).
  bool wait_mode_ = false;
  bool shared_keyed_ = false;  // keyed commands went over shared connections since the last WAIT
  // A WAIT held until the replies before it are in (see ForwardWait()).
  PendingReply* barrier_pending_ = nullptr;
  std::vector<SubRequest*> barrier_requests_;
  bool authenticated_;  // false until AUTH when the proxy has users (--auth-file)
};

}  // namespace shardctl::proxy
