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
#include <vector>

namespace shardctl::proxy {

struct HotKey {
  std::string key;
  uint64_t count = 0;  // requests counted for it (at most `error` more than it really had)
  uint64_t error = 0;  // what it inherited from the key it replaced
  // Of `count`, the requests of read-only commands since the key entered the table (exact: a
  // key taken over starts again from its own first request, nothing inherited).
  uint64_t reads = 0;
  friend bool operator==(const HotKey&, const HotKey&) = default;
};

class HotKeys {
 public:
  explicit HotKeys(size_t capacity = 64);

  // Counts one request for `key` (`read`: of a read-only command): a hash lookup and a sift of
  // one heap entry. Allocates nothing once the table is full, but a key longer than any its slot
  // held before (the slot's string buffer grows).
  void Offer(std::string_view key, bool read = false);

  // The table, hottest first (ties by key), and every request offered so far.
  std::vector<HotKey> Snapshot() const;
  uint64_t total() const { return total_; }
  size_t capacity() const { return capacity_; }

  // Several workers' snapshots as one table: counts, errors and reads of a key summed, hottest
  // `limit` first. A key missing from one worker's table may have had up to that table's smallest
  // count there, so the merged error adds it (kept conservative, as Space-Saving's own).
  static std::vector<HotKey> Merge(const std::vector<std::vector<HotKey>>& tables, size_t limit);

 private:
  // A min-heap of slots by count, with each slot's place in it, so a count that grows sinks in
  // O(log capacity) and the smallest is at the front.
  void SiftDown(size_t place);
  void Swap(size_t a, size_t b);
  // The index: open addressing with linear probing over slot numbers + 1 (0: empty), at most half
  // full, each slot's hash kept beside it. Replacing a key (most offers of a long tail) moves
  // no memory: no node to allocate, no string to copy but into the slot's own buffer.
  size_t Find(std::string_view key, size_t hash) const;  // its table position, or npos
  void Insert(size_t slot);
  void Erase(size_t position);  // backward-shift deletion: no tombstones

  size_t capacity_;
  uint64_t total_ = 0;
  std::vector<HotKey> slots_;
  std::vector<size_t> hashes_;    // slot index -> std::hash of its key
  std::vector<size_t> heap_;      // slot indexes, smallest count first
  std::vector<size_t> place_of_;  // slot index -> its position in heap_
  std::vector<uint32_t> table_;   // a power of two >= 2 * capacity entries
  size_t mask_ = 0;
};

}  // namespace shardctl::proxy
