// Command-line parsing for shardctl. Pure: argv in, an Invocation or a usage error out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/model/spec.h"
#include "launcher/term/exit_codes.h"

namespace shardctl::launcher {

struct Invocation {
  std::string command;            // plan, up, status, down, restart, logs, supervise, help, version
  std::vector<Setting> settings;  // spec flags, in the order given
  std::optional<std::string> config_file;
  std::optional<std::string> sysfs_root;
  std::optional<std::string> help_topic;  // set by --help or `help CMD`
  bool json = false;
  bool dry_run = false;
  bool foreground = false;
  bool purge = false;
  bool rolling = false;      // restart --rolling
  bool follow = false;       // logs -f
  int lines = 50;            // logs --lines
  std::optional<int> shard;  // restart SHARD, logs SHARD
  // rebalance / move-slots / scale
  std::string balance_by = "slots";        // --by
  std::string threshold = "2%";            // --threshold
  std::optional<int> to_shard;             // move-slots --to
  std::optional<std::string> slot_ranges;  // move-slots RANGE
  std::string migration = "auto";          // --migration auto|migrate|atomic
  int ready_fd = -1;
};

// Parses argv (without argv[0]). Errors are usage errors naming the flag and the fix.
common::Result<Invocation> ParseArgs(const std::vector<std::string>& args);

// Builds the spec: the --config file's settings first, then the flags'.
common::Result<Spec> ResolveSpec(const Invocation& invocation);

// The help text for a command ("" for the overview).
std::string HelpText(const std::string& command);

}  // namespace shardctl::launcher
