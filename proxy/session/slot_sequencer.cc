#include "proxy/session/slot_sequencer.h"

#include <utility>

namespace shardctl::proxy {

SlotSequencer::Flight* SlotSequencer::Find(int slot) {
  for (auto it = flights_.rbegin(); it != flights_.rend(); ++it) {
    if (it->slot == slot) return &*it;
  }
  return nullptr;
}

bool SlotSequencer::Admit(SubRequest* request, const void* connection) {
  Flight* flight = Find(request->slot);
  if (flight == nullptr) {
    flight = &flights_.emplace_back();
    flight->slot = request->slot;
  }
  if (flight->count > 0 && (flight->connection != connection || !flight->held.empty())) {
    flight->held.push_back(request);
    return false;
  }
  flight->connection = connection;
  ++flight->count;
  request->sequenced = true;
  return true;
}

void SlotSequencer::Hold(int slot) {
  // No connection is nullptr, so Admit() holds whatever comes next for the slot.
  if (Flight* flight = Find(slot)) flight->connection = nullptr;
}

std::vector<SubRequest*> SlotSequencer::Leave(int slot) {
  Flight* flight = Find(slot);
  if (flight == nullptr || --flight->count > 0) return {};
  std::vector<SubRequest*> held = std::move(flight->held);
  // Order among flights does not matter: swap with the last and drop it.
  if (flight != &flights_.back()) *flight = std::move(flights_.back());
  flights_.pop_back();
  return held;
}

std::vector<SubRequest*> SlotSequencer::TakeAllHeld() {
  std::vector<SubRequest*> held;
  for (Flight& flight : flights_) held.insert(held.end(), flight.held.begin(), flight.held.end());
  flights_.clear();
  return held;
}

}  // namespace shardctl::proxy
