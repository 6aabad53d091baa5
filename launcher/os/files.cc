#include "launcher/os/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>

namespace shardctl::launcher {

using common::Error;
using common::Result;

common::Status EnsureWritableDir(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return Error(dir.string() + ": cannot create the state directory (" + error.message() +
                 "; pass a writable --state-dir)");
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, error);
  if (access(dir.c_str(), W_OK | X_OK) != 0 || error) {
    return Error(dir.string() + ": state directory is not writable (" +
                 (error ? error.message() : std::string(strerror(errno))) +
                 "; pass a writable --state-dir or fix its permissions)");
  }
  return common::Ok();
}

common::Status WriteFileAtomically(const std::filesystem::path& path, const std::string& content) {
  auto temporary = path;
  temporary += ".tmp." + std::to_string(getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(temporary.string() + ": cannot write (" + strerror(errno) + ")");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const bool complete = written == content.size();
  close(fd);
  std::error_code error;
  if (!complete) {
    std::filesystem::remove(temporary, error);
    return Error(temporary.string() + ": cannot write (" + strerror(errno) + ")");
  }
  std::filesystem::rename(temporary, path, error);
  if (error) return Error(path.string() + ": cannot write (" + error.message() + ")");
  return common::Ok();
}

std::optional<uint64_t> AvailableBytes(const std::filesystem::path& path) {
  std::error_code error;
  const auto space = std::filesystem::space(path, error);
  if (error) return std::nullopt;
  return space.available;
}

Result<std::string> ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return Error(path.string() + ": cannot read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

common::Status WriteProcessId(const std::filesystem::path& path, const ProcessId& process) {
  return WriteFileAtomically(
      path, std::to_string(process.pid) + " " + std::to_string(process.start_time) + "\n");
}

std::optional<ProcessId> ReadProcessId(const std::filesystem::path& path) {
  std::ifstream in(path);
  ProcessId process;
  if (!(in >> process.pid >> process.start_time) || process.pid <= 0) return std::nullopt;
  return process;
}

bool NamesARunningProcess(const std::filesystem::path& path) {
  auto process = ReadProcessId(path);
  return process && IsRunning(*process);
}

OwnPidFile::OwnPidFile(std::filesystem::path path) : path_(std::move(path)) {
  if (auto self = IdentifyProcess(::getpid())) (void)WriteProcessId(path_, *self);
}

OwnPidFile::~OwnPidFile() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

std::string TailOfFile(const std::filesystem::path& path, int lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    tail.push_back(line);
    if (static_cast<int>(tail.size()) > lines) tail.pop_front();
  }
  std::string joined;
  for (const auto& kept : tail) joined += (joined.empty() ? "" : "\n") + kept;
  return joined;
}

bool FlockHeld(const std::filesystem::path& file) {
  struct stat about {};
  if (stat(file.c_str(), &about) != 0) return false;
  char id[64];
  std::snprintf(id, sizeof id, "%02x:%02x:%llu", major(about.st_dev), minor(about.st_dev),
                static_cast<unsigned long long>(about.st_ino));
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    if (line.find("FLOCK") == std::string::npos || line.find("->") != std::string::npos) continue;
    if (line.find(std::string(" ") + id + " ") != std::string::npos) return true;
  }
  return false;
}

}  // namespace shardctl::launcher
