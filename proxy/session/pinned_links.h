// PinnedLinks: one client's own connections to shards ("pinned"), for the commands that hold
// per-connection state in Redis and so cannot share a connection with other clients:
//
//   blocking (BLPOP, XREAD BLOCK ...)  the connection is blocked until the reply
//   WATCH ... EXEC                     the watch lives on one connection: WATCH, the watched
//                                      slot's commands and EXEC all go over it
//   WAIT                               counts the replicas that acknowledged the writes made on
//                                      the connection it runs on
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

  const std::vector<PinnedLink*>& links() const { return links_; }

 private:
  RequestRouter& router_;
  ReplySink* owner_;
  std::vector<PinnedLink*> links_;
  std::optional<Watch> watch_;
  bool wait_mode_ = false;
};

}  // namespace shardctl::proxy
