#include "launcher/ops/node_watch.h"

#include <chrono>

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using namespace std::chrono_literals;

// The "myself" line of CLUSTER NODES from its flags on, less what changes on its own (ping, pong,
// epoch, link): its role, primary and slots.
std::string MyselfLayout(const std::string& nodes) {
  size_t line = 0;
  while (line < nodes.size()) {
    size_t end = std::min(nodes.find('\n', line), nodes.size());
    const std::string text = nodes.substr(line, end - line);
    if (text.find("myself") != std::string::npos) {
      // id addr flags primary ping pong epoch link slots...: keep flags, primary and slots.
      std::vector<std::string> words;
      for (size_t at = 0; at < text.size();) {
        size_t space = std::min(text.find(' ', at), text.size());
        words.push_back(text.substr(at, space - at));
        at = space + 1;
      }
      std::string kept;
      for (size_t i = 2; i < words.size(); ++i) {
        if (i >= 4 && i <= 7) continue;  // ping, pong, epoch, link: change on their own
        kept += words[i] + " ";
      }
      return kept;
    }
    line = end + 1;
  }
  return "";
}

}  // namespace

common::Status NodeWatch::Start() {
  auto now = Read();
  if (!now.ok()) return now.error();
  first_ = std::move(now).value();
  return common::Ok();
}

common::Status NodeWatch::Check() {
  auto now = Read();
  if (!now.ok()) return now.error();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if ((*now)[i] != first_[i]) return Error(changed_(nodes_[i]));
  }
  return common::Ok();
}

Result<std::vector<std::string>> NodeWatch::Read() {
  connections_.resize(nodes_.size());
  std::vector<std::string> readings;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const common::Endpoint& node = nodes_[i];
    const std::string where = what_ + " " + node.ToString();
    auto& connection = connections_[i];
    Result<std::string> reading = Error("not read");
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!connection) {
        auto connected = RedisConnection::Connect(access_, node.host, node.port, 5s);
        if (!connected.ok()) return connected.error().Context(where);
        connection.emplace(std::move(connected).value());
      }
      reading = read_(*connection);
      if (reading.ok()) break;
      connection.reset();
    }
    if (!reading.ok()) return reading.error().Context(where);
    readings.push_back(std::move(reading).value());
  }
  return readings;
}

NodeWatch WatchSlotLayout(const Access& access, std::vector<common::Endpoint> primaries) {
  return NodeWatch(
      access, std::move(primaries), "source",
      [](RedisConnection& connection) -> Result<std::string> {
        auto nodes = connection.Run({"CLUSTER", "NODES"});
        if (!nodes.ok()) return nodes.error();
        return MyselfLayout(*nodes);
      },
      [](const common::Endpoint& node) {
        return "the source cluster moved slots or failed over at " + node.ToString() +
               " during the live import (keys moving between source primaries cannot be "
               "followed in order); run the import again into an empty deployment once the "
               "source is stable";
      });
}

NodeWatch WatchForRestarts(const Access& access, std::vector<common::Endpoint> primaries) {
  return NodeWatch(
      access, std::move(primaries), "the deployment's primary",
      [](RedisConnection& connection) -> Result<std::string> {
        auto info = connection.Run({"INFO", "server"});
        if (!info.ok()) return info.error();
        return InfoField(*info, "run_id");
      },
      [](const common::Endpoint& node) {
        return "the deployment's primary " + node.ToString() +
               " restarted during the live import (its run_id changed): it holds what its files "
               "held, not every key copied to it";
      });
}

}  // namespace shardctl::launcher
