#include "proxy/slot_sequencer.h"

namespace shardctl::proxy {

bool SlotSequencer::Admit(SubRequest* request, const void* connection) {
  Flight& flight = flights_[request->slot];
  if (flight.count > 0 && (flight.connection != connection || !flight.held.empty())) {
    flight.held.push_back(request);
    return false;
  }
  flight.connection = connection;
  ++flight.count;
  request->sequenced = true;
  return true;
}

void SlotSequencer::Hold(int slot) {
  auto found = flights_.find(slot);
  // No connection is nullptr, so Admit() holds whatever comes next for the slot.
  if (found != flights_.end()) found->second.connection = nullptr;
}

std::vector<SubRequest*> SlotSequencer::Leave(int slot) {
  auto found = flights_.find(slot);
  if (found == flights_.end() || --found->second.count > 0) return {};
  std::vector<SubRequest*> held(found->second.held.begin(), found->second.held.end());
  flights_.erase(found);
  return held;
}

std::vector<SubRequest*> SlotSequencer::TakeAllHeld() {
  std::vector<SubRequest*> held;
  for (auto& [slot, flight] : flights_)
    held.insert(held.end(), flight.held.begin(), flight.held.end());
  flights_.clear();
  return held;
}

}  // namespace shardctl::proxy
