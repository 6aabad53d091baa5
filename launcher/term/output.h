// Human-readable output helpers: aligned tables and the one-line error format.
#pragma once

#include <string>
#include <vector>

namespace shardctl::launcher {

// Left-aligned columns separated by two spaces; the first row is the header.
std::string FormatTable(const std::vector<std::vector<std::string>>& rows);

// Prints every line of `message` to stderr as "shardctl: <line>".
void PrintError(const std::string& message);

// Prints "shardctl: warning: <text>" to stderr.
void PrintWarning(const std::string& text);

}  // namespace shardctl::launcher
