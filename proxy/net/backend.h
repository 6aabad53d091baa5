// Backend: one connection from one worker to one shard, shared by all of that worker's clients.
//
// Requests are appended to one output buffer and written once per loop turn (Worker's flush
// phase); replies come back in the order the requests were written, so each reply frame goes to
// the front waiter. A RESP3 backend (protocol 3) opens with HELLO 3, whose reply is dropped.
//
// With the host's shard_tls(), the connection runs TLS: the handshake starts once TCP connects,
// requests queue in out_ until it is done, then are sealed and written; replies are opened
// before the scanner. Requests are "sent" (not safe to retry elsewhere) only once the handshake
// is done.
//
// Failure (connect error, reset, protocol error, a reply later than --timeout): every waiter is
// handed back to the Worker with the reason, the handle closes, and the Worker forgets this
// backend; the next request for that shard opens a new connection. Owned by the Worker; deleted
// in its close callback.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/resp.h"
#include "common/ring_queue.h"
#include "common/tls.h"
#include "common/uv/stream.h"
#include "proxy/commands/request.h"
#include "proxy/routing/routing.h"

namespace shardctl::proxy {

class AuthConfig;
class Backend;
struct ProxyStats;
class ThreadMetrics;

// What a backend connection reports to, and needs from, the worker thread that owns it.
class BackendHost {
 public:
  virtual ~BackendHost() = default;
  virtual uv_loop_t* loop() = 0;
  // The thread's read buffer: reads are handled synchronously, so one per loop is enough.
  virtual uv_buf_t ReadBuffer() = 0;
  virtual const AuthConfig& auth() const = 0;
  // What a new shard connection speaks TLS with; null for plain RESP.
  virtual std::shared_ptr<const common::TlsContext> shard_tls() const { return nullptr; }
  virtual ProxyStats& stats() = 0;
  // The thread's /metrics counters (metrics.h); null without --metrics-port.
  virtual ThreadMetrics* metrics() { return nullptr; }
  // Write `backend`'s queued requests at the end of this loop turn.
  virtual void ScheduleFlush(Backend* backend) = 0;
  // A reply frame for `request`, in the order the requests were written.
  virtual void OnBackendReply(SubRequest* request, std::string_view frame) = 0;
  // `request` will get no reply from this connection. `never_sent`: safe to try again elsewhere.
  virtual void OnBackendFailure(SubRequest* request, std::string_view error, bool never_sent) = 0;
  // The connection is closing (because it failed, when `failure`): forget it.
  virtual void OnBackendClosing(Backend* backend, bool failure) = 0;
  // The slot map may be stale: ask the refresher for a new one soon.
  virtual void RequestMapRefresh() = 0;
  // A push frame on a pinned connection (an invalidation of its client's CLIENT TRACKING).
  virtual void OnBackendPush(Backend* /*backend*/, std::string_view /*frame*/) {}
};

// "host:port/2", "host:port/3" (protocol), "/ro" appended for a READONLY replica connection: the
// name of a shard connection in a worker's tables.
std::string BackendKey(const std::string& host, int port, int protocol, bool readonly = false);

class Backend final : public PinnedLink {
 public:
  // `readonly`: a replica connection, opened with READONLY so it serves reads of its primary's
  // slots.
  Backend(BackendHost& owner, std::string host, int port, int protocol, std::string key,
          bool readonly = false);
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // Starts connecting. A failure to even start (a bad address) is reported through the waiters
  // on the next Flush().
  void Connect();
  // Queues `request` (after its preamble and its CLIENT CACHING if it has them, then ASKING when
  // `asking`); written at the end of this loop turn. Their replies are dropped.
  void Send(SubRequest* request, bool asking);
  // Writes what was queued, if connected and no write is in progress.
  void Flush();
  // Queues that write on the worker's batch; the Flush() that follows takes its result.
  void QueueFlush(common::uv::WriteBatch& batch) {
    if (!closing_ && connect_error_.empty()) stream_.QueueWrite(batch, out_);
  }
  // Fails the connection when its oldest request was written to the shard more than
  // `timeout_ms` ago and is still unanswered, unless that request blocks by design
  // (SubRequest::may_block), or when connecting takes longer than that. The worker calls it
  // after reading what the shards sent in this loop turn, so a reply already here is not late.
  void CheckTimeout(uint64_t now_ms, uint64_t timeout_ms);
  // Fails every waiter with `why` and closes.
  void Fail(std::string why);
  // Closes on purpose (a pinned connection whose client left, a full pool): like Fail() but
  // not counted as a backend failure and no map refresh.
  void Close(std::string why);
  // Queues a command whose reply is dropped (UNWATCH when a pinned connection is given back).
  void SendUnanswered(std::string_view command) override;
  // True while a request waits on this connection (replies that are dropped do not count).
  bool HasRequests() const override;

  const std::string& key() const { return key_; }
  const std::string& host() const override { return host_; }
  int port() const override { return port_; }
  int protocol() const override { return protocol_; }
  bool closing() const override { return closing_; }
  bool readonly() const { return readonly_; }
  void MarkWatched() override { needs_unwatch = true; }
  bool flush_scheduled = false;  // owned by the worker's ScheduleFlush
  // The client this connection is pinned to (blocking commands, WATCH, WAIT), null for shared
  // connections and for pinned ones idle in the worker's pool.
  ReplySink* pinned_for = nullptr;
  // A pinned connection (never shared by clients at the same time; pooled when idle).
  bool pinned = false;
  // A WATCH went over it: UNWATCH before it is pooled for another client.
  bool needs_unwatch = false;

 private:
  // kDropReply: ASKING, a request's preamble, READONLY, UNWATCH — their replies are dropped.
  enum class Waiting { kRequest, kDropReply, kHello, kAuth, kSkip };
  struct Waiter {
    Waiting what = Waiting::kRequest;
    SubRequest* request = nullptr;  // kRequest only
    uint64_t written_ms = 0;        // when it was handed to the socket (0 until then)
  };

  // common::uv::Stream's hooks (stream.h).
  friend class common::uv::Stream;
  uv_buf_t StreamReadBuffer() { return owner_.ReadBuffer(); }
  void OnStreamConnected() { Flush(); }
  void OnStreamRead(std::string_view bytes);
  void OnStreamFlushWanted() { owner_.ScheduleFlush(this); }
  void OnStreamWritten() { Flush(); }
  void OnStreamFailure(common::uv::StreamFailure failure, std::string_view detail);
  void OnStreamClosed() { delete this; }

  void HandleFrames();
  // Queues the wait for one reply, unwritten until the next write stamps it.
  void Expect(Waiting what, SubRequest* request);
  // Stamps the waiters queued since the last write with the time it was written.
  void StampWritten();
  void CloseWithWaiters(std::string why, bool failure);

  BackendHost& owner_;
  const std::string host_;
  const int port_;
  const int protocol_;
  const std::string key_;
  const bool readonly_;
  common::uv::Stream stream_;  // TCP, in TLS with the host's shard_tls()
  bool closing_ = false;
  std::string connect_error_;  // set when Connect() could not start
  std::string out_;            // queued, not yet handed to a write
  common::RingQueue<Waiter> waiters_;
  size_t unwritten_ = 0;  // the last waiters_, whose commands are not written yet
  uint64_t connect_started_ms_ = 0;
  common::RespScanner replies_;
};

}  // namespace shardctl::proxy
