// SlotSequencer: a client's commands for one slot reach the shards in the client's order, even
// when the slot map changes while some are in flight. Without it a later command, sent straight
// to the slot's new owner, would overtake earlier ones still bouncing off the old owner with
// MOVED, or waiting out a TRYAGAIN backoff. Pure: it only counts and holds.
//
//   Admit(request, connection):  nothing of the slot in flight elsewhere and nothing held
//                                  ─▶ true (counted in flight on `connection`)
//                                else ─▶ false, held in order
//   Leave(slot):                 one finished; the last one out returns the held requests, to be
//                                  routed again in order
//   Hold(slot):                  a request of the slot waits for a retry: hold what comes next
#pragma once

#include <cstddef>
#include <vector>

#include "proxy/commands/request.h"

namespace shardctl::proxy {

class SlotSequencer {
 public:
  // Admits `request` (whose slot is >= 0) to `connection` (any identity of where it is sent), or
  // holds it and returns false. An admitted request is marked sequenced.
  bool Admit(SubRequest* request, const void* connection);
  // A sequenced request of `slot` finished. Returns the held requests to route again (in order)
  // once none of the slot is in flight any more.
  std::vector<SubRequest*> Leave(int slot);
  // A sequenced request of `slot` waits for a retry: whatever comes next for the slot is held
  // until it is done, not sent past it.
  void Hold(int slot);
  // Every held request (never sent: the client is gone); the sequencer is empty afterwards.
  std::vector<SubRequest*> TakeAllHeld();

  size_t slots_in_flight() const { return flights_.size(); }

 private:
  struct Flight {
    int slot = 0;
    const void* connection = nullptr;  // where the in-flight requests of the slot were sent
    size_t count = 0;
    std::vector<SubRequest*> held;  // waiting for `count` to reach 0, in the client's order
  };
  // A flat list, searched from the back: a client has few slots in flight at once (one per
  // pipelined key at most), and a map's node per request cost more than the search.
  Flight* Find(int slot);

  std::vector<Flight> flights_;
};

}  // namespace shardctl::proxy
