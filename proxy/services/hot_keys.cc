#include "proxy/services/hot_keys.h"

#include <algorithm>
#include <bit>
#include <map>

namespace shardctl::proxy {

HotKeys::HotKeys(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  slots_.reserve(capacity_);
  hashes_.reserve(capacity_);
  heap_.reserve(capacity_);
  place_of_.reserve(capacity_);
  table_.assign(std::bit_ceil(capacity_ * 2), 0);
  mask_ = table_.size() - 1;
}

size_t HotKeys::Find(std::string_view key, size_t hash) const {
  for (size_t position = hash & mask_; table_[position] != 0; position = (position + 1) & mask_) {
    const size_t slot = table_[position] - 1;
    if (hashes_[slot] == hash && slots_[slot].key == key) return position;
  }
  return std::string_view::npos;
}

void HotKeys::Insert(size_t slot) {
  size_t position = hashes_[slot] & mask_;
  while (table_[position] != 0) position = (position + 1) & mask_;
  table_[position] = static_cast<uint32_t>(slot + 1);
}

void HotKeys::Erase(size_t position) {
  table_[position] = 0;
  // Entries after the hole that could not sit at their home position move back into it, so a
  // probe never stops early at an empty entry.
  for (size_t next = (position + 1) & mask_; table_[next] != 0; next = (next + 1) & mask_) {
    const size_t home = hashes_[table_[next] - 1] & mask_;
    const bool stays =
        position <= next ? (position < home && home <= next) : (position < home || home <= next);
    if (stays) continue;
    table_[position] = table_[next];
    table_[next] = 0;
    position = next;
  }
}

void HotKeys::Swap(size_t a, size_t b) {
  std::swap(heap_[a], heap_[b]);
  place_of_[heap_[a]] = a;
  place_of_[heap_[b]] = b;
}

void HotKeys::SiftDown(size_t place) {
  while (true) {
    size_t smallest = place;
    for (size_t child : {2 * place + 1, 2 * place + 2}) {
      if (child < heap_.size() && slots_[heap_[child]].count < slots_[heap_[smallest]].count) {
        smallest = child;
      }
    }
    if (smallest == place) return;
    Swap(place, smallest);
    place = smallest;
  }
}

void HotKeys::Offer(std::string_view key, bool read) {
  ++total_;
  const size_t hash = std::hash<std::string_view>{}(key);
  if (const size_t found = Find(key, hash); found != std::string_view::npos) {
    const size_t slot = table_[found] - 1;
    HotKey& counted = slots_[slot];
    ++counted.count;
    counted.reads += read ? 1 : 0;
    SiftDown(place_of_[slot]);
    return;
  }
  if (slots_.size() < capacity_) {
    // Count 1 is the smallest possible, so the new slot belongs at the heap's front: appended
    // last it is moved up to its place.
    const size_t slot = slots_.size();
    slots_.push_back({.key = std::string(key), .count = 1, .error = 0, .reads = read ? 1u : 0u});
    hashes_.push_back(hash);
    heap_.push_back(slot);
    place_of_.push_back(heap_.size() - 1);
    for (size_t place = heap_.size() - 1; place > 0;) {
      const size_t parent = (place - 1) / 2;
      if (slots_[heap_[parent]].count <= slots_[heap_[place]].count) break;
      Swap(place, parent);
      place = parent;
    }
    Insert(slot);
    return;
  }
  const size_t slot = heap_.front();
  HotKey& replaced = slots_[slot];
  Erase(Find(replaced.key, hashes_[slot]));
  replaced.error = replaced.count;
  ++replaced.count;
  replaced.reads = read ? 1 : 0;
  replaced.key.assign(key);  // keeps the buffer when it is big enough
  hashes_[slot] = hash;
  Insert(slot);
  SiftDown(0);
}

std::vector<HotKey> HotKeys::Snapshot() const {
  std::vector<HotKey> table = slots_;
  std::sort(table.begin(), table.end(), [](const HotKey& a, const HotKey& b) {
    return a.count != b.count ? a.count > b.count : a.key < b.key;
  });
  return table;
}

std::vector<HotKey> HotKeys::Merge(const std::vector<std::vector<HotKey>>& tables, size_t limit) {
  std::map<std::string, HotKey> merged;
  uint64_t floors = 0;  // the sum of every table's smallest count: what a key missing there had
  std::vector<uint64_t> floor_of(tables.size(), 0);
  for (size_t t = 0; t < tables.size(); ++t) {
    for (const auto& entry : tables[t]) {
      floor_of[t] = floor_of[t] == 0 ? entry.count : std::min(floor_of[t], entry.count);
    }
    floors += floor_of[t];
  }
  std::map<std::string, uint64_t> floors_seen;
  for (size_t t = 0; t < tables.size(); ++t) {
    for (const auto& entry : tables[t]) {
      HotKey& sum = merged[entry.key];
      sum.key = entry.key;
      sum.count += entry.count;
      sum.error += entry.error;
      sum.reads += entry.reads;
      floors_seen[entry.key] += floor_of[t];
    }
  }
  std::vector<HotKey> result;
  for (auto& [key, entry] : merged) {
    entry.error += floors - floors_seen[key];
    result.push_back(std::move(entry));
  }
  std::sort(result.begin(), result.end(), [](const HotKey& a, const HotKey& b) {
    return a.count != b.count ? a.count > b.count : a.key < b.key;
  });
  if (result.size() > limit) result.resize(limit);
  return result;
}

}  // namespace shardctl::proxy
