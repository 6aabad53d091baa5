// A client's own connections to shards ("pinned"), for the commands that hold per-connection
// state in Redis and so cannot share a connection with other clients:
//
//   blocking (BLPOP, XREAD BLOCK ...)  the connection is blocked until the reply
//   WATCH ... EXEC                     the watch lives on one connection: WATCH, the watched
//                                      slot's commands and EXEC all go over it
//   WAIT                               counts the replicas that acknowledged the writes made on
//                                      the connection it runs on
//
// Pinned connections come from the worker's pool (worker_pinned.cc) and go back to it once idle
// and no longer needed: after the blocking reply, after EXEC/UNWATCH/DISCARD (UNWATCH is sent
// first). A client that has used WAIT keeps its pinned connections until it leaves.
//
// WATCH keys must share one slot (the transaction's slot). If the watch connection fails or the
// slot moves to another shard, the watch is "broken": EXEC answers null, exactly what Redis
// answers when a watched key changed, and the client runs its optimistic-locking loop again.
#include <algorithm>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/backend.h"
#include "proxy/server.h"
#include "proxy/session.h"
#include "proxy/worker.h"

namespace shardctl::proxy {
namespace {

// One self-erasing write: its effect (SET then DEL of a key no client uses) is propagated to the
// replicas, so the shard's write offset for this connection moves past every write the shard
// had already run, which WAIT then counts. The key never exists outside the script.
std::string CatchUpWrite(int slot) {
  const std::string key = "__shardproxy:wait:{" + std::string(common::TagForSlot(slot)) + "}";
  const std::string_view command[] = {
      "EVAL", "redis.call('SET', KEYS[1], '1') redis.call('DEL', KEYS[1]) return 0", "1", key};
  std::string out;
  common::AppendCommand(out, command);
  return out;
}

// The first slot `backend` serves in `map`, -1 when none.
int FirstSlotOf(const SlotMap& map, size_t backend) {
  for (int slot = 0; slot < common::kSlotCount; ++slot) {
    if (map.PrimaryFor(slot) == static_cast<int>(backend)) return slot;
  }
  return -1;
}

}  // namespace

Backend* Session::PinnedBackend(const SubRequest& request, const std::string& host, int port) {
  Backend* backend = nullptr;
  if (request.watched && watch_ && !watch_->broken && watch_->backend != nullptr) {
    backend = watch_->backend;  // where the watch lives, even if the map now says otherwise
  }
  for (size_t i = 0; backend == nullptr && i < pinned_.size(); ++i) {
    Backend* candidate = pinned_[i];
    if (candidate->host() == host && candidate->port() == port &&
        candidate->protocol() == request.protocol && !candidate->closing()) {
      backend = candidate;
    }
  }
  if (backend == nullptr) {
    backend = worker_.AcquirePinned(host, port, request.protocol, this);
    pinned_.push_back(backend);
  }
  if (request.watched) {
    backend->needs_unwatch = true;
    if (watch_ && !watch_->broken && watch_->backend == nullptr) watch_->backend = backend;
  }
  return backend;
}

void Session::ForgetPinned(Backend* backend) {
  std::erase(pinned_, backend);
  if (watch_ && watch_->backend == backend) {
    watch_->backend = nullptr;
    BreakWatch();
  }
}

void Session::BreakWatch() {
  if (watch_) watch_->broken = true;
}

void Session::PinnedRequestDone() {
  if (!closed_) ReleaseIdlePinned();
}

void Session::ReleaseIdlePinned() {
  if (wait_mode_) return;  // each connection's write offset is what WAIT counts: keep them
  for (Backend* backend : std::vector<Backend*>(pinned_)) {
    if (watch_ && watch_->backend == backend) continue;
    if (backend->closing() || backend->HasRequests()) continue;
    std::erase(pinned_, backend);
    worker_.ReleasePinned(backend);
  }
}

void Session::ClosePinned() {
  watch_.reset();
  for (SubRequest* request : barrier_requests_) {
    delete request;
    --inflight_;
  }
  barrier_requests_.clear();
  barrier_pending_ = nullptr;
  // Idle ones go back to the pool; one still blocked in a command is closed, which is how
  // Redis learns the client is gone.
  std::vector<Backend*> pinned;
  pinned.swap(pinned_);
  for (Backend* backend : pinned) worker_.ReleasePinned(backend);
}

// ---- WATCH / UNWATCH ----

void Session::HandleWatch(std::string_view frame, std::span<const std::string_view> args,
                          const CommandInfo& info) {
  auto slot = RequestSlot(info, args);
  if (!slot) return ReplyError(slot.error().message());
  if (watch_ && watch_->slot != *slot) {
    // A transaction runs on one shard: its watched keys must share the slot of its keys.
    return ReplyError("CROSSSLOT Keys in request don't hash to the same slot");
  }
  if (!watch_) watch_.emplace(Watch{*slot});
  if (watch_->broken) return Reply("+OK\r\n");  // EXEC will answer null whatever is watched
  Forward(frame, *slot, /*pinned=*/true);       // NewSubRequest() marks it watched
}

void Session::HandleUnwatch(std::string_view frame) {
  if (!watch_) return Reply("+OK\r\n");
  if (watch_->broken) {
    EndWatch();
    return Reply("+OK\r\n");
  }
  Forward(frame, watch_->slot, /*pinned=*/true);  // over the watch's connection: Redis says +OK
  watch_.reset();
}

void Session::EndWatch() {
  watch_.reset();
  ReleaseIdlePinned();  // sends UNWATCH before pooling the connection
}

// ---- WAIT ----

// WAIT numreplicas timeout: sent over this client's pinned connections, the reply is the fewest
// replicas any of those shards counted. The first WAIT after keyed commands that went over
// shared connections cannot know which shards they reached, so it goes to every primary,
// preceded on each by CatchUpWrite(), and only once the replies before it are in (so those
// writes have run). From then on the client's keyed commands stay on its pinned connections.
void Session::ForwardWait(std::string_view frame, std::span<const std::string_view> args) {
  if (args.size() != 3) return ReplyError(WrongArgCountError(args[0]));
  const bool catch_up = shared_keyed_;
  wait_mode_ = true;
  shared_keyed_ = false;
  struct Target {
    std::string host;
    int port = 0;
    std::string preamble;
  };
  std::vector<Target> targets;
  if (!catch_up) {
    for (Backend* backend : pinned_) {
      if (backend->protocol() == protocol_ && !backend->closing()) {
        targets.push_back({backend->host(), backend->port(), {}});
      }
    }
  }
  if (targets.empty()) {
    // Nothing pinned yet: every primary. A fresh connection has written nothing, so a shard
    // answers how many replicas it has in sync, which is what Redis answers such a client.
    const SlotMap& map = worker_.CurrentMap();
    for (size_t i = 0; i < map.primaries().size(); ++i) {
      const int slot = FirstSlotOf(map, i);
      if (slot < 0) continue;
      targets.push_back(
          {map.primaries()[i].host, map.primaries()[i].port, catch_up ? CatchUpWrite(slot) : ""});
    }
  }
  if (targets.empty()) return ReplyError("CLUSTERDOWN Hash slot not served");
  PendingReply& pending = pending_.emplace_back();
  pending.fanout = FanOutMerge::kMinInteger;
  pending.part_replies.resize(targets.size());
  pending.parts_left = targets.size();
  std::vector<SubRequest*> requests;
  for (size_t i = 0; i < targets.size(); ++i) {
    SubRequest* request = NewSubRequest(pending, -1, /*pinned=*/true);
    request->part = static_cast<int>(i);
    request->request.assign(frame);
    request->host = std::move(targets[i].host);
    request->port = targets[i].port;
    request->preamble = std::move(targets[i].preamble);
    request->may_block = true;  // WAIT has its own timeout (0: forever)
    requests.push_back(request);
  }
  if (catch_up && &pending != &pending_.front()) {
    barrier_pending_ = &pending;
    barrier_requests_ = std::move(requests);
    return;
  }
  for (SubRequest* request : requests) worker_.Route(request);
}

// The replies before a held WAIT are all in: its writes have run on the shards.
void Session::RunWaitBarrier() {
  barrier_pending_ = nullptr;
  std::vector<SubRequest*> requests;
  requests.swap(barrier_requests_);
  for (SubRequest* request : requests) worker_.Route(request);
}

}  // namespace shardctl::proxy
