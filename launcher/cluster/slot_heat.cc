#include "launcher/cluster/slot_heat.h"

#include <algorithm>
#include <sstream>

#include "common/numbers.h"
#include "common/slots.h"

namespace shardctl::launcher {
namespace {

using common::Error;

// How much a cumulative counter grew; one that went down started again from zero.
uint64_t Grew(uint64_t now, uint64_t then) { return now >= then ? now - then : now; }

// A slot's growth between readings, ranked: CPU first, then requests through the proxy.
struct SlotGrowth {
  int slot = 0;
  uint64_t cpu = 0;
  uint64_t requests = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

std::map<int, SlotGrowth> Growths(const SlotReading& before, const SlotReading& after) {
  std::map<int, SlotGrowth> heat;
  for (const auto& [slot, now] : after.stats) {
    auto then = before.stats.find(slot);
    if (then == before.stats.end()) continue;  // its owner did not answer before: no comparison
    const SlotStat& old = then->second;
    SlotGrowth& entry = heat[slot];
    entry.cpu = Grew(now.cpu_usec, old.cpu_usec);
    entry.bytes_in = Grew(now.bytes_in, old.bytes_in);
    entry.bytes_out = Grew(now.bytes_out, old.bytes_out);
  }
  if (before.proxy && after.proxy) {
    for (const auto& [slot, now] : *after.proxy) {
      auto then = before.proxy->find(slot);
      heat[slot].requests = Grew(now, then == before.proxy->end() ? 0 : then->second);
    }
  }
  for (auto& [slot, entry] : heat) entry.slot = slot;
  std::erase_if(heat, [](const auto& entry) {
    const SlotGrowth& h = entry.second;
    return h.cpu == 0 && h.requests == 0 && h.bytes_in == 0 && h.bytes_out == 0;
  });
  return heat;
}

}  // namespace

common::Result<std::map<int, uint64_t>> ParseProxySlots(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream lines(text);
  for (std::string word; std::getline(lines, word);) {
    if (!word.empty() && word.back() == '\r') word.pop_back();
    if (!word.empty()) words.push_back(std::move(word));
  }
  if (words.size() % 2 != 0) return Error("PROXY SLOTS: an odd number of elements");
  std::map<int, uint64_t> counts;
  for (size_t at = 0; at < words.size(); at += 2) {
    auto slot = common::ParseIntegerIn<int>(words[at], 0, common::kSlotCount - 1);
    if (!slot) return Error("PROXY SLOTS: \"" + words[at] + "\" is not a slot");
    auto requests = common::ParseInteger<uint64_t>(words[at + 1]);
    if (!requests) return Error("PROXY SLOTS: \"" + words[at + 1] + "\" is not a count");
    counts[*slot] = *requests;
  }
  return counts;
}

std::vector<SlotHeat> HottestSlots(const SlotReading& before, const SlotReading& after,
                                   double seconds, size_t limit) {
  const std::map<int, SlotGrowth> heat = Growths(before, after);
  uint64_t all_cpu = 0;
  for (const auto& [slot, entry] : heat) all_cpu += entry.cpu;
  if (before.executed_usec && after.executed_usec) {
    all_cpu = std::max(all_cpu, Grew(*after.executed_usec, *before.executed_usec));
  }
  std::vector<SlotGrowth> ranked;
  for (const auto& [slot, entry] : heat) ranked.push_back(entry);
  std::sort(ranked.begin(), ranked.end(), [](const SlotGrowth& a, const SlotGrowth& b) {
    if (a.cpu != b.cpu) return a.cpu > b.cpu;
    if (a.requests != b.requests) return a.requests > b.requests;
    return a.slot < b.slot;
  });
  if (ranked.size() > limit) ranked.resize(limit);
  const bool rates = seconds > 0;
  const bool stats = !after.stats.empty();
  std::vector<SlotHeat> hot;
  for (const SlotGrowth& entry : ranked) {
    SlotHeat slot{.slot = entry.slot};
    if (static_cast<size_t>(entry.slot) < after.owner.size())
      slot.shard = after.owner[static_cast<size_t>(entry.slot)];
    if (rates && before.proxy && after.proxy)
      slot.ops_per_second = static_cast<double>(entry.requests) / seconds;
    if (stats) {
      auto found = after.stats.find(entry.slot);
      slot.keys = found == after.stats.end() ? 0 : found->second.keys;
    }
    if (stats && after.cpu_counted && before.cpu_counted) {
      if (all_cpu > 0)
        slot.cpu_share = static_cast<double>(entry.cpu) / static_cast<double>(all_cpu);
      if (rates) {
        slot.bytes_in_per_second = static_cast<double>(entry.bytes_in) / seconds;
        slot.bytes_out_per_second = static_cast<double>(entry.bytes_out) / seconds;
      }
    }
    hot.push_back(slot);
  }
  return hot;
}

uint64_t CommandUsec(const std::string& commandstats) {
  uint64_t usec = 0;
  std::istringstream lines(commandstats);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.starts_with("cmdstat_")) continue;
    const size_t at = line.find("usec=");
    if (at == std::string::npos) continue;
    const size_t end = line.find(',', at);
    const std::string value = line.substr(at + 5, end == std::string::npos ? end : end - at - 5);
    usec += common::ParseInteger<uint64_t>(value).value_or(0);
  }
  return usec;
}

std::vector<std::optional<double>> LoadShares(const std::vector<std::optional<uint64_t>>& before,
                                              const std::vector<std::optional<uint64_t>>& after) {
  std::vector<std::optional<uint64_t>> done(after.size());
  uint64_t total = 0;
  for (size_t i = 0; i < after.size() && i < before.size(); ++i) {
    if (!before[i] || !after[i]) continue;
    done[i] = Grew(*after[i], *before[i]);
    total += *done[i];
  }
  std::vector<std::optional<double>> shares(after.size());
  if (total == 0) return shares;
  for (size_t i = 0; i < done.size(); ++i) {
    if (done[i]) shares[i] = static_cast<double>(*done[i]) / static_cast<double>(total);
  }
  return shares;
}

}  // namespace shardctl::launcher
