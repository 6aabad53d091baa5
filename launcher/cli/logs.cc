// `shardctl logs [SHARD] [-f]`: the supervisor's or a shard's log, optionally followed.
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "launcher/cli/commands.h"
#include "launcher/os/files.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

// Prints what was appended to `path` since `offset`; starts over when the file was rotated
// (another inode, or shorter than before).
void PrintAppended(const std::filesystem::path& path, ino_t& inode, std::streamoff& offset) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return;
  if (info.st_ino != inode || info.st_size < offset) {
    inode = info.st_ino;
    offset = 0;
  }
  if (info.st_size == offset) return;
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  std::string chunk(static_cast<size_t>(info.st_size - offset), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  std::cout.write(chunk.data(), in.gcount()) << std::flush;
  offset += in.gcount();
}

}  // namespace

int RunLogs(const Invocation& invocation) {
  // No record is fine: the logs of an `up` that failed (and removed its record) are still there.
  auto loaded = LoadTarget(invocation, {.if_missing = TargetNeeds::IfMissing::kCarryOn});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const DeploymentDir& dir = std::get<Target>(loaded).dir;
  auto path = invocation.shard ? dir.ShardLog(*invocation.shard) : dir.SupervisorLog();
  struct stat info;
  if (stat(path.c_str(), &info) != 0) {
    PrintError(path.string() + ": no such log (check --name, --state-dir and the shard index)");
    return kExitRuntime;
  }
  std::string tail = TailOfFile(path, invocation.lines);
  if (!tail.empty()) std::cout << tail << "\n" << std::flush;
  if (!invocation.follow) return kExitOk;
  ino_t inode = info.st_ino;
  std::streamoff offset = info.st_size;
  for (;;) {  // until Ctrl-C, like tail -f
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    PrintAppended(path, inode, offset);
  }
}

}  // namespace shardctl::launcher
