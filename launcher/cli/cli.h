// shardctl's command-line entry point.
#pragma once

#include <string_view>

namespace shardctl::launcher {

// Runs one shardctl command and returns the process exit code (see term/exit_codes.h).
// `git_revision` is the commit the binary was built from ("3265a9b", "3265a9b-dirty" or
// "unknown"), shown by --version and in the man page.
int RunCli(int argc, char** argv, std::string_view git_revision);

}  // namespace shardctl::launcher
