#include "common/slots.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "common/numbers.h"

namespace shardctl::common {
namespace {

// CRC16-CCITT: polynomial 0x1021, initial value 0, no bit reflection, no final xor.
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();

// Two bytes a step (every key of every proxied request is hashed): a 16-bit x = crc ^ (b0 << 8 |
// b1) shifted through 16 steps is, the CRC being linear, the high byte's two steps xor the low
// byte's one step: kCrc16Pairs[x >> 8] ^ kCrc16Table[x & 0xff].
constexpr std::array<uint16_t, 256> MakeCrc16PairTable() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    const uint16_t once = kCrc16Table[byte];
    table[byte] = static_cast<uint16_t>((once << 8) ^ kCrc16Table[once >> 8]);
  }
  return table;
}

constexpr std::array<uint16_t, 256> kCrc16Pairs = MakeCrc16PairTable();

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  const auto* byte = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* end = byte + data.size();
  for (; end - byte >= 2; byte += 2) {
    const auto x = static_cast<uint16_t>(crc ^ ((byte[0] << 8) | byte[1]));
    crc = static_cast<uint16_t>(kCrc16Pairs[x >> 8] ^ kCrc16Table[x & 0xff]);
  }
  if (byte != end) {
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16Table[static_cast<uint8_t>((crc >> 8) ^ *byte)]);
  }
  return crc;
}

std::string_view TagForSlot(int slot) {
  // Base-36 counting until every slot has a tag: about 170k CRCs (coupon collector), once.
  static const std::vector<std::string> tags = [] {
    std::vector<std::string> found(kSlotCount);
    int missing = kSlotCount;
    for (uint64_t n = 0; missing > 0; ++n) {
      std::string tag;
      for (uint64_t rest = n;; rest /= 36) {
        tag.insert(tag.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[rest % 36]);
        if (rest < 36) break;
      }
      std::string& slot_tag = found[Crc16(tag) % kSlotCount];
      if (slot_tag.empty()) {
        slot_tag = std::move(tag);
        --missing;
      }
    }
    return found;
  }();
  return tags.at(static_cast<size_t>(slot));
}

int KeySlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    // "{}" is not a tag: Redis then hashes the whole key, so "foo{}{bar}" spreads like any key.
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) % kSlotCount;  // kSlotCount is a power of two: same as Redis' "& 16383".
}

std::vector<SlotRange> SplitSlotsEvenly(int primaries) {
  if (primaries < 1 || primaries > kSlotCount) return {};
  std::vector<SlotRange> ranges;
  ranges.reserve(primaries);
  // Single precision on purpose: redis-cli accumulates a float cursor, and from 78 primaries on
  // double arithmetic rounds some boundaries differently, so the ranges would no longer match.
  const float slots_per_node = static_cast<float>(kSlotCount) / static_cast<float>(primaries);
  float cursor = 0.0f;
  int first = 0;
  for (int i = 0; i < primaries; ++i) {
    int last = static_cast<int>(std::lround(cursor + slots_per_node - 1));
    if (last > kSlotCount || i == primaries - 1) last = kSlotCount - 1;
    if (last < first) last = first;
    ranges.push_back({first, last});
    first = last + 1;
    cursor += slots_per_node;
  }
  // Float drift past ~7500 primaries can push the last range beyond slot 16383; redis-cli would
  // then fail at CLUSTER ADDSLOTS, so there is no split to reproduce.
  if (ranges.back().last != kSlotCount - 1) return {};
  return ranges;
}

std::string FormatSlotRange(const SlotRange& range) {
  return range.first == range.last ? std::to_string(range.first)
                                   : std::to_string(range.first) + "-" + std::to_string(range.last);
}

Result<std::vector<SlotRange>> ParseSlotRanges(const std::string& text) {
  std::vector<SlotRange> ranges;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    const size_t dash = part.find('-');
    auto first = ParseIntegerIn<int>(part.substr(0, dash), 0, kSlotCount - 1);
    auto last = dash == std::string::npos
                    ? first
                    : ParseIntegerIn<int>(part.substr(dash + 1), 0, kSlotCount - 1);
    if (!first || !last || *first > *last) {
      return Error("slot range '" + part +
                   "': expected FIRST-LAST or SLOT within 0-16383, e.g. 100-200");
    }
    ranges.push_back({*first, *last});
    start = comma + 1;
  }
  std::vector<SlotRange> sorted = ranges;
  std::sort(sorted.begin(), sorted.end(),
            [](const SlotRange& a, const SlotRange& b) { return a.first < b.first; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first <= sorted[i - 1].last) {
      return Error("slot ranges " + FormatSlotRange(sorted[i - 1]) + " and " +
                   FormatSlotRange(sorted[i]) + " overlap (name each slot once)");
    }
  }
  return ranges;
}

std::string FormatSlotRanges(const std::vector<SlotRange>& ranges) {
  std::string text;
  for (const auto& range : ranges) {
    if (!text.empty()) text += ",";
    text += FormatSlotRange(range);
  }
  return text;
}

void AppendSlot(std::vector<SlotRange>& ranges, int slot) {
  if (!ranges.empty() && ranges.back().last + 1 == slot) {
    ranges.back().last = slot;
  } else {
    ranges.push_back({slot, slot});
  }
}

}  // namespace shardctl::common
