// Redis Cluster slot math: CRC16 key hashing with hash tags, and the even slot split.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

inline constexpr int kSlotCount = 16384;

// CRC16-CCITT (XMODEM) as Redis Cluster uses it: Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view data);

// The cluster slot of a key: CRC16 of the key, or of the hash tag when the key holds a non-empty
// "{...}" (the first '{' and the first '}' after it), mod 16384.
int KeySlot(std::string_view key);

// A short string whose slot is `slot` (0..16383): KeySlot(TagForSlot(s)) == s, and so is the slot
// of any key with "{tag}" in it. For a key the proxy must place on one shard. The table of all
// 16384 is built on first use (a few ms) and then shared.
std::string_view TagForSlot(int slot);

// An inclusive range of slots.
struct SlotRange {
  int first = 0;
  int last = 0;
  int size() const { return last - first + 1; }
  friend bool operator==(const SlotRange&, const SlotRange&) = default;
};

// Splits all 16384 slots among `primaries` (>= 1) nodes exactly as `redis-cli --cluster create`
// does (single-precision cursor arithmetic, last node takes the rest), so a cluster formed by
// shardctl has the same slot ranges as one formed by redis-cli. Returns an empty vector when there
// is no such split: primaries < 1 or > 16384, or one of the counts above 7541 where the float
// cursor drifts so far that the last node would get slot 16384 (which Redis rejects in ADDSLOTS).
std::vector<SlotRange> SplitSlotsEvenly(int primaries);

// "5-9", or "5" for a range of one slot.
std::string FormatSlotRange(const SlotRange& range);

// "0-99,500-599".
std::string FormatSlotRanges(const std::vector<SlotRange>& ranges);

// Appends `slot` to `ranges`, growing the last range when `slot` is the one after it (slots given
// in ascending order come out as the fewest ranges).
void AppendSlot(std::vector<SlotRange>& ranges, int slot);

// Parses "100-200", "7" or "0-99,500-599" into ranges within 0..16383; errors name the bad part
// and ranges that overlap.
Result<std::vector<SlotRange>> ParseSlotRanges(const std::string& text);

}  // namespace shardctl::common
