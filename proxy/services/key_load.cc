#include "proxy/services/key_load.h"

#include <algorithm>

#include "common/resp.h"
#include "common/slots.h"

namespace shardctl::proxy {

KeyLoad::KeyLoad(size_t capacity, uint32_t sample_period)
    : keys_(capacity),
      low_(new uint16_t[common::kSlotCount]()),
      high_(new uint64_t[common::kSlotCount]()),
      sample_period_(std::max<uint32_t>(sample_period, 1)) {}

uint32_t KeyLoad::NextGap() {
  if (sample_period_ == 1) return 1;
  random_ ^= random_ << 13;
  random_ ^= random_ >> 7;
  random_ ^= random_ << 17;
  return 1 + static_cast<uint32_t>(random_ % (2 * uint64_t{sample_period_} - 1));
}

std::vector<uint64_t> KeyLoad::SlotCounts() const {
  std::vector<uint64_t> slots(common::kSlotCount);
  for (size_t slot = 0; slot < slots.size(); ++slot) slots[slot] = high_[slot] + low_[slot];
  return slots;
}

KeyLoadSnapshot KeyLoad::Snapshot() const {
  std::vector<HotKey> keys = keys_.Snapshot();
  for (HotKey& key : keys) {
    key.count *= sample_period_;
    key.error *= sample_period_;
    key.reads *= sample_period_;
  }
  return {.keys = std::move(keys), .keys_counted = keys_counted_, .slots = SlotCounts()};
}

KeyLoadSnapshot MergeKeyLoad(std::span<const KeyLoadSnapshot> workers, size_t key_limit) {
  KeyLoadSnapshot merged;
  merged.slots.assign(common::kSlotCount, 0);
  std::vector<std::vector<HotKey>> tables;
  for (const KeyLoadSnapshot& worker : workers) {
    merged.keys_counted += worker.keys_counted;
    for (size_t slot = 0; slot < worker.slots.size() && slot < merged.slots.size(); ++slot) {
      merged.slots[slot] += worker.slots[slot];
    }
    if (!worker.keys.empty()) tables.push_back(worker.keys);
  }
  if (key_limit > 0) merged.keys = HotKeys::Merge(tables, key_limit);
  return merged;
}

KeyLoadBoard::KeyLoadBoard(int workers, size_t capacity)
    : capacity_(capacity), workers_(static_cast<size_t>(std::max(workers, 0))) {}

void KeyLoadBoard::Publish(int worker, KeyLoadSnapshot snapshot) {
  std::lock_guard lock(mutex_);
  workers_.at(static_cast<size_t>(worker)) = std::move(snapshot);
}

KeyLoadSnapshot KeyLoadBoard::Merged(size_t key_limit) const {
  std::vector<KeyLoadSnapshot> copies;
  {
    std::lock_guard lock(mutex_);
    copies = workers_;
  }
  return MergeKeyLoad(copies, std::min(key_limit, capacity_));
}

std::string HotKeysReply(std::span<const HotKey> keys) {
  std::string out;
  common::AppendArrayHeader(out, keys.size());
  for (const HotKey& key : keys) {
    common::AppendArrayHeader(out, 4);
    common::AppendBulk(out, key.key);
    common::AppendInteger(out, static_cast<int64_t>(key.count));
    common::AppendInteger(out, static_cast<int64_t>(key.reads));
    common::AppendInteger(out, static_cast<int64_t>(key.error));
  }
  return out;
}

std::string SlotsReply(std::span<const uint64_t> slots) {
  const auto busy = static_cast<size_t>(
      std::count_if(slots.begin(), slots.end(), [](uint64_t requests) { return requests; }));
  std::string out;
  common::AppendArrayHeader(out, busy * 2);
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot] == 0) continue;
    common::AppendInteger(out, static_cast<int64_t>(slot));
    common::AppendInteger(out, static_cast<int64_t>(slots[slot]));
  }
  return out;
}

std::vector<std::pair<int, uint64_t>> BusiestSlots(std::span<const uint64_t> slots, size_t limit) {
  std::vector<std::pair<int, uint64_t>> busy;
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    if (slots[slot] > 0) busy.emplace_back(static_cast<int>(slot), slots[slot]);
  }
  const auto more = [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  const size_t kept = std::min(limit, busy.size());
  std::partial_sort(busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(kept), busy.end(),
                    more);
  busy.resize(kept);
  return busy;
}

std::string EscapeInfoValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte > 0x20 && byte < 0x7f && c != '\\' && c != ',' && c != '=' && c != '"') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

void AppendHotKeysInfo(std::string& out, const KeyLoadSnapshot& load) {
  out += "# Hotkeys\r\n";
  out += "hotkeys_tracked:" + std::to_string(load.keys.size()) + "\r\n";
  out += "hotkeys_requests:" + std::to_string(load.keys_counted) + "\r\n";
  for (size_t i = 0; i < load.keys.size(); ++i) {
    const HotKey& key = load.keys[i];
    out += "hotkey" + std::to_string(i) + ":key=" + EscapeInfoValue(key.key) +
           ",requests=" + std::to_string(key.count) + ",reads=" + std::to_string(key.reads) +
           ",error=" + std::to_string(key.error) + "\r\n";
  }
}

}  // namespace shardctl::proxy
