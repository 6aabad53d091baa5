// The narrow interfaces between a client's Session and the worker thread it runs on, in both
// directions (as Envoy's redis proxy separates its session from its router):
//
//   Session ──RequestRouter──▶ Worker     "send this request", "the slot map", "a pinned
//   connection" Session ◀──ReplySink────── Worker     "here is its reply", "may it go now?"
//   (per-slot order)
//
// The worker implements RequestRouter over libuv and real shard connections; unit tests implement
// it with a fake that records what was routed, so session logic is tested without sockets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/commands/request.h"
#include "proxy/routing/slot_map.h"

namespace shardctl::proxy {

class SubscriptionHub;
class KeyLoad;
class PendingReplyPool;

// A client's own connection to one shard (a pinned Backend), for commands that hold connection
// state in Redis: a blocked BLPOP, a WATCH, the write offset WAIT counts.
class PinnedLink {
 public:
  virtual ~PinnedLink() = default;
  virtual const std::string& host() const = 0;
  virtual int port() const = 0;
  virtual int protocol() const = 0;
  virtual bool closing() const = 0;
  // True while a request waits on it (replies that are dropped do not count).
  virtual bool HasRequests() const = 0;
  // A WATCH went over it: the pool sends UNWATCH before another client gets it.
  virtual void MarkWatched() = 0;
  // Queues `command` before whatever is sent next; its reply is dropped.
  virtual void SendUnanswered(std::string_view command) = 0;

  // Put in its client's CLIENT TRACKING state (tracking.h): such a connection is closed, never
  // pooled, once its client lets it go.
  bool tracking = false;
};

// Where a SubRequest's reply goes (the Session that made it). Loop thread only.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  // The request's reply frame (or an error frame the proxy made). The sink takes the request
  // back and frees it.
  virtual void OnReply(SubRequest* request, std::string_view frame) = 0;
  // The client has gone: a retry is not worth routing.
  virtual bool Gone() const = 0;
  // Per-slot order (SlotSequencer): may `request` go to `connection` now? If not, the sink holds
  // it and routes it again itself once the slot's earlier requests are done.
  virtual bool Admit(SubRequest* request, const void* connection) = 0;
  // A sequenced request of `slot` waits for a retry: hold what comes next for the slot.
  virtual void HoldSlot(int slot) = 0;
  // The connection a pinned `request` for host:port goes over (the one holding the client's
  // WATCH for a watched request, else the client's own connection to host:port).
  virtual PinnedLink* PinnedLinkFor(const SubRequest& request, const std::string& host,
                                    int port) = 0;
  // A pinned connection of this client failed or closed.
  virtual void ForgetPinned(PinnedLink* link) = 0;
  // The client's WATCH can no longer hold (its slot moved): EXEC will answer null.
  virtual void BreakWatch() = 0;
  // A push frame (an invalidation, CLIENT TRACKING) arrived on one of its pinned connections.
  virtual void OnPinnedPush(PinnedLink* /*link*/, std::string_view /*push*/) {}
};

// What a session asks of the worker thread it runs on. Loop thread only.
class RequestRouter {
 public:
  virtual ~RequestRouter() = default;
  // The slot map requests are routed by (re-read when the refresher published a new one).
  virtual const SlotMap& CurrentMap() = 0;
  // A request to fill in and Route(): reused from this thread's free list, so a warm proxy
  // allocates nothing per request.
  virtual SubRequest* NewRequest() = 0;
  // Takes back a request that is done (answered, or never sent).
  virtual void FreeRequest(SubRequest* request) = 0;
  // This thread's spare PendingReplies, for the sessions' reply queues (reply_queue.h); null:
  // each queue allocates its own.
  virtual PendingReplyPool* reply_pool() { return nullptr; }
  // Sends `request` to its node (request->host:port), or to the primary (or, for a read, a
  // replica) serving its slot; the reply comes back to request->sink.
  virtual void Route(SubRequest* request) = 0;
  // A connection of the client's own to host:port, from the worker's pool or new.
  virtual PinnedLink* AcquirePinned(const std::string& host, int port, int protocol,
                                    ReplySink* owner) = 0;
  // Gives a pinned connection back (pooled when clean and idle, else closed).
  virtual void ReleasePinned(PinnedLink* link) = 0;
  // This thread's pub/sub subscriptions to the cluster.
  virtual SubscriptionHub& subscriptions() = 0;
  // The loop's clock, in milliseconds.
  virtual uint64_t NowMs() = 0;
  // This thread's key and slot counters (key_load.h), fed by the sessions for every keyed
  // command they route; null with --hot-keys 0.
  virtual KeyLoad* key_load() { return nullptr; }
  // Hands `keys` (an invalidation) to proxy client `client`, on whatever worker serves it
  // (client_directory.h); false when no such client is connected.
  virtual bool PostInvalidation(uint64_t /*client*/, std::string /*keys*/) { return false; }
  // Whether proxy client `client` is connected (CLIENT TRACKING ... REDIRECT checks it).
  virtual bool ClientExists(uint64_t /*client*/) { return false; }
};

}  // namespace shardctl::proxy
