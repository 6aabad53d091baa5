// Files shardctl keeps: atomic writes (readers never see half a file), whole-file reads, log tails,
// and "pid start_time" identity files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

// Creates `dir` (and parents) and proves it is writable; the error names the directory and the fix.
common::Status EnsureWritableDir(const std::filesystem::path& dir);

// Writes via a temporary file and rename, so readers never see half a file.
common::Status WriteFileAtomically(const std::filesystem::path& path, const std::string& content);

common::Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// The last `lines` lines of a log file (for error messages), "" when unreadable.
std::string TailOfFile(const std::filesystem::path& path, int lines);

// A process's identity file: "pid start_time".
common::Status WriteProcessId(const std::filesystem::path& path, const ProcessId& process);
// nullopt when the file is missing or unreadable.
std::optional<ProcessId> ReadProcessId(const std::filesystem::path& path);

}  // namespace shardctl::launcher
