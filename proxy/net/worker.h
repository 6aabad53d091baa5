// Worker: one thread, one libuv loop, its own listener, client connections and shard
// connections.
//
//   clients ──accept (SO_REUSEPORT: the kernel spreads connections over the workers' listeners)
//      │
//   ClientConnection ─▶ Session ──RequestRouter::Route()──▶ Backend (one per shard and protocol,
//                          ▲                                 shared by all of this worker's
//                          │                                 clients: requests multiplexed,
//                          │                                 replies matched in FIFO order)
//                          └─ReplySink::OnReply()◀── OnBackendReply(): MOVED → re-send to the new
//                                 owner + refresh the map, ASK → ASKING + re-send, TRYAGAIN and
//                                 CLUSTERDOWN → retry after a backoff, else to the session
//   prepare + check handles: flush every connection written to in this loop turn, one write each
//
// The worker implements the interfaces its parts talk through: RequestRouter (sessions),
// BackendHost (shard and subscriber connections), ConnectionHost (client connections). Nothing
// is shared with other workers except the ProxyServer (atomic counters) and the ClusterTopology
// (an atomic version and an immutable snapshot), so the data path takes no locks.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/uv/flush.h"
#include "proxy/commands/request.h"
#include "proxy/commands/request_pool.h"
#include "proxy/net/backend.h"
#include "proxy/net/client_connection.h"
#include "proxy/routing/routing.h"
#include "proxy/routing/slot_map.h"
#include "proxy/services/client_directory.h"
#include "proxy/services/key_load.h"

namespace shardctl::proxy {

class ClientConnection;
class WorkerHost;
class PubSubHub;

class Worker final : public RequestRouter,
                     public BackendHost,
                     public ConnectionHost,
                     public ClientInbox {
 public:
  Worker(WorkerHost& server, int index);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Opens this worker's listening socket (SO_REUSEPORT). Called before Run(), on any thread.
  common::Status Listen();
  // The thread body: serves until Stop(), then closes every handle and returns.
  void Run();
  // Any thread: asks the loop to close its listener and connections and return from Run().
  void Stop();

  int index() const { return index_; }
  size_t client_count() const { return clients_.size(); }
  size_t backend_count() const { return backends_.size(); }

  // RequestRouter (the sessions). Loop thread only.
  const SlotMap& CurrentMap() override;
  SubRequest* NewRequest() override;
  void FreeRequest(SubRequest* request) override;
  PendingReplyPool* reply_pool() override { return &reply_pool_; }
  void Route(SubRequest* request) override;
  PinnedLink* AcquirePinned(const std::string& host, int port, int protocol,
                            ReplySink* owner) override;
  void ReleasePinned(PinnedLink* link) override;
  SubscriptionHub& subscriptions() override;
  uint64_t NowMs() override { return uv_now(&loop_); }
  KeyLoad* key_load() override { return key_load_.get(); }
  bool PostInvalidation(uint64_t client, std::string keys) override;
  bool ClientExists(uint64_t client) override;

  // BackendHost and ConnectionHost (the connections). Loop thread only.
  uv_loop_t* loop() override { return &loop_; }
  uv_buf_t ReadBuffer() override;
  const AuthConfig& auth() const override;
  std::shared_ptr<const common::TlsContext> shard_tls() const override;
  ProxyStats& stats() override;
  ThreadMetrics* metrics() override { return metrics_; }
  void ScheduleFlush(Backend* backend) override;
  void OnBackendReply(SubRequest* request, std::string_view frame) override;
  void OnBackendFailure(SubRequest* request, std::string_view error, bool never_sent) override;
  void OnBackendClosing(Backend* backend, bool failure) override;
  void RequestMapRefresh() override;
  void OnBackendPush(Backend* backend, std::string_view frame) override;
  void ScheduleFlush(ClientConnection* connection) override;
  void OnConnectionClosed(ClientConnection* connection, bool admitted) override;

  // ClientInbox (any thread): an invalidation for one of this worker's clients.
  void Post(uint64_t client, std::string keys) override;

  // Idle pinned connections kept per shard; more are closed when given back.
  static constexpr size_t kIdlePinnedPerShard = 64;

 private:
  static void OnConnection(uv_stream_t* server, int status);
  static void OnBeforePoll(void* worker);
  static void OnAfterIo(void* worker);
  static void OnTimeoutTick(uv_timer_t* timer);
  static void OnRetryTimer(uv_timer_t* timer);
  // Once a second: this thread's key and slot counts to the server's KeyLoadBoard.
  static void OnPublishKeyLoad(uv_timer_t* timer);
  static void OnStop(uv_async_t* async);
  static void OnInbox(uv_async_t* async);
  // Hands what other threads posted to this worker's clients (loop thread).
  void DeliverInbox();
  void CloseInbox();

  void Accept();
  void FlushAll();
  void CheckTimeouts();
  void RunDueRetries();
  // Sends `request` to host:port, preceded by ASKING when `asking`.
  void SendTo(const std::string& host, int port, SubRequest* request, bool asking);
  // Where to connect for a redirect to `host`: itself when an IP address; for a host name
  // (cluster-preferred-endpoint-type hostname) the IP the slot map learnt for it, else nullopt
  // (the caller refreshes the map and retries).
  std::optional<std::string> RedirectAddress(const std::string& host);
  // Hands `frame` to the request's session, which frees the request.
  void Finish(SubRequest* request, std::string_view frame);
  // Finish() with an error reply built from `message` ("ERR ...", "CLUSTERDOWN ...").
  void FinishWithError(SubRequest* request, std::string_view message);
  void ScheduleRetry(SubRequest* request);
  bool ReloadScript(SubRequest* request);
  void ShutDown();
  Backend* BackendFor(const std::string& host, int port, int protocol, bool readonly = false);
  // A healthy replica of map.primaries()[primary] (round robin), or null (worker_replicas.cc).
  Backend* ReplicaFor(const SlotMap& map, size_t primary, int protocol);
  // A replica connection failed: no reads go to host:port for a while.
  void MarkReplicaDown(const std::string& host, int port);
  void ForgetIdlePinned(Backend* backend);
  void CloseIdlePinned();
  void ExpireIdlePinned(uint64_t now);

  WorkerHost& server_;
  const int index_;
  ThreadMetrics* const metrics_;  // null without --metrics-port
  uv_loop_t loop_{};
  uv_tcp_t listener_{};
  std::optional<common::uv::LoopTurnHooks> turn_hooks_;  // flushes; from Run() on
  uv_timer_t timeout_timer_{};
  bool timeouts_due_ = false;  // set by the tick, judged in the check phase
  uv_timer_t retry_timer_{};
  // Counted by the sessions on this thread, published by publish_timer_; null with --hot-keys 0.
  std::unique_ptr<KeyLoad> key_load_;
  uint64_t key_load_published_ = 0;  // keys_counted() when last published
  uv_timer_t publish_timer_{};
  uv_async_t stop_async_{};
  // Invalidations posted by other threads (Post()), delivered by inbox_async_ on this loop.
  std::mutex inbox_mutex_;
  std::vector<std::pair<uint64_t, std::string>> inbox_;
  bool inbox_open_ = true;
  uv_async_t inbox_async_{};
  int listen_fd_ = -1;
  bool stopping_ = false;
  bool ran_ = false;

  std::shared_ptr<const SlotMap> map_;
  uint64_t map_version_ = 0;
  // map_->primaries()[i] for protocol 2 ([0]) and 3 ([1]); null until first used.
  std::vector<Backend*> by_index_[2];
  size_t any_backend_ = 0;  // round robin for keyless commands

  std::unordered_map<std::string, Backend*> backends_;  // BackendKey()
  // BackendKey(host, port, 2) of a replica -> until when (uv_now ms) reads skip it.
  std::unordered_map<std::string, uint64_t> replica_down_until_;
  size_t replica_turn_ = 0;
  std::vector<Backend*> pinned_all_;  // every pinned connection, in use or idle (timeouts)
  // Idle pinned connections by BackendKey(), most recently released last, with when (uv_now
  // ms) each was given back.
  std::unordered_map<std::string, std::vector<std::pair<Backend*, uint64_t>>> idle_pinned_;
  std::vector<ClientConnection*> clients_;
  std::unordered_map<uint64_t, ClientConnection*> clients_by_id_;
  common::uv::FlushList<ClientConnection> flush_clients_;
  common::uv::FlushList<Backend> flush_backends_;
  common::uv::WriteBatch write_batch_;  // the flush phase's writes, one system call
  std::vector<std::pair<uint64_t, SubRequest*>> retries_;  // due time (uv_now ms), request
  SubRequestPool free_requests_;                           // done, ready for reuse
  PendingReplyPool reply_pool_;                            // the sessions' spare PendingReplies
  std::unique_ptr<char[]> read_buffer_;
  std::unique_ptr<PubSubHub> pubsub_;
};

}  // namespace shardctl::proxy
