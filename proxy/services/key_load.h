// Load per key and per slot as the proxy routes it (issue 31: hot slots and hot keys), and how it
// is served.
//
//   Session::Dispatch ──Count(slot, key, read)──▶ KeyLoad (one per worker, written only by its
//                                                  thread: no lock, no atomic; keys sampled)
//   the worker's 1 s uv timer ──Snapshot()──▶ KeyLoadBoard::Publish(worker)   (a mutex, once a
//                                                                             second per worker)
//   PROXY HOTKEYS / PROXY SLOTS, INFO hotkeys, /metrics ──KeyLoadBoard::Merged()──▶ the workers'
//                                                        last snapshots merged (up to ~1 s old)
//
// What is counted, cumulative since the proxy started: a command routed by slot (single key, one
// slot, blocking) counts one request for its slot and offers its first key (the one in argument
// order; the other keys of such a command share its slot and its one operation). A command split
// by slot (MGET, MSET, DEL, UNLINK, EXISTS, TOUCH) counts one request per part for the part's
// slot and offers every key: each is an operation of its own on a slot of its own. Commands
// queued in MULTI, keyless and fanned-out commands are not counted. `reads` counts requests of
// commands the command table marks read-only. --hot-keys 0: no KeyLoad at all.
// --hot-keys-sample N: the key sampling period (KeyLoad).
//
// The rest is pure: merging snapshots and the reply, INFO and /metrics shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/services/hot_keys.h"

namespace shardctl::proxy {

// One worker's counts, or several merged.
struct KeyLoadSnapshot {
  std::vector<HotKey> keys;     // hottest first
  uint64_t keys_counted = 0;    // every key counted (sampled for the top-K or not)
  std::vector<uint64_t> slots;  // requests per slot: common::kSlotCount entries, or empty
};

// One worker's counters. Its thread only.
//
// Slots are counted exactly. Keys are sampled: about one key in `sample_period` (a random gap of
// 1 .. 2 * period - 1, so that no request pattern lines up with it) is offered to the top-K, and
// Snapshot() scales its counts back by the period. Offering a key costs ~60 ns when it replaces
// another (a long tail: most offers), several percent of a pipelined request; sampled, the cost
// is a decrement. The heavy hitters stay: a key with a share of the requests keeps that share of
// the samples.
class KeyLoad {
 public:
  // `capacity` keys tracked (--hot-keys, >= 1); `sample_period` >= 1 (1: every key).
  KeyLoad(size_t capacity, uint32_t sample_period);

  // A request for `slot` (0..16383) whose key is `key`; `read`: a read-only command.
  void Count(int slot, std::string_view key, bool read) {
    CountSlot(slot);
    CountKey(key, read);
  }
  // The two halves, for split commands: one request per part, every key counted.
  void CountSlot(int slot) {
    // 16-bit counts (32 KB, which stays in cache: 64-bit ones missed it for random slots, ~5%
    // of a pipelined request), carried into the 64-bit totals when they wrap.
    if (++low_[static_cast<size_t>(slot)] == 0) high_[static_cast<size_t>(slot)] += 1u << 16;
  }
  void CountKey(std::string_view key, bool read) {
    ++keys_counted_;
    if (--countdown_ != 0) return;
    countdown_ = NextGap();
    keys_.Offer(key, read);
  }

  uint64_t keys_counted() const { return keys_counted_; }
  // The top-K with its counts scaled to requests, every key counted, the slots.
  KeyLoadSnapshot Snapshot() const;

 private:
  uint32_t NextGap();
  std::vector<uint64_t> SlotCounts() const;

  HotKeys keys_;
  std::unique_ptr<uint16_t[]> low_;   // per slot: requests mod 2^16
  std::unique_ptr<uint64_t[]> high_;  // per slot: the rest (multiples of 2^16)
  const uint32_t sample_period_;
  uint32_t countdown_ = 1;  // the next key counted is offered when this reaches 0
  uint64_t keys_counted_ = 0;
  uint64_t random_ = 0x9e3779b97f4a7c15;  // xorshift64 state
};

// The workers' snapshots as one: slots summed, keys merged (HotKeys::Merge) to the hottest
// `key_limit`, keys counted summed. Snapshots with no slots (never published) count as zeros.
KeyLoadSnapshot MergeKeyLoad(std::span<const KeyLoadSnapshot> workers, size_t key_limit);

// Where the workers publish their snapshots and readers take them merged. Thread-safe; each
// worker writes about once a second, readers are PROXY commands, INFO and scrapes.
class KeyLoadBoard {
 public:
  // `capacity`: --hot-keys, the keys each worker tracks and the merged table keeps.
  KeyLoadBoard(int workers, size_t capacity);

  void Publish(int worker, KeyLoadSnapshot snapshot);
  // Merged over the workers, hottest `key_limit` keys (at most capacity()).
  KeyLoadSnapshot Merged(size_t key_limit) const;
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<KeyLoadSnapshot> workers_;  // guarded by mutex_
};

// PROXY HOTKEYS' reply: an array, hottest first, each [key (bulk), requests, reads, error].
std::string HotKeysReply(std::span<const HotKey> keys);
// PROXY SLOTS' reply: a flat array slot, requests, slot, requests ... for each slot with
// requests, ascending.
std::string SlotsReply(std::span<const uint64_t> slots);
// The busiest `limit` slots with requests, as (slot, requests), most first (ties: lower slot).
std::vector<std::pair<int, uint64_t>> BusiestSlots(std::span<const uint64_t> slots, size_t limit);

// A key as INFO shows it: printable ASCII as is, except `\`, `,`, `=`, `"` and spaces, which
// like every other byte become "\xHH", so an INFO line stays one line of key=value pairs.
std::string EscapeInfoValue(std::string_view value);
// INFO's "# Hotkeys" section: hotkeys_tracked, hotkeys_requests (keys counted), then one line
// per key, hottest first: hotkey<i>:key=<escaped>,requests=N,reads=N,error=N.
void AppendHotKeysInfo(std::string& out, const KeyLoadSnapshot& load);

}  // namespace shardctl::proxy
