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
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - copied.began);
  const uint64_t may_be_gone = std::min(copied.keys, copied.ttls.MayHaveExpired(elapsed));
  if (*keys < copied.keys - may_be_gone) {
    return Failure(Fault::kRuntime,
                   command + " copied " + std::to_string(copied.keys) + " keys" +
                       (may_be_gone > 0 ? " (" + std::to_string(may_be_gone) +
                                              " with a TTL that may have run out since)"
                                        : "") +
                       ", but the deployment holds " + std::to_string(*keys) +
                       ": keys were lost while it ran (a primary restarted without its data, or "
                       "keys were deleted); " +
                       again + " to put them back");
  }
  Remove();
  return *keys;
}

}  // namespace shardctl::launcher
