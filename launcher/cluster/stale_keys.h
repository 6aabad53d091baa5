// Keys a cut-short copy left that the source no longer has. A live import run again copies a new
// snapshot of the source over what the killed run copied (SET and RESTORE REPLACE); a key the
// source deleted in between would stay, so once the snapshot is copied, and before the writes
// after it are applied, every key here that the snapshot lacks is deleted: the deployment then
// holds what the snapshot holds (of the keys the snapshot answers for: `belongs`).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "common/endpoint.h"
#include "common/result.h"
#include "launcher/cluster/access.h"

namespace shardctl::launcher {

struct StaleKeyScan {
  common::Endpoint snapshot;  // a server holding the snapshot (the scratch server)
  std::vector<common::Endpoint> primaries;
  Access target_access;
  // The snapshot and the primaries hold expiry (cluster/expiry_hold.h): ask as an import source.
  bool expiry_held = false;
  // The keys the snapshot answers for (one primary's of a source cluster: its slots' keys).
  std::function<bool(std::string_view key)> belongs;
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C): stops after the page in hand
};

// Deletes (UNLINK) every key of the primaries that `belongs` to the snapshot and that it does not
// hold; returns how many. Stopped, it is an error saying how many so far.
common::Result<uint64_t> DeleteKeysNotInSnapshot(const StaleKeyScan& scan);

}  // namespace shardctl::launcher
