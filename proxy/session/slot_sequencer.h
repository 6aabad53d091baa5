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
#include <cstdint>
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
  // Every held request (never sent: the client is gone), in the order they were held; the
  // sequencer is empty afterwards.
  std::vector<SubRequest*> TakeAllHeld();

  size_t slots_in_flight() const { return flights_.size(); }

 private:
  struct Flight {
    int slot = 0;
    uint32_t count = 0;                // requests of the slot in flight
    uint32_t held = 0;                 // requests of the slot in held_
    const void* connection = nullptr;  // where the in-flight requests of the slot were sent
  };
  // A flat list of small records in the order their slots were first admitted: a client has few
  // slots in flight at once (one per pipelined key at most), and a map's node per request cost
  // more than the search. Replies mostly come back in that order, so Leave() finds its slot near
  // the front; Admit() skips the search when `maybe_` says the slot is not there.
  Flight* Find(int slot);
  static uint64_t Bit(int slot) { return uint64_t{1} << (static_cast<unsigned>(slot) & 63); }

  std::vector<Flight> flights_;
  // A bit per slot modulo 64, set for every slot in flights_ (and possibly for slots gone since:
  // cleared only when flights_ empties).
  uint64_t maybe_ = 0;
  // Held requests of every slot, in the client's order: rare (a slot map change), so kept out of
  // the records searched on every request.
  std::vector<SubRequest*> held_;
};

}  // namespace shardctl::proxy
