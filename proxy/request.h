// The two records a client command lives in while the proxy works on it.
//
//   Session::pending_ (FIFO, one PendingReply per command, in the order the client sent them)
//        ▲ filled by
//   SubRequest (one per backend request: the whole command, or one slot's part of a split one)
//        │ queued on a Backend; comes back with a reply frame, a redirect, or an error
//
// A PendingReply lives in a std::deque, whose elements keep their address while others are
// pushed at the back or popped at the front, so SubRequests can point at it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/fanout.h"
#include "proxy/split.h"

namespace shardctl::proxy {

class Session;

struct PendingReply {
  std::string bytes;  // the reply, once ready (unless it went straight to the client)
  bool ready = false;
  bool close_after = false;  // QUIT, protocol errors: close once this reply is written
  // Split commands: the parts' replies, merged when the last one arrives.
  std::unique_ptr<SplitRequest> split;
  // Fan-out commands: how the shards' replies are merged (split is null then).
  std::optional<FanOutMerge> fanout;
  size_t rotate = 0;        // kAnyNonNull starts looking here
  std::string script_body;  // SCRIPT LOAD: remembered under the sha the shards answer
  std::string info_text;    // INFO: the proxy's own sections, before the cluster's keyspace
  std::vector<std::string> shard_names;  // INFO: "host:port" of each part
  std::vector<std::string> part_replies;
  size_t parts_left = 0;
};

struct SubRequest {
  Session* session = nullptr;
  PendingReply* pending = nullptr;
  int part = -1;        // index into pending->split->parts; -1 for a whole command
  std::string request;  // the RESP bytes, kept for MOVED/ASK re-sends and retries
  int slot = -1;
  std::string host;  // fan-out and SCAN: this primary, not the slot's owner
  int port = 0;      // 0: route by slot
  // Sent (reply dropped) right before the request on the same connection: SCRIPT LOAD of a
  // script a shard reported missing (NOSCRIPT). Cleared once sent.
  std::string preamble;
  bool script_reloaded = false;  // one reload per request, never a loop
  // A transaction ("MULTI ... EXEC" in `request`): the replies before EXEC's (+OK, +QUEUED...)
  // are dropped; the first redirect or retry error among them is kept in `hint`, so that an
  // EXECABORT caused by a moved slot can be sent again to the new owner.
  size_t skip_replies = 0;
  // Over the session's own connection to the shard instead of the shared one (blocking commands,
  // WATCH, a client that has used WAIT); never redirected onto a shared connection.
  bool pinned = false;
  bool read_only = false;     // a read a replica may serve (--read-from)
  bool may_block = false;     // blocks by design (BLPOP, XREAD BLOCK, WAIT): no --timeout
  bool watched = false;       // part of the session's WATCH: over the connection holding it
  bool watched_exec = false;  // EXEC under WATCH: a redirect means the watch is gone (null reply)
  std::string hint;
  int scan_shard = -1;     // SCAN: the shard index, for rewriting the reply's cursor
  size_t scan_shards = 0;  // -1: no key (any shard will do)
  int protocol = 2;        // the backend connection's protocol must match the client's
  int redirects = 0;       // MOVED/ASK followed so far
  int retries = 0;         // TRYAGAIN/CLUSTERDOWN/unreachable retries so far
  bool sequenced = false;  // counted in its session's per-slot flight (Session::EnterSlot)
};

}  // namespace shardctl::proxy
