#include "launcher/state/data_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "common/numbers.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {

using common::Error;

namespace {

// "pid N, shardctl <command>" as the holder wrote it, or "" while the note is not its own yet:
// the holder writes it just after taking the lock, so a note that is missing or names a process
// that is gone (an earlier holder's, or one refused on a second lock after writing this one) is
// read again for a moment.
std::string ReadHolder(int fd) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    char holder[128] = {};
    const ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
    std::string who = got > 0 ? std::string(holder, static_cast<size_t>(got)) : "";
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    const auto pid = who.starts_with("pid ")
                         ? common::ParseInteger<pid_t>(who.substr(4, who.find(',') - 4))
                         : std::nullopt;
    if (pid && *pid > 0 && (kill(*pid, 0) == 0 || errno == EPERM)) return who;
  }
  return "";
}

std::filesystem::path LockFile(const DeploymentDir& dir, DataLock::Kind kind) {
  using Kind = DataLock::Kind;
  return dir.root() / (kind == Kind::kData        ? "data.lock"
                       : kind == Kind::kSnapshots ? "snapshot.lock"
                                                  : "restart.lock");
}

}  // namespace

std::string DataLock::HolderOf(const DeploymentDir& dir, Kind kind) {
  // The note stays in the file after its writer lets go, and the writer may live on.
  if (!FlockHeld(LockFile(dir, kind))) return "";
  const int fd = open(LockFile(dir, kind).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string who = ReadHolder(fd);
  close(fd);
  return who;
}

common::Result<DataLock> DataLock::Take(const DeploymentDir& dir, std::string_view command,
                                        Kind kind) {
  const auto file = LockFile(dir, kind);
  const int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Error(file.string() + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const std::string who = ReadHolder(fd);
    close(fd);
    // A live import ends only when told to: waiting for it is no advice.
    const std::string end = who.find("import --live") != std::string::npos
                                ? "finish it (shardctl import --cutover) or stop it"
                                : "wait for it to end, or stop it";
    const std::string doing = kind == Kind::kRestarts ? "restarting this deployment's shards"
                                                      : "using this deployment's data";
    return Error("usage: another shardctl command is " + doing + " (" +
                 (who.empty() ? std::string("its pid unknown") : who) + "): " + end +
                 ", then run this again");
  }
  const std::string holder =
      "pid " + std::to_string(getpid()) + ", shardctl " + std::string(command) + "\n";
  const bool noted = ftruncate(fd, 0) == 0 &&
                     pwrite(fd, holder.data(), holder.size(), 0) == ssize_t(holder.size());
  (void)noted;  // the note only names us to a refused command: the lock holds without it
  return DataLock(fd);
}

DataLock& DataLock::operator=(DataLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void DataLock::Release() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace shardctl::launcher
