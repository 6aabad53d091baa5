// Worker: one thread, one libuv loop, its own listener, clients and backend connections.
//
//   clients ──accept (SO_REUSEPORT: the kernel spreads connections over the workers' listeners)
//      │
//   Session ──Route()──▶ Backend (one per shard and protocol, shared by all of this worker's
//      ▲                    │     clients: requests multiplexed, replies matched in FIFO order)
//      └──Finish()◀── OnBackendReply(): MOVED → SendTo(new owner) + refresh the map,
//                                      ASK → SendTo(importing node, ASKING first),
//                                      TRYAGAIN/CLUSTERDOWN → retry after a backoff,
//                                      else the reply goes to the client
//   prepare + check handles: flush every connection written to in this loop turn, one write each
//
// Nothing here is shared with other workers except the ProxyServer (atomic counters) and the
// ClusterTopology (an atomic version and an immutable snapshot), so the data path takes no locks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/result.h"
#include "proxy/request.h"
#include "proxy/slot_map.h"

namespace shardctl::proxy {

class Backend;
class ProxyServer;
class PubSubHub;
class Session;

class Worker {
 public:
  Worker(ProxyServer& server, int index);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Opens this worker's listening socket (SO_REUSEPORT). Called before Run(), on any thread.
  common::Status Listen();
  // The thread body: serves until Stop(), then closes every handle and returns.
  void Run();
  // Any thread: asks the loop to close its listener and connections and return from Run().
  void Stop();

  uv_loop_t* loop() { return &loop_; }
  ProxyServer& server() { return server_; }
  int index() const { return index_; }
  bool stopping() const { return stopping_; }

  // Data path, loop thread only.
  // The slot map this worker routes by (re-read when the refresher published a new one).
  const SlotMap& CurrentMap();
  // Sends `request` to the primary serving its slot (any primary for slot -1).
  void Route(SubRequest* request);
  // Sends `request` to host:port, preceded by ASKING when `asking`.
  void SendTo(const std::string& host, int port, SubRequest* request, bool asking);
  // A backend's reply frame for `request`: follows redirects and retries, else Finish().
  void OnBackendReply(SubRequest* request, std::string_view frame);
  // The backend could not deliver `request`. `never_sent`: safe to try again elsewhere.
  void OnBackendFailure(SubRequest* request, std::string_view error, bool never_sent);
  // Gives `frame` to the request's session and frees the request.
  void Finish(SubRequest* request, std::string_view frame);
  // Finish() with an error reply built from `message` ("ERR ...", "CLUSTERDOWN ...").
  void FinishWithError(SubRequest* request, std::string_view message);

  // Connections ask to be written at the end of this loop turn.
  void ScheduleFlush(Session* session);
  void ScheduleFlush(Backend* backend);
  // Called by a session or backend whose handle is closing, so the worker forgets it.
  void ForgetSession(Session* session);
  void ForgetBackend(Backend* backend);

  // Pinned connections (worker_pinned.cc): one client's own connection to host:port, taken from
  // this worker's pool of idle ones when there is one, else opened. Owned by the worker; the
  // session hands it back with ReleasePinned() (or it fails and the session forgets it).
  Backend* AcquirePinned(const std::string& host, int port, int protocol, Session* session);
  // Takes a pinned connection back: pooled when nothing waits on it and the pool for its shard
  // has room (kIdlePinnedPerShard), else closed.
  void ReleasePinned(Backend* backend);
  static constexpr size_t kIdlePinnedPerShard = 4;
  // "host:port/2", "host:port/3" (protocol), "/ro" appended for a READONLY replica connection:
  // the key of a connection in backends_, the idle pool and the replica health table.
  static std::string ConnectionKey(const std::string& host, int port, int protocol,
                                   bool readonly = false);

  // This worker's pub/sub subscriptions (pubsub.h), created on first use. Loop thread only.
  PubSubHub& pubsub();

  // A replica connection failed: no reads go to host:port for a while.
  void MarkReplicaDown(const std::string& host, int port);

  // The shared read buffer: reads are handled synchronously, so one per loop is enough.
  uv_buf_t ReadBuffer();

  size_t session_count() const { return sessions_.size(); }
  size_t backend_count() const { return backends_.size(); }

 private:
  static void OnConnection(uv_stream_t* server, int status);
  static void OnFlushPhase(uv_prepare_t* handle);
  static void OnCheckPhase(uv_check_t* handle);
  static void OnTimeoutTick(uv_timer_t* timer);
  static void OnRetryTimer(uv_timer_t* timer);
  static void OnStop(uv_async_t* async);

  void Accept();
  void FlushAll();
  void CheckTimeouts();
  void RunDueRetries();
  void ScheduleRetry(SubRequest* request);
  bool ReloadScript(SubRequest* request);
  void ShutDown();
  Backend* BackendFor(const std::string& host, int port, int protocol, bool readonly = false);
  // A healthy replica of map.primaries()[primary] (round robin), or null (worker_replicas.cc).
  Backend* ReplicaFor(const SlotMap& map, size_t primary, int protocol);
  void ForgetIdlePinned(Backend* backend);
  void CloseIdlePinned();

  ProxyServer& server_;
  const int index_;
  uv_loop_t loop_{};
  uv_tcp_t listener_{};
  uv_prepare_t prepare_{};
  uv_check_t check_{};
  uv_timer_t timeout_timer_{};
  uv_timer_t retry_timer_{};
  uv_async_t stop_async_{};
  int listen_fd_ = -1;
  bool stopping_ = false;
  bool ran_ = false;

  std::shared_ptr<const SlotMap> map_;
  uint64_t map_version_ = 0;
  // map_->primaries()[i] for protocol 2 ([0]) and 3 ([1]); null until first used.
  std::vector<Backend*> by_index_[2];
  size_t any_backend_ = 0;  // round robin for keyless commands

  std::unordered_map<std::string, Backend*> backends_;  // "host:port/protocol"
  // ConnectionKey(host, port, 2) of a replica -> until when (uv_now ms) reads skip it.
  std::unordered_map<std::string, uint64_t> replica_down_until_;
  size_t replica_turn_ = 0;
  std::vector<Backend*> pinned_all_;  // every pinned connection, in use or idle (timeouts)
  // Idle pinned connections by "host:port/protocol", most recently released last.
  std::unordered_map<std::string, std::vector<Backend*>> idle_pinned_;
  std::vector<Session*> sessions_;
  std::vector<Session*> flush_sessions_;
  std::vector<Backend*> flush_backends_;
  std::vector<std::pair<uint64_t, SubRequest*>> retries_;  // due time (uv_now ms), request
  std::unique_ptr<char[]> read_buffer_;
  std::unique_ptr<PubSubHub> pubsub_;
};

}  // namespace shardctl::proxy
