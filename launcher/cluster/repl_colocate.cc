// ReplApplier::CoLocate: the I/O of common/repl_colocate.h (see repl_apply.h for the steps).
#include "common/repl_colocate.h"

#include <algorithm>
#include <map>
#include <optional>

#include "common/numbers.h"
#include "common/slots.h"
#include "launcher/cluster/repl_apply.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using common::Status;

// A key as RESTORE takes it back: its DUMP payload and its expire time (unix ms; -1: none). An
// expire time rather than a TTL: with expiry held (ReplApplier::HoldExpiry) a key past its TTL is
// still there, and a TTL of 0 would make it a key without one.
struct KeyImage {
  std::string payload;
  int64_t expire_at_ms = -1;
};

// PEXPIRETIME and DUMP replies of one key: nullopt when it does not exist.
Result<std::optional<KeyImage>> ImageOf(const std::string& key, const std::string& expire_time,
                                        std::string dump) {
  const std::optional<int64_t> at = common::ParseInteger<int64_t>(expire_time);
  if (!at)
    return Error("PEXPIRETIME " + key + ": '" + expire_time.substr(0, 32) + "' is not a time");
  if (*at == -2 || dump.empty()) return std::optional<KeyImage>();
  return std::optional<KeyImage>(KeyImage{.payload = std::move(dump), .expire_at_ms = *at});
}

// What makes `key` hold `image`: RESTORE REPLACE with its expire time, or DEL when the image is
// of none.
Command WriteImage(const std::string& key, const std::optional<KeyImage>& image) {
  if (!image) return {"DEL", key};
  if (image->expire_at_ms < 0) return {"RESTORE", key, "0", image->payload, "REPLACE"};
  return {"RESTORE", key, std::to_string(image->expire_at_ms), image->payload, "REPLACE", "ABSTTL"};
}

}  // namespace

Status ReplApplier::CoLocate(const common::CrossSlot& cross) {
  Result<common::Colocation> colocation = common::PlanColocation(cross.command);
  if (!colocation.ok()) return colocation.error();
  // The copies must see every write the stream made before this one.
  if (Status flushed = Flush(); !flushed.ok()) return flushed;
  const int home = table_.PrimaryFor(colocation->home_slot);

  // In: each key from its owner to its temporary; then the command; then, in the same round
  // trip, what the temporaries the command may have written hold now.
  std::vector<Command> at_home;
  for (const common::ColocatedKey& moved : colocation->moved) {
    auto read = RunAll(table_.PrimaryFor(common::KeySlot(moved.key)),
                       {{"PEXPIRETIME", moved.key}, {"DUMP", moved.key}});
    if (!read.ok()) return read.error();
    auto image = ImageOf(moved.key, (*read)[0], std::move((*read)[1]));
    if (!image.ok()) return image.error();
    at_home.push_back(WriteImage(moved.temporary, *image));
  }
  at_home.push_back(colocation->command);
  for (const common::ColocatedKey& moved : colocation->moved) {
    if (!moved.written) continue;
    at_home.push_back({"PEXPIRETIME", moved.temporary});
    at_home.push_back({"DUMP", moved.temporary});
  }
  auto ran = RunAll(home, at_home);
  if (!ran.ok()) return ran.error();

  // Back: each written temporary to its key, grouped by the key's owner.
  std::map<int, std::vector<Command>> back;
  size_t reply = colocation->moved.size() + 1;
  for (const common::ColocatedKey& moved : colocation->moved) {
    if (!moved.written) continue;
    auto image = ImageOf(moved.temporary, (*ran)[reply], std::move((*ran)[reply + 1]));
    if (!image.ok()) return image.error();
    reply += 2;
    back[table_.PrimaryFor(common::KeySlot(moved.key))].push_back(WriteImage(moved.key, *image));
  }
  for (const auto& [owner, commands] : back) {
    if (auto written = RunAll(owner, commands); !written.ok()) return written.error();
  }
  Command cleanup = {"DEL"};
  for (const common::ColocatedKey& moved : colocation->moved) cleanup.push_back(moved.temporary);
  if (cleanup.size() > 1) {
    if (auto cleaned = RunAll(home, {cleanup}); !cleaned.ok()) return cleaned.error();
  }
  ++co_located_;
  return common::Ok();
}

}  // namespace shardctl::launcher
