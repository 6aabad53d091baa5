// `shardctl bench run` and `shardctl bench compare`: the load generator is a program part of its
// own (bench/: its flags, help text and output are its own), so its entry here hands over the
// words after `bench` whole. This is how the CLI reaches it, and the only way.
#pragma once

#include <string>
#include <vector>

#include "common/completion.h"

namespace shardctl::launcher {

// Runs `bench run ...` or `bench compare ...` (`args`: the words after "bench") and returns the
// exit code (term/exit_codes.h). The load generator prints its own report.
int Bench(const std::vector<std::string>& args);

// `help bench` / `help bench compare`: the load generator's own help text.
std::string BenchHelp(const std::string& command);

// The flags of `bench run` ("run") or `bench compare` ("compare"), for shell completion.
std::vector<common::CompletionFlag> BenchFlags(const std::string& subcommand);

}  // namespace shardctl::launcher
