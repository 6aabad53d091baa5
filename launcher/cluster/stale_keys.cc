#include "launcher/cluster/stale_keys.h"

#include <chrono>
#include <optional>
#include <string>

#include "launcher/cluster/expiry_hold.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using namespace std::chrono_literals;

constexpr auto kTimeout = 30s;
constexpr const char* kScanCount = "1000";

Result<RedisConnection> Open(const Access& access, const common::Endpoint& node, bool held) {
  auto connection = RedisConnection::Connect(access, node.host, node.port, kTimeout);
  if (!connection.ok()) return connection.error();
  if (held) {
    if (auto declared = connection->Run(kImportSourceOn); !declared.ok())
      return declared.error().Context(connection->address() + ": CLIENT IMPORT-SOURCE ON");
  }
  return connection;
}

// Of `keys`, those the snapshot does not hold.
Result<std::vector<std::string>> Missing(RedisConnection& snapshot,
                                         const std::vector<std::string>& keys) {
  std::vector<Command> exists;
  for (const auto& key : keys) exists.push_back({"EXISTS", key});
  auto replies = snapshot.Pipeline(exists);
  if (!replies.ok()) return replies.error();
  std::vector<std::string> missing;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!(*replies)[i].ok()) return (*replies)[i].error().Context(snapshot.address() + ": EXISTS");
    if (*(*replies)[i] == "0") missing.push_back(keys[i]);
  }
  return missing;
}

}  // namespace

Result<uint64_t> DeleteKeysNotInSnapshot(const StaleKeyScan& scan) {
  auto snapshot = Open({}, scan.snapshot, scan.expiry_held);
  if (!snapshot.ok()) return snapshot.error();
  uint64_t deleted = 0;
  for (const auto& node : scan.primaries) {
    auto primary = Open(scan.target_access, node, scan.expiry_held);
    if (!primary.ok()) return primary.error();
    std::string cursor = "0";
    do {
      if (scan.stop != nullptr && scan.stop->load()) {
        return Error("stopped (Ctrl-C) after deleting " + std::to_string(deleted) + " keys");
      }
      auto replies = primary->PipelineLists({{"SCAN", cursor, "COUNT", kScanCount}});
      if (!replies.ok()) return replies.error();
      auto& reply = replies->front();
      if (!reply.ok() || reply->empty()) {
        return Error(primary->address() + ": SCAN: " +
                     (reply.ok() ? std::string("empty reply") : reply.error().message()));
      }
      cursor = reply->front();
      std::vector<std::string> keys;
      for (size_t i = 1; i < reply->size(); ++i) {
        if (!scan.belongs || scan.belongs((*reply)[i])) keys.push_back(std::move((*reply)[i]));
      }
      if (keys.empty()) continue;
      auto missing = Missing(*snapshot, keys);
      if (!missing.ok()) return missing.error();
      if (missing->empty()) continue;
      // One UNLINK per key (a big one is freed in the background): the keys of one SCAN page may
      // hash to different slots.
      std::vector<Command> deletes;
      for (const auto& key : *missing) deletes.push_back({"UNLINK", key});
      auto done = primary->Pipeline(deletes);
      if (!done.ok()) return done.error();
      for (auto& one : *done) {
        if (!one.ok()) return one.error().Context(primary->address() + ": UNLINK");
      }
      deleted += missing->size();
    } while (cursor != "0");
  }
  return deleted;
}

}  // namespace shardctl::launcher
