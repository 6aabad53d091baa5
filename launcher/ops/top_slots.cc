#include "launcher/ops/top_slots.h"

#include "common/slots.h"
#include "launcher/ops/rebalance.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {
namespace {

using Clock = std::chrono::steady_clock;

// SLOT-STATS of each of `ranges` over `connection`, into `stats`; false when the connection broke
// or the node refused (the caller reconnects next time).
bool ReadSlotStats(RedisConnection& connection, const std::vector<common::SlotRange>& ranges,
                   std::map<int, SlotStat>& stats) {
  std::vector<Command> commands;
  for (const auto& range : ranges) {
    commands.push_back({"CLUSTER", "SLOT-STATS", "SLOTSRANGE", std::to_string(range.first),
                        std::to_string(range.last)});
  }
  auto replies = connection.Pipeline(commands);
  if (!replies.ok()) return false;
  for (const auto& reply : *replies) {
    if (!reply.ok()) return false;
    auto parsed = ParseSlotStats(*reply);
    if (!parsed.ok()) return false;
    stats.merge(*parsed);
  }
  return true;
}

}  // namespace

SlotTopFeed::SlotTopFeed(Deployment deployment, Access access, std::chrono::milliseconds timeout)
    : deployment_(std::move(deployment)),
      access_(access),
      timeout_(timeout),
      counting_(std::move(access)) {}

SlotTopFeed::~SlotTopFeed() = default;

Outcome<std::unique_ptr<SlotTopFeed>> SlotTopFeed::Open(const Spec& spec,
                                                        std::chrono::milliseconds timeout) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  auto live = ReadLivePrimaries(target->access, target->deployment->plan, timeout);
  if (!live.ok()) return live.error().Context("top --slots");
  std::vector<Primary> primaries;
  for (size_t i = 0; i < live->nodes.size(); ++i) {
    primaries.push_back(
        {.node = live->nodes[i], .shard = live->owners[i].shard, .slots = live->owners[i].slots});
  }
  std::unique_ptr<SlotTopFeed> feed(
      new SlotTopFeed(std::move(*target->deployment), target->access, timeout));
  if (auto connected = feed->Connect(std::move(primaries)); !connected.ok()) {
    return connected.error().Context("top --slots");
  }
  feed->previous_ = feed->Read();
  feed->read_at_ = Clock::now();
  if (!feed->slot_stats_ && !feed->previous_.proxy) {
    const Engine& engine = feed->deployment_.engine;
    return common::Error("top --slots: per-slot load is not available on " + engine.Name() + " " +
                         engine.version +
                         " (CLUSTER SLOT-STATS needs Valkey >= 8 or Redis >= 8.2; or run the "
                         "deployment with a shardproxy that answers PROXY SLOTS)");
  }
  return feed;
}

common::Status SlotTopFeed::Connect(std::vector<Primary> primaries) {
  slot_stats_ = !primaries.empty();
  for (auto& primary : primaries) {
    auto connection =
        RedisConnection::Connect(access_, primary.node.host, primary.node.port, timeout_);
    if (!connection.ok()) return connection.error();
    auto enabled = counting_.Enable(*connection, primary.node);
    if (!enabled.ok()) return enabled.error();
    slot_stats_ = slot_stats_ && *enabled;
    primary.connection.emplace(std::move(connection).value());
  }
  primaries_ = std::move(primaries);
  return common::Ok();
}

SlotReading SlotTopFeed::Read() {
  SlotReading reading{.owner = std::vector<int>(common::kSlotCount, -1),
                      .cpu_counted = slot_stats_};
  for (auto& primary : primaries_) {
    for (const auto& range : primary.slots) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        reading.owner[static_cast<size_t>(slot)] = primary.shard;
      }
    }
    if (!slot_stats_) continue;
    if (!primary.connection) {
      auto connection =
          RedisConnection::Connect(access_, primary.node.host, primary.node.port, timeout_);
      if (connection.ok()) primary.connection.emplace(std::move(connection).value());
    }
    if (primary.connection && !ReadSlotStats(*primary.connection, primary.slots, reading.stats)) {
      primary.connection.reset();
    }
  }
  ReadProxy(reading);
  return reading;
}

void SlotTopFeed::ReadProxy(SlotReading& reading) {
  if (!deployment_.proxy.enabled()) return;
  if (!proxy_) {
    auto connection =
        RedisConnection::Connect(access_, deployment_.plan.bind, deployment_.proxy.port, timeout_);
    if (!connection.ok()) return;
    proxy_.emplace(std::move(connection).value());
  }
  auto reply = proxy_->Run({"PROXY", "SLOTS"});
  auto counts =
      reply.ok() ? ParseProxySlots(*reply) : common::Result<std::map<int, uint64_t>>(reply.error());
  if (!counts.ok()) {
    proxy_.reset();  // a proxy without the command, or a broken connection: ask afresh next time
    return;
  }
  reading.proxy = std::move(counts).value();
}

SlotTopFrame SlotTopFeed::Next(size_t limit) {
  SlotReading reading = Read();
  const auto now = Clock::now();
  SlotTopFrame frame{.seconds = std::chrono::duration<double>(now - read_at_).count(),
                     .slot_stats = slot_stats_,
                     .proxy = previous_.proxy.has_value() && reading.proxy.has_value()};
  frame.slots = HottestSlots(previous_, reading, frame.seconds, limit);
  previous_ = std::move(reading);
  read_at_ = now;
  return frame;
}

}  // namespace shardctl::launcher
