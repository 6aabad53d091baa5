// `shardctl help --complete WORDS...`: what bash and zsh offer for the word under the cursor
// (packaging/completion/ calls it on every Tab), built from the parsers' own tables so a new
// command or flag is offered the moment it is parsed.
#pragma once

#include <string>
#include <vector>

#include "common/completion.h"

namespace shardctl::launcher {

// Every subcommand with its flags (bench: run and compare; help: the command names; version).
common::CompletionNode CompletionTree();

// Prints the completion of `words` (the words after "shardctl", the last one being completed):
// deployment names for --name are read from --state-dir when the line gives one, else from the
// default state directory. Returns the exit code (always 0: a failed lookup offers nothing).
int RunComplete(const std::vector<std::string>& words);

}  // namespace shardctl::launcher
