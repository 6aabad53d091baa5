#include "launcher/cluster/function_copy.h"

#include <chrono>

#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {

using common::Error;

namespace {

constexpr std::chrono::seconds kTimeout{30};

}  // namespace

common::Status CopyFunctions(const common::Endpoint& source, const Access& source_access,
                             const common::SlotTable& target, const Access& target_access) {
  auto from = RedisConnection::Connect(source_access, source.host, source.port, kTimeout);
  if (!from.ok()) return from.error();
  auto dumped = from->Run({"FUNCTION", "DUMP"});
  if (!dumped.ok()) {
    if (dumped.error().message().starts_with("ERR unknown command")) return common::Ok();
    return Error(source.ToString() + ": FUNCTION DUMP: " + dumped.error().message() +
                 " (its function libraries could not be read; they are copied with the keys)");
  }
  for (const auto& primary : target.primaries()) {
    auto to = RedisConnection::Connect(target_access, primary.host, primary.port, kTimeout);
    if (!to.ok()) return to.error();
    auto restored = to->Run({"FUNCTION", "RESTORE", *dumped, "REPLACE"});
    if (!restored.ok()) {
      return Error(primary.ToString() + ": FUNCTION RESTORE of " + source.ToString() +
                   "'s libraries: " + restored.error().message());
    }
  }
  return common::Ok();
}

}  // namespace shardctl::launcher
