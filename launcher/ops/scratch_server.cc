#include "launcher/ops/scratch_server.h"

#include <thread>

#include "launcher/cluster/redis_client.h"
#include "launcher/os/files.h"
#include "launcher/os/ports.h"
#include "launcher/state/import_progress.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using namespace std::chrono_literals;

constexpr auto kStopGrace = 5s;

// The engine's last warning in its log ("# Can't handle RDB format version 12"), for the error.
std::string WhyItStopped(const std::filesystem::path& log) {
  std::string tail = TailOfFile(log, 5);
  std::string last;
  size_t at = 0;
  while (at < tail.size()) {
    const size_t end = std::min(tail.find('\n', at), tail.size());
    std::string line = tail.substr(at, end - at);
    if (const size_t mark = line.find(" # "); mark != std::string::npos)
      last = line.substr(mark + 3);
    at = end + 1;
  }
  return last.empty() ? "it exited (see " + log.string() + ")" : last;
}

}  // namespace

Result<ScratchServer> ScratchServer::Start(const Engine& engine,
                                           const std::filesystem::path& rdb_file,
                                           const std::filesystem::path& work_dir,
                                           std::chrono::milliseconds load_timeout,
                                           ScratchExpiry expiry) {
  RemoveScratchDir(work_dir);
  std::error_code error;
  std::filesystem::create_directories(work_dir, error);
  if (error) return Error(work_dir.string() + ": " + error.message());
  std::filesystem::create_symlink(std::filesystem::absolute(rdb_file), work_dir / "dump.rdb",
                                  error);
  if (error) return Error((work_dir / "dump.rdb").string() + ": " + error.message());
  auto port = UnusedLoopbackPort();
  if (!port.ok()) return port.error();
  const auto log = work_dir / "server.log";
  std::optional<ClosedLoopbackPort> no_primary;
  if (expiry == ScratchExpiry::kHeld) {
    auto closed = ClosedLoopbackPort::Open();
    if (!closed.ok()) return closed.error();
    no_primary.emplace(std::move(closed).value());
  }
  std::vector<std::string> argv = {engine.path.string(), "--port", std::to_string(*port), "--bind",
                                   "127.0.0.1", "--dir", work_dir.string(), "--dbfilename",
                                   "dump.rdb", "--save", "", "--appendonly", "no", "--maxmemory",
                                   "0", "--daemonize", "no", "--logfile", log.string(),
                                   // DUMP compresses every string with LZF unless told not to,
                                   // which is most of its cost; the payloads only cross loopback.
                                   "--rdbcompression", "no"};
  if (no_primary) {
    argv.insert(argv.end(), {"--import-mode", "yes", "--replicaof",
                             "127.0.0.1 " + std::to_string(no_primary->port())});
  }
  // A restore or import killed (kill -9) takes its scratch servers with it.
  auto spawned = SpawnPinned(SpawnOptions{
      .argv = std::move(argv), .output = work_dir / "server.out", .die_with_parent = true});
  if (!spawned.ok()) return spawned.error().Context(engine.path.string());
  ScratchServer server(*spawned, *port, work_dir);
  (void)WriteProcessId(work_dir / "pid", *spawned);
  const std::string what = rdb_file.filename().string() + ": ";
  const auto deadline = std::chrono::steady_clock::now() + load_timeout;
  while (true) {
    if (!IsRunning(server.process_)) {
      ReapIfExited(server.process_.pid);
      return Error(what + "the " + engine.Name() + " " + engine.version +
                   " server that loads it stopped: " + WhyItStopped(log));
    }
    auto connection = RedisConnection::Connect({}, "127.0.0.1", *port, 2s);
    if (connection.ok()) {
      auto info = connection->Run({"INFO", "persistence"});
      if (info.ok() && InfoField(*info, "loading") == "0") {
        if (!no_primary) return server;
        // Loaded as a replica, so keys past their TTL were kept; a primary from here on, in
        // import-mode, so none is expired.
        auto primary = connection->Run({"REPLICAOF", "NO", "ONE"});
        if (!primary.ok()) return primary.error().Context(what + "scratch server");
        return server;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Error(what + "not loaded after " + std::to_string(load_timeout.count() / 1000) + " s");
    }
    std::this_thread::sleep_for(50ms);
  }
}

ScratchServer::~ScratchServer() {
  if (work_dir_.empty()) return;
  StopProcesses({process_}, kStopGrace);
  std::error_code ignored;
  std::filesystem::remove_all(work_dir_, ignored);
}

void RemoveScratchDir(const std::filesystem::path& work_dir) {
  if (auto left = ReadProcessId(work_dir / "pid")) StopProcesses({*left}, kStopGrace);
  std::error_code ignored;
  std::filesystem::remove_all(work_dir, ignored);
}

std::filesystem::path RestoreScratchRoot(const DeploymentDir& dir) {
  return dir.root() / "restore-scratch";
}

std::filesystem::path LiveImportScratchDir(const DeploymentDir& dir) {
  return LiveImportDir(dir) / "scratch";
}

void StopLeftScratchServers(const DeploymentDir& dir) {
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(RestoreScratchRoot(dir), ignored)) {
    RemoveScratchDir(entry.path());
  }
  if (std::filesystem::exists(LiveImportScratchDir(dir), ignored)) {
    RemoveScratchDir(LiveImportScratchDir(dir));
  }
}

}  // namespace shardctl::launcher
