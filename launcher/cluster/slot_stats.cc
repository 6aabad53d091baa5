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

// Turns per-slot counting on where it is off; puts each node's setting back when this goes.
class CountingOn {
 public:
  explicit CountingOn(const Access& access) : access_(access) {}
  CountingOn(const CountingOn&) = delete;
  CountingOn& operator=(const CountingOn&) = delete;
  ~CountingOn() {
    for (const auto& node : switched_) {
      auto connection = RedisConnection::Connect(access_, node.host, node.port, kQueryTimeout);
      if (connection.ok()) (void)connection->Run({"CONFIG", "SET", kSetting, "no"});
    }
  }
  common::Status Enable(RedisConnection& connection, const MoveNode& node) {
    auto setting = connection.Run({"CONFIG", "GET", kSetting});
    if (!setting.ok() || setting->find(kSetting) == std::string::npos) {
      return Error(connection.address() +
                   " has no per-slot counters (CLUSTER SLOT-STATS needs Valkey 8 or Redis 8.2 and "
                   "newer): balance by keys instead (--by keys)");
    }
    if (setting->ends_with("yes")) return common::Ok();
    auto set = connection.Run({"CONFIG", "SET", kSetting, "yes"});
    if (!set.ok()) return set.error().Context(connection.address());
    switched_.push_back(node);
    return common::Ok();
  }

 private:
  const Access& access_;
  std::vector<MoveNode> switched_;
};

// SLOT-STATS of every owner's slots, one command per range.
Result<std::vector<double>> ReadCpu(std::vector<RedisConnection>& connections,
                                    const std::vector<SlotOwner>& owners) {
  std::vector<double> cpu(common::kSlotCount, 0.0);
  for (size_t i = 0; i < connections.size(); ++i) {
    for (const auto& range : owners[i].slots) {
      auto reply = connections[i].Run({"CLUSTER", "SLOT-STATS", "SLOTSRANGE",
                                       std::to_string(range.first), std::to_string(range.last)});
      if (!reply.ok()) return reply.error().Context(connections[i].address());
      auto stats = ParseSlotStats(*reply);
      if (!stats.ok()) return stats.error().Context(connections[i].address());
      for (const auto& [slot, stat] : *stats) {
        if (slot >= range.first && slot <= range.last) {
          cpu[static_cast<size_t>(slot)] = static_cast<double>(stat.cpu_usec);
        }
      }
    }
  }
  return cpu;
}

}  // namespace

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
  CountingOn counting(access);
  std::vector<RedisConnection> connections;
  for (const auto& node : nodes) {
    auto connection = RedisConnection::Connect(access, node.host, node.port, kQueryTimeout);
    if (!connection.ok()) return connection.error();
    if (auto enabled = counting.Enable(*connection, node); !enabled.ok()) return enabled.error();
    connections.push_back(std::move(connection).value());
  }
  auto before = ReadCpu(connections, owners);
  if (!before.ok()) return before.error();
  const auto end = Clock::now() + window;
  while (Clock::now() < end && !(stop != nullptr && stop->load())) {
    std::this_thread::sleep_for(std::min<Clock::duration>(100ms, end - Clock::now()));
  }
  if (stop != nullptr && stop->load()) return Error("interrupted while measuring");
  auto after = ReadCpu(connections, owners);
  if (!after.ok()) return after.error();
  std::vector<double> used(common::kSlotCount, 0.0);
  for (size_t slot = 0; slot < used.size(); ++slot) {
    used[slot] = std::max(0.0, (*after)[slot] - (*before)[slot]);
  }
  return used;
}

}  // namespace shardctl::launcher
