// The two records a client command lives in while the proxy works on it.
//
//   Session's ReplyQueue (FIFO, one PendingReply per command, in the order the client sent them)
//        ▲ filled by the session, from
//   SubRequest (one per backend request: the whole command, or one part of a split or fanned-out
//        │      one) routed by the worker; comes back to its ReplySink with a reply or an error
//
// A PendingReply keeps its address from its Push() until it is written (ReplyQueue holds
// pointers to them, taken from the worker's pool), so SubRequests can point at it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace shardctl::proxy {

class ReplyAssembly;
class ReplySink;

// When a command was read (a steady clock in ns) and the family it counts under (metrics.h), for
// its duration in /metrics. started_ns == 0: not timed (no --metrics-port).
struct CommandStamp {
  uint64_t started_ns = 0;
  uint32_t family = 0;
};

struct PendingReply {
  PendingReply();
  ~PendingReply();
  PendingReply(PendingReply&&) noexcept;
  PendingReply& operator=(PendingReply&&) noexcept;
  // As new, keeping the capacity of `bytes` (a pooled PendingReply is reused so).
  void Reset();

  std::string bytes;  // the reply, once ready (unless it went straight to the client)
  bool ready = false;
  bool close_after = false;  // QUIT, protocol errors: close once this reply is written
  bool silent = false;       // CLIENT REPLY OFF/SKIP: made as usual, never written
  bool progressed = false;   // some part of it has arrived (ReplyQueue::PlacePush())
  bool has_trailer = false;  // push frames wait to be written right after it (ReplyQueue)
  // A command answered by several parts (split by slot, fanned out) or whose reply the proxy
  // rewrites (SCAN, INFO): makes the client's reply from the parts' (reply_assembly.h).
  std::unique_ptr<ReplyAssembly> assembly;
  CommandStamp stamp;  // observed when the reply is complete (Session::Fill)
};

// How a request travels, decided by the session when it makes the request.
struct RequestMode {
  // Over the client's own connection (blocking commands, WATCH, a client that has used WAIT);
  // never redirected onto a shared one.
  bool pinned = false;
  bool read_only = false;     // a read a replica may serve (--read-from)
  bool may_block = false;     // blocks by design (BLPOP, XREAD BLOCK, WAIT): no --timeout
  bool watched = false;       // part of the client's WATCH: over the connection holding it
  bool watched_exec = false;  // EXEC under WATCH: a redirect means the watch is gone (null reply)
  bool script = false;        // a keyless EVAL/FCALL: counted in running_scripts, not blocked
  bool queue_probe = false;   // "MULTI <cmd> DISCARD": the shard's verdict on queueing <cmd>
  // CLIENT TRACKING (tracking.h): `receiver` asks CLIENT ID over the client's receiver
  // connection to the shard; `tracking_command` puts a pinned connection in tracking state.
  bool receiver = false;
  bool tracking_command = false;
  bool tracked = false;  // a keyed request of a tracking client: the shard tracks what it reads
};

// What only a few requests carry, kept out of the common request.
struct RequestExtras {
  // Sent (its reply dropped) right before the request on the same connection, with every
  // attempt: SCRIPT LOAD of a script a shard reported missing (NOSCRIPT), or WAIT's catch-up
  // write. Both may run twice: a script loads once, the catch-up write leaves nothing behind.
  std::string preamble;
  // CLIENT CACHING yes|no of a tracking client in OPTIN/OPTOUT mode, after the preamble: it
  // covers the one command that follows it on the connection, wherever that command is sent.
  std::string caching;
  bool script_reloaded = false;  // one reload per request, never a loop
  // A transaction ("MULTI ... EXEC" in the request): the replies before EXEC's (+OK, +QUEUED...)
  // are dropped; the first error among them is kept in `hint`, so that an EXECABORT caused by a
  // moved slot can be sent again to the new owner.
  size_t skip_replies = 0;
  std::string hint;
  // A queue probe's transaction (the session's count of MULTIs): a late answer for a
  // transaction that is gone (RESET) must not fail the next one.
  uint64_t probe_of = 0;
};

struct SubRequest {
  ReplySink* sink = nullptr;  // where the reply goes: the client's session
  PendingReply* pending = nullptr;
  int part = -1;        // which part of pending->assembly this answers; -1: the whole command
  std::string request;  // the RESP bytes, kept for MOVED/ASK re-sends and retries
  int slot = -1;        // -1: no key (any primary will do, unless host/port is set)
  std::string host;     // a request for one node (fan-out, SCAN, WAIT), not the slot's owner
  int port = 0;         // 0: route by slot
  int protocol = 2;     // the backend connection's protocol must match the client's
  RequestMode mode;
  // The worker's bookkeeping.
  int redirects = 0;       // MOVED/ASK followed so far
  int retries = 0;         // TRYAGAIN/CLUSTERDOWN/unreachable retries so far
  bool sequenced = false;  // admitted to its session's per-slot order (SlotSequencer)
  // Counted in ProxyStats::blocked_clients (running_scripts for a script) from its first routing
  // until it is freed.
  bool counted_blocked = false;
  std::unique_ptr<RequestExtras> extras;  // null for most requests

  RequestExtras& Extras() {
    if (!extras) extras = std::make_unique<RequestExtras>();
    return *extras;
  }
  size_t skip_replies() const { return extras ? extras->skip_replies : 0; }
  // Back to a new request's state for reuse, keeping the request buffer's capacity.
  void Reset() {
    sink = nullptr;
    pending = nullptr;
    part = -1;
    request.clear();
    slot = -1;
    host.clear();
    port = 0;
    protocol = 2;
    mode = {};
    redirects = 0;
    retries = 0;
    sequenced = false;
    counted_blocked = false;
    extras.reset();
  }
};

}  // namespace shardctl::proxy
