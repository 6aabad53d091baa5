#include "launcher/ops/resume_marker.h"

#include <algorithm>

#include "launcher/ops/serving_cluster.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {

bool ResumeMarker::LeftBefore() const {
  auto text = ReadWholeFile(file_);
  return text.ok() && *text == what_ + "\n";
}

common::Status ResumeMarker::Write() const { return WriteFileAtomically(file_, what_ + "\n"); }

void ResumeMarker::Remove() const {
  std::error_code ignored;
  std::filesystem::remove(file_, ignored);
}

Outcome<uint64_t> ResumeMarker::End(const std::optional<common::Error>& failure, bool interrupted,
                                    const std::string& command, const std::string& again,
                                    const Access& access,
                                    const std::vector<common::NodeLine>& primaries,
                                    const CopiedKeys& copied) const {
  if (interrupted || failure) {
    // What the operator needs to decide is how far it got: count what the primaries hold now
    // (the copy's own tally stops at the last whole batch, or is not kept at all).
    auto keys = TotalKeys(access, primaries);
    const std::string held =
        keys.ok()
            ? "; " + std::to_string(*keys) + " keys are in the deployment so far"
            : "; the keys in the deployment could not be counted (" + keys.error().message() + ")";
    const std::string what = interrupted ? command + " stopped (Ctrl-C)" : failure->message();
    return Failure(interrupted ? Fault::kInterrupted : Fault::kRuntime,
                   what + held + "; " + again + " to finish");
  }
  auto keys = TotalKeys(access, primaries);
  if (!keys.ok()) return keys.error();
  if (copied.before) {
    auto after = ReadKeyDepartures(access, primaries);
    if (!after.ok()) return after.error();
    const KeyDepartures since = after->Since(*copied.before);
    if (since.TotalEvicted() > 0) {
      return Failure(Fault::kRuntime,
                     command + ": the deployment evicted " + std::to_string(since.TotalEvicted()) +
                         " keys while they were " + copied.how +
                         " (its shards reached their maxmemory): what is " + copied.how +
                         " does not fit; " + command +
                         " into a deployment with a larger --memory or --shard-memory");
    }
    const uint64_t expired = std::min(copied.keys, since.TotalExpired());
    if (copied.keys > 0 && *keys < copied.keys - expired) {
      return Failure(
          Fault::kRuntime,
          command + " " + copied.how + " " + std::to_string(copied.keys) + " keys" +
              (expired > 0 ? " (" + std::to_string(expired) + " have expired since)" : "") +
              ", but the deployment holds " + std::to_string(*keys) +
              ": keys were lost while it ran (a primary restarted without its data, "
              "or keys were deleted); " +
              again + " to put them back");
    }
  }
  Remove();
  return *keys;
}

}  // namespace shardctl::launcher
