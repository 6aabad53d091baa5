// The keys a worker routes most, in bounded memory (issue: hot keys). Space-Saving (Metwally,
// Agrawal and El Abbadi, 2005): `capacity` counters; a key already counted gains one; a new key
// takes the smallest counter over and inherits its count as its possible overcount. Any key seen
// more than total / capacity times is in the table, and no count is low by anything: each is at
// most `error` too high. Pure and single-threaded: each worker owns one (no lock on the hot path);
// readers take Snapshot() copies on the worker's own thread and merge them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardctl::proxy {

struct HotKey {
  std::string key;
  uint64_t count = 0;  // requests counted for it (at most `error` more than it really had)
  uint64_t error = 0;  // what it inherited from the key it replaced
  friend bool operator==(const HotKey&, const HotKey&) = default;
};

class HotKeys {
 public:
  explicit HotKeys(size_t capacity = 64);

  // Counts one request for `key`: a hash lookup and a sift of one heap entry. A key counted
  // already allocates nothing; a new one costs one index node (its slot's string buffer is
  // reused when big enough).
  void Offer(std::string_view key);

  // The table, hottest first (ties by key), and every request offered so far.
  std::vector<HotKey> Snapshot() const;
  uint64_t total() const { return total_; }
  size_t capacity() const { return capacity_; }

  // Several workers' snapshots as one table: counts and errors of a key summed, hottest `limit`
  // first. A key missing from one worker's table may have had up to that table's smallest count
  // there, so the merged error adds it (kept conservative, as Space-Saving's own).
  static std::vector<HotKey> Merge(const std::vector<std::vector<HotKey>>& tables, size_t limit);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  // A min-heap of slots by count, with each slot's place in it, so a count that grows sinks in
  // O(log capacity) and the smallest is at the front.
  void SiftDown(size_t place);
  void Swap(size_t a, size_t b);

  size_t capacity_;
  uint64_t total_ = 0;
  std::vector<HotKey> slots_;
  std::vector<size_t> heap_;      // slot indexes, smallest count first
  std::vector<size_t> place_of_;  // slot index -> its position in heap_
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> index_;
};

}  // namespace shardctl::proxy
