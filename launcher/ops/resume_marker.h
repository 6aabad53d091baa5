// A copy into a deployment that a crash may cut short (restore, import) writes a marker naming
// what it copies before the first key and removes it after the last. The same command run again
// finds its marker and may copy into the keys it left (every key again, RESTORE REPLACE: none
// twice); any other copy into a deployment that holds keys is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/ops/outcome.h"
#include "launcher/ops/serving_cluster.h"

namespace shardctl::launcher {

// What a copy wrote, for the checks at its end: the keys of an unchanging source (a backup's
// files, an import's source that nothing wrote to meanwhile; 0: not counted), and the primaries'
// INFO stats when it began (any key evicted since fails it).
struct CopiedKeys {
  uint64_t keys = 0;
  std::optional<KeyDepartures> before;
  const char* how = "copied";  // how the keys went in, for the messages ("loaded": placed files)
};

class ResumeMarker {
 public:
  // `file` in the deployment's directory; `what` names the copy (the backup, the source).
  ResumeMarker(std::filesystem::path file, std::string what)
      : file_(std::move(file)), what_(std::move(what)) {}

  // A run of this same copy was cut short.
  bool LeftBefore() const;
  common::Status Write() const;
  void Remove() const;

  // Ends the copy: after a failure or Ctrl-C the marker stays and the error says to run `again`;
  // otherwise the keys the primaries hold now are counted and, when every key `copied` is there
  // but those that expired since (INFO stats), the marker goes. Fewer is a failure that keeps the
  // marker: keys were evicted (the deployment's memory is too small) or lost while copying (a
  // primary restarted without its data, a FLUSHALL), and the run again puts them back.
  Outcome<uint64_t> End(const std::optional<common::Error>& failure, bool interrupted,
                        const std::string& command, const std::string& again, const Access& access,
                        const std::vector<common::NodeLine>& primaries,
                        const CopiedKeys& copied = {}) const;

 private:
  std::filesystem::path file_;
  std::string what_;
};

}  // namespace shardctl::launcher
