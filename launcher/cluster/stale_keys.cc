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
    if (auto declared = DeclareImportSource(*connection); !declared.ok()) return declared.error();
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
      auto page = ScanPage(*primary, cursor, kScanCount);
      if (!page.ok()) return page.error();
      std::vector<std::string> keys;
      for (auto& key : *page) {
        if (!scan.belongs || scan.belongs(key)) keys.push_back(std::move(key));
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
