#include "proxy/session/slot_sequencer.h"

#include <utility>

namespace shardctl::proxy {

SlotSequencer::Flight* SlotSequencer::Find(int slot) {
  if ((maybe_ & Bit(slot)) == 0) return nullptr;
  for (Flight& flight : flights_) {
    if (flight.slot == slot) return &flight;
  }
  return nullptr;
}

bool SlotSequencer::Admit(SubRequest* request, const void* connection) {
  Flight* flight = Find(request->slot);
  if (flight == nullptr) {
    flight = &flights_.emplace_back();
    flight->slot = request->slot;
    maybe_ |= Bit(request->slot);
  }
  if (flight->count > 0 && (flight->connection != connection || flight->held > 0)) {
    held_.push_back(request);
    ++flight->held;
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
  std::vector<SubRequest*> released;
  if (flight->held > 0) {
    released.reserve(flight->held);
    std::erase_if(held_, [&](SubRequest* request) {
      if (request->slot != slot) return false;
      released.push_back(request);
      return true;
    });
  }
  flights_.erase(flights_.begin() + (flight - flights_.data()));  // a few small records move
  if (flights_.empty()) maybe_ = 0;
  return released;
}

std::vector<SubRequest*> SlotSequencer::TakeAllHeld() {
  std::vector<SubRequest*> held;
  held.swap(held_);
  flights_.clear();
  maybe_ = 0;
  return held;
}

}  // namespace shardctl::proxy
