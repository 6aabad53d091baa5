#include "launcher/ops/resume_marker.h"

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
                                    const std::vector<common::NodeLine>& primaries) const {
  if (interrupted) {
    return Failure(Fault::kInterrupted, command + " stopped (Ctrl-C); " + again + " to finish");
  }
  if (failure) return Failure(Fault::kRuntime, failure->message() + "; " + again + " to finish");
  Remove();
  auto keys = TotalKeys(access, primaries);
  if (!keys.ok()) return keys.error();
  return *keys;
}

}  // namespace shardctl::launcher
