// Files shardctl keeps: atomic writes (readers never see half a file), whole-file reads, log tails,
// and "pid start_time" identity files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

// Creates `dir` (and parents), makes it private to its owner (mode 0700: the files below hold
// the shards' password) and proves it is writable; the error names the directory and the fix.
common::Status EnsureWritableDir(const std::filesystem::path& dir);

// Bytes an unprivileged process may still write on the filesystem holding `path`; nullopt when
// it cannot be asked (the path is gone).
std::optional<uint64_t> AvailableBytes(const std::filesystem::path& path);

// Writes via a temporary file and rename, so readers never see half a file. The file is mode
// 0600 from its creation on: state files may hold the password.
common::Status WriteFileAtomically(const std::filesystem::path& path, const std::string& content);

common::Result<std::string> ReadWholeFile(const std::filesystem::path& path);

// The last `lines` lines of a log file (for error messages), "" when unreadable.
std::string TailOfFile(const std::filesystem::path& path, int lines);

// A process's identity file: "pid start_time".
common::Status WriteProcessId(const std::filesystem::path& path, const ProcessId& process);
// nullopt when the file is missing or unreadable.
std::optional<ProcessId> ReadProcessId(const std::filesystem::path& path);

// True while the identity file at `path` names a live process (the same pid and start time, so a
// recycled pid does not count).
bool NamesARunningProcess(const std::filesystem::path& path);

// An identity file naming this process for as long as the object lives: how a command tells the
// supervisor "I hold this" (a backup's stopped snapshot children, a restart's carried snapshot).
// A command killed before its destructor runs leaves a file naming a dead process, which
// NamesARunningProcess reads as nobody.
class OwnPidFile {
 public:
  explicit OwnPidFile(std::filesystem::path path);
  ~OwnPidFile();
  OwnPidFile(const OwnPidFile&) = delete;
  OwnPidFile& operator=(const OwnPidFile&) = delete;

 private:
  std::filesystem::path path_;
};

// Whether any process holds an exclusive flock on `file`, as /proc/locks lists it ("1: FLOCK
// ADVISORY WRITE <pid> <major>:<minor>:<inode> 0 EOF"): read without taking the lock, which a
// probe would, refusing a command that takes it at that moment.
bool FlockHeld(const std::filesystem::path& file);

}  // namespace shardctl::launcher
