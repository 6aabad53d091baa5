#include "launcher/ops/top_keys.h"

#include <algorithm>
#include <cstdio>

#include "common/numbers.h"
#include "common/slots.h"
#include "common/text.h"
#include "launcher/ops/cluster_view.h"
#include "launcher/ops/target.h"

namespace shardctl::launcher {
namespace {

using common::Error;

constexpr size_t kShownKeyLength = 40;

std::string Percent(double fraction) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

std::string Rate(std::optional<double> rate) {
  if (!rate) return "-";
  char text[24];
  std::snprintf(text, sizeof text, "%.0f", *rate);
  return text;
}

std::string ShownKey(const std::string& key) {
  std::string shown;
  for (char c : key) shown += common::PrintableByte(c);
  if (shown.size() > kShownKeyLength) shown = shown.substr(0, kShownKeyLength - 3) + "...";
  return shown;
}

}  // namespace

common::Result<std::vector<ProxyHotKey>> ParseProxyHotKeys(std::span<const std::string> flat) {
  if (flat.size() % 4 != 0) {
    return Error("PROXY HOTKEYS: " + std::to_string(flat.size()) +
                 " elements, not [key, requests, reads, error] entries");
  }
  std::vector<ProxyHotKey> keys;
  for (size_t i = 0; i < flat.size(); i += 4) {
    auto requests = common::ParseInteger<uint64_t>(flat[i + 1]);
    auto reads = common::ParseInteger<uint64_t>(flat[i + 2]);
    auto error = common::ParseInteger<uint64_t>(flat[i + 3]);
    if (!requests || !reads || !error) {
      return Error("PROXY HOTKEYS: entry " + std::to_string(i / 4) +
                   " has a count that is not a number");
    }
    keys.push_back({flat[i], *requests, *reads, *error});
  }
  return keys;
}

std::vector<ProxyHotKey> ReadMostlyKeys(std::span<const ProxyHotKey> keys, double min_reads) {
  std::vector<ProxyHotKey> read_mostly;
  for (const ProxyHotKey& key : keys) {
    // Reads are counted from when the key entered the table; `error` is the count it inherited
    // then, so what it was asked since is requests - error.
    const uint64_t since_entry = key.requests > key.error ? key.requests - key.error : 0;
    if (since_entry > 0 &&
        static_cast<double>(key.reads) >= min_reads * static_cast<double>(since_entry)) {
      read_mostly.push_back(key);
    }
  }
  return read_mostly;
}

common::Result<std::vector<ProxyHotKey>> ReadProxyHotKeys(const Access& access,
                                                          const Deployment& deployment,
                                                          size_t count,
                                                          std::chrono::milliseconds timeout) {
  if (!deployment.proxy.enabled()) return Error("the deployment runs no shardproxy");
  auto proxy =
      RedisConnection::Connect(access, deployment.plan.bind, deployment.proxy.port, timeout);
  if (!proxy.ok()) return proxy.error().Context("shardproxy");
  auto replies = proxy->PipelineLists({{"PROXY", "HOTKEYS", "COUNT", std::to_string(count)}});
  if (!replies.ok()) return replies.error().Context("shardproxy");
  if (!(*replies)[0].ok()) return (*replies)[0].error().Context("shardproxy: PROXY HOTKEYS");
  return ParseProxyHotKeys(*(*replies)[0]);
}

std::vector<TopKeyRow> TopKeyRows(const TopKeysSample* previous, const TopKeysSample& current) {
  double seconds = 0;
  if (previous != nullptr)
    seconds = std::chrono::duration<double>(current.at - previous->at).count();
  const bool rates = previous != nullptr && seconds > 0;
  const uint64_t all =
      rates ? current.requests - std::min(current.requests, previous->requests) : current.requests;
  std::vector<TopKeyRow> rows;
  for (const ProxyHotKey& key : current.keys) {
    TopKeyRow row{.key = key.key, .requests = key.requests, .slot = common::KeySlot(key.key)};
    uint64_t requests = key.requests;
    uint64_t reads = key.reads;
    if (rates) {
      auto before = std::find_if(previous->keys.begin(), previous->keys.end(),
                                 [&](const ProxyHotKey& old) { return old.key == key.key; });
      if (before != previous->keys.end()) {
        requests -= std::min(requests, before->requests);
        reads -= std::min(reads, before->reads);
      }
      row.requests_per_second = static_cast<double>(requests) / seconds;
    }
    row.share = all > 0 ? static_cast<double>(requests) / static_cast<double>(all) : 0;
    if (requests > 0) {
      row.reads_share = std::min(1.0, static_cast<double>(reads) / static_cast<double>(requests));
    }
    if (static_cast<size_t>(row.slot) < current.owner_of_slot.size()) {
      row.shard = current.owner_of_slot[static_cast<size_t>(row.slot)];
    }
    rows.push_back(std::move(row));
  }
  // Hottest over the interval first; the proxy's order (since its start) breaks ties.
  std::stable_sort(rows.begin(), rows.end(), [](const TopKeyRow& a, const TopKeyRow& b) {
    return a.requests_per_second.value_or(0) > b.requests_per_second.value_or(0);
  });
  return rows;
}

std::vector<std::string> TopKeysTable(const std::vector<TopKeyRow>& rows) {
  std::vector<std::string> lines;
  char line[160];
  std::snprintf(line, sizeof line, "%-40s %10s %7s %7s %6s %6s", "KEY", "REQ/S", "SHARE", "READS",
                "SLOT", "SHARD");
  lines.emplace_back(line);
  for (const TopKeyRow& row : rows) {
    std::snprintf(line, sizeof line, "%-40s %10s %7s %7s %6d %6s", ShownKey(row.key).c_str(),
                  Rate(row.requests_per_second).c_str(), Percent(row.share).c_str(),
                  row.reads_share ? Percent(*row.reads_share).c_str() : "-", row.slot,
                  row.shard >= 0 ? std::to_string(row.shard).c_str() : "?");
    lines.emplace_back(line);
  }
  return lines;
}

TopKeysFeed::TopKeysFeed(Deployment deployment, Access access, std::chrono::milliseconds timeout,
                         size_t keys)
    : deployment_(std::move(deployment)),
      access_(std::move(access)),
      timeout_(timeout),
      keys_(keys) {}

Outcome<TopKeysFeed> TopKeysFeed::Open(const Spec& spec, std::chrono::milliseconds timeout,
                                       size_t keys) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  if (!target->deployment->proxy.enabled()) {
    return Failure(Fault::kRuntime, "top --keys: deployment \"" + target->deployment->plan.name +
                                        "\" runs no shardproxy, whose counts these are (start "
                                        "the deployment with --proxy-port PORT)");
  }
  return TopKeysFeed(std::move(*target->deployment), std::move(target->access), timeout, keys);
}

common::Result<TopKeysSample> TopKeysFeed::Sample() {
  if (!proxy_) {
    auto connected =
        RedisConnection::Connect(access_, deployment_.plan.bind, deployment_.proxy.port, timeout_);
    if (!connected.ok()) return connected.error().Context("shardproxy");
    proxy_.emplace(std::move(*connected));
  }
  TopKeysSample sample{.at = std::chrono::steady_clock::now()};
  auto replies = proxy_->PipelineLists({{"PROXY", "HOTKEYS", "COUNT", std::to_string(keys_)}});
  auto info = replies.ok() ? proxy_->Run({"INFO", "hotkeys"}) : replies.error();
  if (!replies.ok() || !info.ok()) {
    proxy_.reset();  // reconnect next time
    return (replies.ok() ? info.error() : replies.error()).Context("shardproxy");
  }
  if (!(*replies)[0].ok()) return (*replies)[0].error().Context("shardproxy: PROXY HOTKEYS");
  auto keys = ParseProxyHotKeys(*(*replies)[0]);
  if (!keys.ok()) return keys.error();
  sample.keys = std::move(*keys);
  sample.requests = InfoNumber<uint64_t>(*info, "hotkeys_requests");
  // Who owns each slot now (slots move: asked every refresh, one CLUSTER NODES).
  if (auto view = ReadClusterView(access_, deployment_.plan, timeout_); view.ok()) {
    sample.owner_of_slot.assign(common::kSlotCount, -1);
    for (const ClusterNodeView& node : view->nodes) {
      if (!node.node.IsPrimary() || node.local_shard < 0) continue;
      for (const common::SlotRange& range : node.node.slots) {
        for (int slot = range.first; slot <= range.last; ++slot) {
          sample.owner_of_slot[static_cast<size_t>(slot)] = node.local_shard;
        }
      }
    }
  }
  return sample;
}

common::Result<std::vector<TopKeyRow>> TopKeysFeed::Next() {
  auto sample = Sample();
  if (!sample.ok()) return sample.error();
  auto rows = TopKeyRows(previous_ ? &*previous_ : nullptr, *sample);
  previous_ = std::move(*sample);
  return rows;
}

}  // namespace shardctl::launcher
