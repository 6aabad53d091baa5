#include "launcher/cluster/slot_stats.h"

#include <thread>

#include "common/numbers.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kQueryTimeout = 5s;
constexpr const char* kSetting = "cluster-slot-stats-enabled";

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (!word.empty() && word.back() == '\r') word.pop_back();
    if (!word.empty()) words.push_back(std::move(word));
    start = end + 1;
  }
  return words;
}

bool IsNumber(const std::string& word) { return common::ParseInteger<uint64_t>(word).has_value(); }

// Seconds of CPU in INFO's used_cpu_user and used_cpu_sys, as µs.
double ProcessCpuUsec(const std::string& info) {
  const auto seconds = [&](const char* field) {
    return common::ParseDecimal(InfoField(info, field)).value_or(0);
  };
  return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1e6;
}

// SLOT-STATS of every owner's slots (one command per range) and each node's process CPU.
Result<LoadSample> ReadSample(std::vector<RedisConnection>& connections,
                              const std::vector<SlotOwner>& owners) {
  LoadSample sample{.slots = std::vector<SlotStat>(common::kSlotCount), .process_cpu_usec = {}};
  for (size_t i = 0; i < connections.size(); ++i) {
    auto info = connections[i].Run({"INFO", "cpu"});
    if (!info.ok()) return info.error().Context(connections[i].address());
    sample.process_cpu_usec.push_back(ProcessCpuUsec(*info));
    for (const auto& range : owners[i].slots) {
      auto reply = connections[i].Run({"CLUSTER", "SLOT-STATS", "SLOTSRANGE",
                                       std::to_string(range.first), std::to_string(range.last)});
      if (!reply.ok()) return reply.error().Context(connections[i].address());
      auto stats = ParseSlotStats(*reply);
      if (!stats.ok()) return stats.error().Context(connections[i].address());
      for (const auto& [slot, stat] : *stats) {
        if (slot >= range.first && slot <= range.last)
          sample.slots[static_cast<size_t>(slot)] = stat;
      }
    }
  }
  return sample;
}

}  // namespace

SlotCounting::~SlotCounting() {
  for (const auto& node : switched_) {
    auto connection = RedisConnection::Connect(access_, node.host, node.port, kQueryTimeout);
    if (connection.ok()) (void)connection->Run({"CONFIG", "SET", kSetting, "no"});
  }
}

Result<bool> SlotCounting::Enable(RedisConnection& connection, const MoveNode& node) {
  auto setting = connection.Run({"CONFIG", "GET", kSetting});
  if (!setting.ok() || setting->find(kSetting) == std::string::npos) return false;
  if (setting->ends_with("yes")) return true;
  auto set = connection.Run({"CONFIG", "SET", kSetting, "yes"});
  if (!set.ok()) return set.error().Context(connection.address());
  switched_.push_back(node);
  return true;
}

Result<std::map<int, SlotStat>> ParseSlotStats(const std::string& text) {
  const std::vector<std::string> words = Words(text);
  std::map<int, SlotStat> stats;
  size_t at = 0;
  while (at < words.size()) {
    auto slot = common::ParseIntegerIn<int>(words[at], 0, common::kSlotCount - 1);
    if (!slot) return Error("CLUSTER SLOT-STATS: \"" + words[at] + "\" is not a slot");
    SlotStat& stat = stats[*slot];
    for (++at; at + 1 < words.size() && !IsNumber(words[at]); at += 2) {
      const uint64_t value = common::ParseInteger<uint64_t>(words[at + 1]).value_or(0);
      if (words[at] == "key-count") stat.keys = value;
      if (words[at] == "cpu-usec") stat.cpu_usec = value;
      if (words[at] == "network-bytes-in") stat.bytes_in = value;
      if (words[at] == "network-bytes-out") stat.bytes_out = value;
    }
  }
  return stats;
}

Result<std::vector<double>> MeasureSlotCpu(const Access& access, const std::vector<MoveNode>& nodes,
                                           const std::vector<SlotOwner>& owners,
                                           std::chrono::milliseconds window,
                                           const std::atomic<bool>* stop) {
  SlotCounting counting(access);
  std::vector<RedisConnection> connections;
  for (const auto& node : nodes) {
    auto connection = RedisConnection::Connect(access, node.host, node.port, kQueryTimeout);
    if (!connection.ok()) return connection.error();
    auto enabled = counting.Enable(*connection, node);
    if (!enabled.ok()) return enabled.error();
    if (!*enabled) {
      return Error(connection->address() +
                   " has no per-slot counters (CLUSTER SLOT-STATS needs Valkey 8 or Redis 8.2 and "
                   "newer): balance by keys instead (--by keys)");
    }
    connections.push_back(std::move(connection).value());
  }
  auto before = ReadSample(connections, owners);
  if (!before.ok()) return before.error();
  const auto end = Clock::now() + window;
  while (Clock::now() < end && !(stop != nullptr && stop->load())) {
    std::this_thread::sleep_for(std::min<Clock::duration>(100ms, end - Clock::now()));
  }
  if (stop != nullptr && stop->load()) return Error("interrupted while measuring");
  auto after = ReadSample(connections, owners);
  if (!after.ok()) return after.error();
  return SlotLoads(*before, *after, owners);
}

std::vector<double> SlotLoads(const LoadSample& before, const LoadSample& after,
                              const std::vector<SlotOwner>& owners) {
  const auto delta = [](uint64_t now, uint64_t then) {
    return now > then ? static_cast<double>(now - then) : 0.0;
  };
  std::vector<double> loads(common::kSlotCount, 0.0);
  for (size_t i = 0; i < owners.size() && i < before.process_cpu_usec.size(); ++i) {
    double executing = 0;
    double bytes = 0;
    for (const auto& range : owners[i].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        const SlotStat& now = after.slots[static_cast<size_t>(slot)];
        const SlotStat& then = before.slots[static_cast<size_t>(slot)];
        loads[static_cast<size_t>(slot)] = delta(now.cpu_usec, then.cpu_usec);
        executing += loads[static_cast<size_t>(slot)];
        bytes += delta(now.bytes_in, then.bytes_in) + delta(now.bytes_out, then.bytes_out);
      }
    }
    // What the process spent besides executing (reading, parsing, replying) follows the bytes.
    const double process = after.process_cpu_usec[i] - before.process_cpu_usec[i];
    const double io = std::max(0.0, process - executing);
    if (bytes <= 0 || io <= 0) continue;
    for (const auto& range : owners[i].slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        const SlotStat& now = after.slots[static_cast<size_t>(slot)];
        const SlotStat& then = before.slots[static_cast<size_t>(slot)];
        loads[static_cast<size_t>(slot)] +=
            io * (delta(now.bytes_in, then.bytes_in) + delta(now.bytes_out, then.bytes_out)) /
            bytes;
      }
    }
  }
  return loads;
}

}  // namespace shardctl::launcher
