// `shardctl logs [SHARD] [-f]`: the supervisor's or a shard's log, optionally followed.
#include "launcher/ops/logs.h"

#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "launcher/cli/commands.h"
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
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto log = ReadLog(*spec, invocation.shard, invocation.lines);
  if (!log.ok()) return Fail(log.error());
  struct stat info;
  if (stat(log->path.c_str(), &info) != 0) return Fail({Fault::kRuntime, log->path.string()});
  if (!log->tail.empty()) std::cout << log->tail << "\n" << std::flush;
  if (!invocation.follow) return kExitOk;
  ino_t inode = info.st_ino;
  std::streamoff offset = info.st_size;
  for (;;) {  // until Ctrl-C, like tail -f
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    PrintAppended(log->path, inode, offset);
  }
}

}  // namespace shardctl::launcher
