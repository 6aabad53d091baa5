// PinnedLinks: one client's own connections to shards ("pinned"), for the commands that hold
// per-connection state in Redis and so cannot share a connection with other clients:
//
//   blocking (BLPOP, XREAD BLOCK ...)  the connection is blocked until the reply
//   WATCH ... EXEC                     the watch lives on one connection: WATCH, the watched
//                                      slot's commands and EXEC all go over it
//   WAIT                               counts the replicas that acknowledged the writes made on
//                                      the connection it runs on
//   CLIENT TRACKING                    a shard tracks the keys read on one connection; with
//                                      REDIRECT it sends their invalidations to a "receiver",
//                                      one more connection of the client's (tracking.h)
//
// Connections come from the worker's pool (RequestRouter::AcquirePinned) and go back once idle
// and no longer needed: after the blocking reply, after EXEC/UNWATCH/DISCARD (the pool sends
// UNWATCH first). A client that has used WAIT keeps them until it leaves.
//
// WATCH keys must share one slot. If the watch connection fails or the slot moves, the watch is
// "broken": EXEC answers null, exactly what Redis answers when a watched key changed, and the
// client runs its optimistic-locking loop again.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/routing/routing.h"

namespace shardctl::proxy {

class PinnedLinks {
 public:
  struct Watch {
    int slot = -1;               // every watched key hashes here
    PinnedLink* link = nullptr;  // the connection WATCH went over, once routed
    bool broken = false;         // the connection failed or the slot moved: EXEC answers null
  };

  PinnedLinks(RequestRouter& router, ReplySink* owner) : router_(router), owner_(owner) {}
  PinnedLinks(const PinnedLinks&) = delete;
  PinnedLinks& operator=(const PinnedLinks&) = delete;

  // The connection a pinned request goes over: the one holding the WATCH for a watched request
  // (even if the map now says otherwise), else this client's connection to host:port, taken from
  // the pool on first use.
  PinnedLink* For(const SubRequest& request, const std::string& host, int port);
  // A connection failed or closed: forgotten, and a WATCH on it is broken.
  void Forget(PinnedLink* link);
  // Connections this client no longer needs (idle, not holding its WATCH) go back to the pool;
  // in WAIT mode they are kept.
  void ReleaseIdle();
  // The client left: every connection goes back (one still blocked is closed by the pool, which
  // is how Redis learns the client is gone). The WATCH ends.
  void ReleaseAll();

  // WATCH: started by the first WATCH, ended by EXEC, DISCARD, UNWATCH or RESET.
  std::optional<Watch>& watch() { return watch_; }
  bool watched_slot(int slot) const { return watch_ && !watch_->broken && watch_->slot == slot; }
  void BreakWatch() {
    if (watch_) watch_->broken = true;
  }
  // Ends the WATCH and gives back what is idle (the pool sends UNWATCH first).
  void EndWatch();

  // WAIT counts a connection's writes, so once a client has used WAIT its keyed commands stay
  // on its pinned connections (kept, not pooled).
  bool wait_mode() const { return wait_mode_; }
  void EnterWaitMode() { wait_mode_ = true; }
  // While the client tracks keys, its keyed commands go over its pinned connections, which
  // keep the shards' tracking state: kept, not pooled.
  void set_tracking(bool tracking) { tracking_ = tracking; }

  const std::vector<PinnedLink*>& links() const { return links_; }
  // The client's connection to host:port speaking `protocol`, null when it has none.
  PinnedLink* Find(const std::string& host, int port, int protocol) const;

  // Receivers (CLIENT TRACKING ... REDIRECT): the id of the client's receiver connection on
  // host:port as that shard numbers it (CLIENT ID), -1 until known.
  int64_t ReceiverId(const std::string& host, int port) const;
  void SetReceiverId(const std::string& host, int port, int64_t id);
  bool IsReceiver(const PinnedLink* link) const;

 private:
  RequestRouter& router_;
  ReplySink* owner_;
  struct Receiver {
    PinnedLink* link;
    int64_t shard_id = -1;
  };
  Receiver* FindReceiver(const std::string& host, int port);

  std::vector<PinnedLink*> links_;
  std::vector<Receiver> receivers_;
  std::optional<Watch> watch_;
  bool wait_mode_ = false;
  bool tracking_ = false;
};

}  // namespace shardctl::proxy
