// shardctl's flag table: one row per flag and command, from which ParseArgs parses, HelpText
// lists each command's options (and so the man page), and completion offers them.
#pragma once

#include <string>
#include <vector>

#include "common/flags.h"
#include "launcher/cli/args.h"

namespace shardctl::launcher {

// The rows of `command`, storing into `invocation`: the deployment's (--name, --state-dir,
// --config; for plan and up every spec key: group "deployment"), then its own (group ""), then
// --help. Empty for an unknown command.
std::vector<common::Flag> CommandRows(const std::string& command, Invocation& invocation);

// Every flag name some command takes (for "does not apply to" and "did you mean").
const std::vector<std::string>& AllFlagNames();

}  // namespace shardctl::launcher
