#include "proxy/net/worker.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/endpoint.h"
#include "common/resp.h"
#include "common/uv/handle.h"
#include "proxy/commands/command_table.h"
#include "proxy/merge/frames.h"
#include "proxy/merge/redirect.h"
#include "proxy/net/pubsub.h"
#include "proxy/net/worker_host.h"
#include "proxy/services/stats.h"

namespace shardctl::proxy {
namespace {

constexpr size_t kReadBufferSize = 64 * 1024;
constexpr int kMaxRedirects = 5;
// MOVED hops followed at once; past them the nodes disagree for a moment (a slot handed over
// atomically bounces between old and new owner until both know): wait for the refreshed map.
constexpr int kImmediateMovedHops = 2;
constexpr int kMaxRetries = 6;  // 10+20+40+80+160+200 ms: ~0.5 s, then the client gets it
constexpr uint64_t kRetryBaseMs = 10;
constexpr uint64_t kRetryMaxMs = 200;
constexpr uint64_t kTimeoutTickMs = 100;
constexpr uint64_t kPublishKeyLoadMs = 1000;

template <typename T>
T* Owner(void* data) {
  return static_cast<T*>(data);
}

}  // namespace

Worker::Worker(WorkerHost& server, int index)
    : server_(server),
      index_(index),
      metrics_(server.metrics(index)),
      read_buffer_(new char[kReadBufferSize]) {
  if (server.key_load_board() != nullptr) {
    key_load_ = std::make_unique<KeyLoad>(server.key_load_board()->capacity(),
                                          server.options().hot_keys_sample);
  }
  uv_loop_init(&loop_);
  // Initialised here so Stop() works from the moment the worker exists.
  uv_async_init(&loop_, &stop_async_, &Worker::OnStop);
  stop_async_.data = this;
  uv_async_init(&loop_, &inbox_async_, &Worker::OnInbox);
  inbox_async_.data = this;
}

Worker::~Worker() {
  if (!ran_) {
    // Run() never adopted the socket or the handles.
    if (listen_fd_ >= 0) close(listen_fd_);
    uv_close(common::uv::AsHandle(&stop_async_), nullptr);
    CloseInbox();
    uv_run(&loop_, UV_RUN_DEFAULT);
  }
  (void)common::uv::CloseLoop(&loop_);
}

common::Status Worker::Listen() {
  const Endpoint& endpoint = server_.options().listen;
  sockaddr_storage address{};
  if (uv_ip4_addr(endpoint.host.c_str(), endpoint.port, reinterpret_cast<sockaddr_in*>(&address)) !=
          0 &&
      uv_ip6_addr(endpoint.host.c_str(), endpoint.port,
                  reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
    return common::Error("--listen " + endpoint.ToString() + ": not an IP address");
  }
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return common::Error(std::string("socket: ") + std::strerror(errno));
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  // Every worker binds the same address; the kernel spreads new connections over them.
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
  const socklen_t length =
      address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd, 511) != 0) {
    const int error = errno;
    close(fd);
    return common::Error("cannot listen on " + endpoint.ToString() + ": " + std::strerror(error) +
                         (error == EADDRINUSE ? " (another process has it; pick another --listen "
                                                "port or stop that process)"
                                              : ""));
  }
  listen_fd_ = fd;
  return common::Ok();
}

void Worker::Run() {
  ran_ = true;
  uv_tcp_init(&loop_, &listener_);
  listener_.data = this;
  uv_tcp_open(&listener_, listen_fd_);
  uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 511, &Worker::OnConnection);
  turn_hooks_.emplace(&loop_, this, &Worker::OnBeforePoll, &Worker::OnAfterIo);
  uv_timer_init(&loop_, &timeout_timer_);
  timeout_timer_.data = this;
  uv_timer_start(&timeout_timer_, &Worker::OnTimeoutTick, kTimeoutTickMs, kTimeoutTickMs);
  uv_timer_init(&loop_, &retry_timer_);
  retry_timer_.data = this;
  uv_timer_init(&loop_, &publish_timer_);
  publish_timer_.data = this;
  if (key_load_) {
    uv_timer_start(&publish_timer_, &Worker::OnPublishKeyLoad, kPublishKeyLoadMs,
                   kPublishKeyLoadMs);
  }
  uv_run(&loop_, UV_RUN_DEFAULT);
}

void Worker::Stop() { uv_async_send(&stop_async_); }

SubscriptionHub& Worker::subscriptions() {
  if (!pubsub_) pubsub_ = std::make_unique<PubSubHub>(*this, *this);
  return *pubsub_;
}

const AuthConfig& Worker::auth() const { return server_.auth(); }

std::shared_ptr<const common::TlsContext> Worker::shard_tls() const { return server_.shard_tls(); }

ProxyStats& Worker::stats() { return server_.stats(); }

void Worker::RequestMapRefresh() { server_.topology().RequestRefresh(); }

void Worker::OnStop(uv_async_t* async) { Owner<Worker>(async->data)->ShutDown(); }

// ---- invalidations for this worker's clients (client_directory.h) ----

void Worker::Post(uint64_t client, std::string keys) {
  const std::lock_guard lock(inbox_mutex_);
  if (!inbox_open_) return;
  inbox_.emplace_back(client, std::move(keys));
  uv_async_send(&inbox_async_);
}

void Worker::OnInbox(uv_async_t* async) { Owner<Worker>(async->data)->DeliverInbox(); }

void Worker::DeliverInbox() {
  std::vector<std::pair<uint64_t, std::string>> posted;
  {
    const std::lock_guard lock(inbox_mutex_);
    posted.swap(inbox_);
  }
  for (const auto& [client, keys] : posted) {
    auto found = clients_by_id_.find(client);
    if (found != clients_by_id_.end()) found->second->session().DeliverInvalidation(keys);
  }
}

void Worker::CloseInbox() {
  {
    const std::lock_guard lock(inbox_mutex_);
    inbox_open_ = false;
    inbox_.clear();
  }
  common::uv::CloseIfOpen(common::uv::AsHandle(&inbox_async_));
}

bool Worker::PostInvalidation(uint64_t client, std::string keys) {
  return server_.client_directory().Post(client, std::move(keys));
}

bool Worker::ClientExists(uint64_t client) { return server_.client_directory().Contains(client); }

void Worker::OnBackendPush(Backend* backend, std::string_view frame) {
  // A push on a pinned connection idle in the pool (its client turned tracking off) has nobody.
  if (backend->pinned_for != nullptr) backend->pinned_for->OnPinnedPush(backend, frame);
}

void Worker::ShutDown() {
  stopping_ = true;
  // Requests waiting for a retry end now, with an error.
  auto retries = std::move(retries_);
  retries_.clear();
  for (auto& [due, request] : retries) FinishWithError(request, "ERR shardproxy is shutting down");
  for (ClientConnection* client : std::vector<ClientConnection*>(clients_)) client->Close();
  CloseIdlePinned();
  CloseInbox();
  if (pubsub_) pubsub_->ShutDown();
  std::vector<Backend*> backends;
  for (auto& [key, backend] : backends_) backends.push_back(backend);
  for (Backend* backend : backends) backend->Fail("closed: shardproxy is shutting down");
  if (turn_hooks_) turn_hooks_->Close();
  for (uv_handle_t* handle :
       {common::uv::AsHandle(&listener_), common::uv::AsHandle(&timeout_timer_),
        common::uv::AsHandle(&retry_timer_), common::uv::AsHandle(&publish_timer_),
        common::uv::AsHandle(&stop_async_)}) {
    common::uv::CloseIfOpen(handle);
  }
}

void Worker::OnConnection(uv_stream_t* server, int status) {
  if (status == 0) Owner<Worker>(server->data)->Accept();
}

void Worker::Accept() {
  auto* client = new ClientConnection(*this, *this, server_, server_.NextClientId(), index_,
                                      server_.client_tls().get());
  if (client->Accept(common::uv::AsStream(&listener_)) != 0) {
    client->Close();  // deleted in its close callback
    return;
  }
  clients_.push_back(client);
  const uint64_t id = client->session().id();
  clients_by_id_.emplace(id, client);
  server_.client_directory().Add(id, this);
  server_.stats().connections_received.fetch_add(1, std::memory_order_relaxed);
  if (!server_.AdmitClient()) {
    server_.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
    client->Refuse("ERR max number of clients reached");
    return;
  }
  client->Start();
}

uv_buf_t Worker::ReadBuffer() {
  return uv_buf_init(read_buffer_.get(), static_cast<unsigned>(kReadBufferSize));
}

// ---- routing ----

const SlotMap& Worker::CurrentMap() {
  const uint64_t version = server_.topology().version();
  if (version != map_version_ || !map_) {
    map_ = server_.topology().Snapshot();
    map_version_ = version;
    for (auto& cache : by_index_) cache.assign(map_->primaries().size(), nullptr);
  }
  return *map_;
}

Backend* Worker::BackendFor(const std::string& host, int port, int protocol, bool readonly) {
  std::string key = BackendKey(host, port, protocol, readonly);
  auto found = backends_.find(key);
  if (found != backends_.end()) return found->second;
  auto* backend = new Backend(*this, host, port, protocol, key, readonly);
  backends_.emplace(std::move(key), backend);
  backend->Connect();
  return backend;
}

SubRequest* Worker::NewRequest() { return free_requests_.Take(); }

void Worker::FreeRequest(SubRequest* request) {
  if (request->counted_blocked) {
    (request->mode.script ? stats().running_scripts : stats().blocked_clients)
        .fetch_sub(1, std::memory_order_relaxed);
  }
  free_requests_.Give(request);
}

void Worker::Route(SubRequest* request) {
  if (stopping_) return FinishWithError(request, "ERR shardproxy is shutting down");
  // A retry of a client that has gone: nobody waits for it (and a blocking command would open a
  // pinned connection for a closed session).
  ReplySink* sink = request->sink;
  if (sink->Gone()) return FinishWithError(request, "ERR client gone");
  // WAIT goes to several shards; like Redis, it is one blocked client.
  if (request->mode.may_block && request->part <= 0 && !request->counted_blocked) {
    request->counted_blocked = true;
    (request->mode.script ? stats().running_scripts : stats().blocked_clients)
        .fetch_add(1, std::memory_order_relaxed);
  }
  if (request->port != 0) {
    if (!request->mode.pinned) return SendTo(request->host, request->port, request, false);
    // Pinned links are the Backends AcquirePinned() made.
    auto* pinned =
        static_cast<Backend*>(sink->PinnedLinkFor(*request, request->host, request->port));
    return pinned->Send(request, /*asking=*/false);
  }
  const SlotMap& map = CurrentMap();
  int index = SlotMap::kNoNode;
  if (request->slot >= 0) {
    index = map.PrimaryFor(request->slot);
  } else if (!map.primaries().empty()) {
    index = static_cast<int>(any_backend_++ % map.primaries().size());
  }
  if (index == SlotMap::kNoNode) {
    if (request->retries < kMaxRetries) return ScheduleRetry(request);
    return FinishWithError(request, "CLUSTERDOWN Hash slot not served");
  }
  const size_t at = static_cast<size_t>(index);
  if (request->mode.read_only) {
    if (Backend* replica = ReplicaFor(map, at, request->protocol)) {
      if (!request->sequenced && !sink->Admit(request, replica)) return;
      server_.stats().replica_reads.fetch_add(1, std::memory_order_relaxed);
      return replica->Send(request, /*asking=*/false);
    }
    server_.stats().replica_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  if (request->mode.pinned) {
    const common::NodeAddress& address = map.primaries()[at];
    auto* pinned = static_cast<Backend*>(sink->PinnedLinkFor(*request, address.host, address.port));
    if (!request->sequenced && !sink->Admit(request, pinned)) return;
    return pinned->Send(request, /*asking=*/false);
  }
  Backend*& cached = by_index_[request->protocol >= 3 ? 1 : 0][at];
  if (cached == nullptr) {
    const common::NodeAddress& address = map.primaries()[at];
    cached = BackendFor(address.host, address.port, request->protocol);
  }
  // Retries were admitted when first routed; a held request is routed again by LeaveSlot().
  if (request->slot >= 0 && !request->sequenced && !sink->Admit(request, cached)) {
    return;
  }
  cached->Send(request, /*asking=*/false);
}

std::optional<std::string> Worker::RedirectAddress(const std::string& host) {
  if (common::IsIpAddress(host)) return host;
  return CurrentMap().AddressOfName(host);
}

void Worker::SendTo(const std::string& host, int port, SubRequest* request, bool asking) {
  if (stopping_) return FinishWithError(request, "ERR shardproxy is shutting down");
  BackendFor(host, port, request->protocol)->Send(request, asking);
}

void Worker::OnBackendReply(SubRequest* request, std::string_view frame) {
  // Only error replies can be redirects: one byte decides for every other reply.
  if (frame[0] != '-') return Finish(request, frame);
  // A transaction aborted because its commands met a redirect: act on that redirect instead.
  std::string hint;
  if (request->extras) {
    hint = std::move(request->extras->hint);
    request->extras->hint.clear();
  }
  const bool aborted_by_hint = request->skip_replies() > 0 && frame.starts_with("-EXECABORT") &&
                               ClassifyReply(hint).action != ReplyAction::kDeliver;
  // Not a redirect: a queued command the shard refused (OOM, arity) while the client was told
  // QUEUED. Redis' words for a transaction refused at EXEC name that reason.
  if (!aborted_by_hint && !hint.empty() && frame.starts_with("-EXECABORT")) {
    return Finish(request, "-EXECABORT Transaction discarded because of: " + hint.substr(1));
  }
  if (!aborted_by_hint) hint.clear();
  const Redirect redirect = ClassifyReply(aborted_by_hint ? std::string_view(hint) : frame);
  // A pinned command must not be redirected onto a shared connection: wait for the new map
  // and route it again over a pinned one. A watched one has lost its watch: the slot moved.
  if (request->mode.pinned && redirect.action != ReplyAction::kDeliver) {
    server_.topology().RequestRefresh();
    if (request->mode.watched) {
      request->sink->BreakWatch();
      if (request->mode.watched_exec) return Finish(request, NullArray(request->protocol));
    }
    if (request->retries < kMaxRetries) return ScheduleRetry(request);
    return Finish(request, frame);
  }
  ProxyStats& stats = server_.stats();
  switch (redirect.action) {
    case ReplyAction::kDeliver:
      if (frame.starts_with("-NOSCRIPT") && ReloadScript(request)) return;
      break;
    case ReplyAction::kMoved:
      server_.topology().RequestRefresh();
      stats.moved.fetch_add(1, std::memory_order_relaxed);
      if (++request->redirects <= kImmediateMovedHops) {
        if (auto host = RedirectAddress(redirect.host)) {
          return SendTo(*host, redirect.port, request, /*asking=*/false);
        }
      }
      if (request->retries >= kMaxRetries) break;
      return ScheduleRetry(request);
    case ReplyAction::kAsk:
      // ASKING covers one command only: a transaction waits for the migration instead.
      if (request->skip_replies() > 0) {
        if (request->retries >= kMaxRetries) break;
        return ScheduleRetry(request);
      }
      if (++request->redirects > kMaxRedirects) break;
      stats.ask.fetch_add(1, std::memory_order_relaxed);
      if (auto host = RedirectAddress(redirect.host)) {
        return SendTo(*host, redirect.port, request, /*asking=*/true);
      }
      // A name the map does not know yet: learn it, then route again (the slot's owner knows).
      server_.topology().RequestRefresh();
      if (request->retries >= kMaxRetries) break;
      return ScheduleRetry(request);
    case ReplyAction::kRetry:
      server_.topology().RequestRefresh();
      if (request->retries >= kMaxRetries) break;
      return ScheduleRetry(request);
  }
  Finish(request, frame);
}

// EVALSHA met a shard without the script: if it was loaded through the proxy, load it there
// (on the same connection, just before) and run the EVALSHA again, once.
bool Worker::ReloadScript(SubRequest* request) {
  if (request->extras && request->extras->script_reloaded) return false;
  auto args = common::ParseCommandArgs(request->request);
  if (!args || args->size() < 2) return false;
  const CommandInfo& info = LookupCommand((*args)[0]);
  if (info.name != "EVALSHA" && info.name != "EVALSHA_RO") return false;
  auto body = server_.ScriptBody((*args)[1]);
  if (!body) return false;
  const std::string_view load[] = {"SCRIPT", "LOAD", *body};
  RequestExtras& extras = request->Extras();
  common::AppendCommand(extras.preamble, load);
  extras.script_reloaded = true;
  server_.stats().script_reloads.fetch_add(1, std::memory_order_relaxed);
  Route(request);
  return true;
}

void Worker::OnBackendFailure(SubRequest* request, std::string_view error, bool never_sent) {
  // A read may run twice; it then goes to another replica or the primary (Route()).
  if ((never_sent || request->mode.read_only) && !stopping_ && request->retries < kMaxRetries) {
    return ScheduleRetry(request);
  }
  FinishWithError(request, "ERR shardproxy: " + std::string(error));
}

void Worker::Finish(SubRequest* request, std::string_view frame) {
  request->sink->OnReply(request, frame);
}

void Worker::FinishWithError(SubRequest* request, std::string_view message) {
  server_.stats().error_replies.fetch_add(1, std::memory_order_relaxed);
  std::string frame;
  common::AppendError(frame, message);
  Finish(request, frame);
}

// ---- retries and timeouts ----

void Worker::ScheduleRetry(SubRequest* request) {
  if (stopping_) return FinishWithError(request, "ERR shardproxy is shutting down");
  server_.stats().retries.fetch_add(1, std::memory_order_relaxed);
  if (request->sequenced) request->sink->HoldSlot(request->slot);
  const uint64_t delay = std::min(kRetryBaseMs << request->retries, kRetryMaxMs);
  ++request->retries;
  const uint64_t due = uv_now(&loop_) + delay;
  retries_.emplace_back(due, request);
  const uint64_t next = std::min_element(retries_.begin(), retries_.end())->first;
  uv_timer_start(&retry_timer_, &Worker::OnRetryTimer, next - std::min(next, uv_now(&loop_)), 0);
}

void Worker::OnRetryTimer(uv_timer_t* timer) { Owner<Worker>(timer->data)->RunDueRetries(); }

void Worker::RunDueRetries() {
  const uint64_t now = uv_now(&loop_);
  std::vector<SubRequest*> due;
  std::erase_if(retries_, [&](const auto& entry) {
    if (entry.first > now) return false;
    due.push_back(entry.second);
    return true;
  });
  for (SubRequest* request : due) Route(request);
  if (!retries_.empty() && !stopping_) {
    const uint64_t next = std::min_element(retries_.begin(), retries_.end())->first;
    uv_timer_start(&retry_timer_, &Worker::OnRetryTimer, next - std::min(next, now), 0);
  }
}

void Worker::OnPublishKeyLoad(uv_timer_t* timer) {
  Worker& worker = *Owner<Worker>(timer->data);
  KeyLoadBoard* board = worker.server_.key_load_board();
  // Nothing counted since the last one: the published snapshot is still true.
  if (board == nullptr || worker.key_load_->keys_counted() == worker.key_load_published_) return;
  worker.key_load_published_ = worker.key_load_->keys_counted();
  board->Publish(worker.index_, worker.key_load_->Snapshot());
}

// The tick runs before this loop turn reads the sockets: the timeouts are judged in the check
// phase, after the replies that have come in are read (a busy proxy must not blame the shards).
void Worker::OnTimeoutTick(uv_timer_t* timer) { Owner<Worker>(timer->data)->timeouts_due_ = true; }

void Worker::CheckTimeouts() {
  uv_update_time(&loop_);
  const uint64_t now = uv_now(&loop_);
  const auto timeout = static_cast<uint64_t>(server_.options().backend_timeout.count());
  std::vector<Backend*> backends;
  for (auto& [key, backend] : backends_) backends.push_back(backend);
  backends.insert(backends.end(), pinned_all_.begin(), pinned_all_.end());
  for (Backend* backend : backends) backend->CheckTimeout(now, timeout);
  ExpireIdlePinned(now);
}

// ---- flushing ----

void Worker::ScheduleFlush(ClientConnection* connection) {
  if (!connection->closed()) flush_clients_.Mark(connection);
}

void Worker::ScheduleFlush(Backend* backend) {
  if (!backend->closing()) flush_backends_.Mark(backend);
}

void Worker::OnBeforePoll(void* worker) { Owner<Worker>(worker)->FlushAll(); }
void Worker::OnAfterIo(void* data) {
  Worker* worker = Owner<Worker>(data);
  worker->FlushAll();
  if (worker->timeouts_due_) {
    worker->timeouts_due_ = false;
    worker->CheckTimeouts();
  }
}

void Worker::FlushAll() {
  // Backends first: requests reach the shards before we spend time writing replies. Flushing
  // can schedule more (a failed backend's requests retried elsewhere), hence the loop.
  for (int round = 0; round < 4 && !(flush_backends_.empty() && flush_clients_.empty()); ++round) {
    if (write_batch_.available()) {
      flush_backends_.Queue(write_batch_);
      flush_clients_.Queue(write_batch_);
      write_batch_.Submit();
    }
    flush_backends_.Run();
    flush_clients_.Run();
  }
}

void Worker::OnConnectionClosed(ClientConnection* connection, bool admitted) {
  std::erase(clients_, connection);
  const uint64_t id = connection->session().id();
  server_.client_directory().Remove(id);
  clients_by_id_.erase(id);
  flush_clients_.Forget(connection);
  if (admitted) server_.ReleaseClient();
}

void Worker::OnBackendClosing(Backend* backend, bool failure) {
  if (failure) {
    if (backend->readonly()) MarkReplicaDown(backend->host(), backend->port());
    server_.stats().backend_failures.fetch_add(1, std::memory_order_relaxed);
    server_.CountBackendError(backend->host(), backend->port());
    server_.topology().RequestRefresh();
  }
  if (backend->pinned_for) backend->pinned_for->ForgetPinned(backend);
  if (backend->pinned) {
    std::erase(pinned_all_, backend);
    if (!backend->pinned_for) ForgetIdlePinned(backend);
    flush_backends_.Forget(backend);
    return;
  }
  auto found = backends_.find(backend->key());
  if (found != backends_.end() && found->second == backend) backends_.erase(found);
  for (auto& cache : by_index_)
    std::replace(cache.begin(), cache.end(), backend, static_cast<Backend*>(nullptr));
  flush_backends_.Forget(backend);
}

}  // namespace shardctl::proxy
