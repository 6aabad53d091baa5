// shardctl's command-line entry point.
#pragma once

namespace shardctl::launcher {

// Runs one shardctl command and returns the process exit code (see cli_args.h).
int RunCli(int argc, char** argv);

}  // namespace shardctl::launcher
