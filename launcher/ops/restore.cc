#include "launcher/ops/restore.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "launcher/cluster/function_copy.h"
#include "launcher/cluster/key_copy.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/engine/engine.h"
#include "launcher/engine/rdb_check.h"
#include "launcher/ops/restore_placed.h"
#include "launcher/ops/resume_marker.h"
#include "launcher/ops/scratch_server.h"
#include "launcher/ops/serving_cluster.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/state/data_lock.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kFilesAtOnce = 2;  // scratch servers at once: each holds one file's keys in RAM
constexpr auto kLoadTimeout = 30min;
constexpr std::chrono::milliseconds kResumePatience = 30s;  // a killed run's shards to come back

// The restore of this backup, as its resume marker names it.
ResumeMarker MarkerOf(const DeploymentDir& dir, const std::filesystem::path& from,
                      const BackupManifest& manifest) {
  return ResumeMarker(dir.RestoreMarkerFile(),
                      nlohmann::json{{"from", std::filesystem::absolute(from).string()},
                                     {"created_unix_ms", manifest.created_unix_ms}}
                          .dump());
}

// Every file's engine format is one `engine` loads.
Outcome<bool> CheckFormats(const BackupManifest& manifest, const Engine& engine) {
  for (const auto& file : manifest.files) {
    auto format = ParseRdbFormat(file.rdb_format);
    if (!format) {
      return Failure::Usage(file.file + ": \"" + file.rdb_format + "\" is not an RDB format");
    }
    if (!ReadsRdbFormat(engine, *format)) {
      return Failure::Usage("the backup (" + manifest.engine + " " + manifest.engine_version +
                            ") is in RDB format " + file.rdb_format + ", which " + engine.Name() +
                            " " + engine.version + " cannot load (it reads " +
                            ReadableRdbFormats(engine) + "): restore into a deployment of " +
                            EnginesReading(*format));
    }
  }
  return true;
}

// Every file read to its end by the deployment's engine as its RDB checker (rdb_check.h), one
// per CPU (the deployment holds no key yet): a file that passes the manifest's checks but would
// stop its shard, or a scratch server, in the middle of its load is refused before this run
// changes anything.
Outcome<bool> CheckFilesLoad(const RestoreRequest& request, const BackupManifest& manifest,
                             const Target& target) {
  const Engine& engine = target.deployment->engine;
  const std::string checker = engine.Name() + " " + engine.version;
  if (request.on_progress) {
    request.on_progress("checking that " + checker + " loads each of the " +
                        std::to_string(manifest.files.size()) + " files");
  }
  std::vector<std::filesystem::path> files;
  for (const auto& file : manifest.files) files.push_back(request.from / file.file);
  const auto checks =
      CheckRdbFiles(CheckerBinary(*target.deployment, target.dir), files, kLoadTimeout,
                    std::thread::hardware_concurrency(), request.interrupted);
  if (request.interrupted != nullptr && request.interrupted->load()) {
    return Failure(Fault::kInterrupted,
                   "restore stopped (Ctrl-C) while checking the files; this run changed nothing");
  }
  for (size_t k = 0; k < checks.size(); ++k) {
    if (!checks[k].ok()) {
      return Failure(Fault::kRuntime, "checking " + files[k].string() + ": " +
                                          checks[k].error().message() +
                                          "; this run changed nothing");
    }
    if (!checks[k]->finding.empty()) {
      return Failure::Usage(files[k].string() + ": " + checker + " cannot load it, " +
                            checks[k]->finding +
                            " (the file is damaged although its size and checksum match the "
                            "manifest, or holds data this engine does not know); this run "
                            "changed nothing: restore another backup");
    }
    // backup made them equal (the file is the snapshot of the cut's instant): another count is a
    // file that is not the one the manifest describes, with its size and checksum rewritten.
    if (const std::string problem = RdbFileProblem(*checks[k], manifest.files[k].keys);
        !problem.empty()) {
      return Failure::Usage(files[k].string() + ": " + problem + " as the manifest says (" +
                            checker +
                            " read it to its end); this run changed nothing: restore "
                            "another backup");
    }
  }
  return true;
}

}  // namespace

Outcome<BackupManifest> ReadCheckedBackup(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir, error)) {
    return Failure::Usage("--from " + dir.string() +
                          ": no such directory (give the DIR a backup --to wrote)");
  }
  if (!std::filesystem::is_directory(dir, error)) {
    return Failure::Usage("--from " + dir.string() +
                          ": not a directory (give the DIR a backup --to wrote, not a file in it)");
  }
  auto text = ReadWholeFile(dir / "manifest.json");
  if (!text.ok()) {
    return Failure::Usage("--from " + dir.string() +
                          ": no manifest.json (not a shardctl backup, or one that did not finish)");
  }
  auto manifest = ParseManifest(*text);
  if (!manifest.ok()) return Failure::Usage(manifest.error().Context(dir.string()));
  for (const auto& file : manifest->files) {
    const auto path = dir / file.file;
    const auto size = std::filesystem::file_size(path, error);
    if (error) return Failure::Usage(path.string() + ": missing (" + error.message() + ")");
    if (size != file.bytes) {
      return Failure::Usage(path.string() + ": " + std::to_string(size) +
                            " bytes, the manifest says " + std::to_string(file.bytes) +
                            " (damaged or not this backup's file)");
    }
    auto sum = FileSha256(path);
    if (!sum.ok()) return Failure::Usage(sum.error());
    if (*sum != file.sha256) {
      return Failure::Usage(path.string() +
                            ": checksum does not match the manifest (damaged or not this "
                            "backup's file); nothing was changed");
    }
    // The format is judged by the file's own header: a manifest edited to claim an older one
    // would have every primary fail to load the file, over and over.
    std::string header(9, '\0');
    std::ifstream(path, std::ios::binary).read(header.data(), 9);
    if (header != file.rdb_format) {
      for (char& c : header) c = std::isprint(static_cast<unsigned char>(c)) ? c : '?';
      return Failure::Usage(path.string() + ": its header is \"" + header +
                            "\", the manifest says \"" + file.rdb_format +
                            "\" (not this backup's manifest); nothing was changed");
    }
  }
  return std::move(manifest).value();
}

namespace {

// The other-shape path: each file loaded by a scratch server, its keys copied to their owners.
// Returns the first failure, if any; the report's keys and expired count what was copied.
std::optional<Error> CopyFromScratchServers(const RestoreRequest& request, const Target& target,
                                            const ServingCluster& serving,
                                            const BackupManifest& manifest, RestoreReport& report,
                                            CopiedKeys& copied) {
  std::mutex mutex;
  std::optional<Error> failure;
  size_t next = 0;
  auto restore_files = [&] {
    while (true) {
      size_t k = 0;
      {
        std::lock_guard lock(mutex);
        if (failure || next == manifest.files.size()) return;
        k = next++;
      }
      const auto& file = manifest.files[k];
      auto outcome = [&]() -> common::Result<KeyCopyReport> {
        auto server =
            ScratchServer::Start(target.deployment->engine, request.from / file.file,
                                 RestoreScratchRoot(target.dir) / std::to_string(k), kLoadTimeout);
        if (!server.ok()) return server.error();
        if (auto functions = CopyFunctions(server->endpoint(), {}, serving.table, target.access);
            !functions.ok()) {
          return functions.error();
        }
        KeyCopyOptions options{.source_access = {}, .target_access = target.access};
        options.stop = request.interrupted;
        return CopyKeys(server->endpoint(), serving.table, options);
      }();
      std::lock_guard lock(mutex);
      if (!outcome.ok()) {
        if (!failure) failure = outcome.error().Context(file.file);
        return;
      }
      report.keys += outcome->keys;
      report.expired += outcome->vanished;
      copied.keys += outcome->keys;
      if (request.on_progress) {
        request.on_progress("restored " + file.file + " (" + std::to_string(outcome->keys) +
                            " keys); " + std::to_string(report.keys) + " keys so far");
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t i = 0; i < std::min(kFilesAtOnce, manifest.files.size()); ++i) {
    workers.emplace_back(restore_files);
  }
  for (auto& worker : workers) worker.join();
  std::error_code ignored;
  std::filesystem::remove_all(RestoreScratchRoot(target.dir), ignored);
  return failure;
}

// The same-shape path (restore_placed.h).
std::optional<Error> LoadInPlace(const RestoreRequest& request, const Target& target,
                                 const ServingCluster& serving, const LocalPrimaries& local,
                                 const BackupManifest& manifest, const Placement& placement,
                                 RestoreReport& report) {
  auto placed = RestoreByPlacing(target, serving.table, local.shard_of_primary, manifest,
                                 request.from, placement, request.on_progress);
  for (int shard : local.shard_of_primary) {  // a file no restarted shard took
    std::error_code ignored;
    std::filesystem::remove(target.dir.ShardPlacedSnapshot(shard), ignored);
  }
  if (!placed.ok()) return Error(placed.error().message());
  report.keys = placed->keys;
  report.replica_keys = placed->replica_keys;
  report.expired = manifest.keys > placed->keys ? manifest.keys - placed->keys : 0;
  return std::nullopt;
}

// How this backup goes onto this deployment: placed file by file when it has the same shape,
// every primary is local and no slot was moving at the cut, else copied (the reason goes in the
// report).
Placement ChooseMethod(const Target& target, const ServingCluster& serving,
                       const BackupManifest& manifest, LocalPrimaries& local) {
  if (!manifest.moving_slots.empty()) {
    // A placed file would bring keys of a slot its primary does not own (the check after a
    // placed load refuses that); copied, every key goes to its slot's owner.
    return {.primary_of_file = {},
            .why_not = "slots " + manifest.moving_slots +
                       " were moving between primaries when the backup was cut"};
  }
  local = FindLocalPrimaries(target, serving.primaries);
  if (!local.why_not.empty()) return {.primary_of_file = {}, .why_not = local.why_not};
  std::vector<std::string> file_slots;
  for (const auto& file : manifest.files) file_slots.push_back(file.slots);
  std::vector<std::vector<common::SlotRange>> primary_slots;
  for (const auto& primary : serving.primaries) primary_slots.push_back(primary.slots);
  return PlanPlacement(file_slots, primary_slots);
}

// What the end count (ResumeMarker::End) sets against what left the primaries by expiry or
// eviction meanwhile: for a copy the counters before it, for a placed load zero (each primary's
// counters begin with the process that loaded its file). A placed load is also checked shard by
// shard as it loads (restore_placed.h), but a primary that restarted after its load (killed, and
// back empty) would otherwise pass as restored.
Result<KeyDepartures> DeparturesBefore(const Target& target, const ServingCluster& serving,
                                       bool placed) {
  if (!placed) return ReadKeyDepartures(target.access, serving.primaries);
  return KeyDepartures{.expired = std::vector<uint64_t>(serving.primaries.size(), 0),
                       .evicted = std::vector<uint64_t>(serving.primaries.size(), 0)};
}

}  // namespace

Outcome<RestoreReport> Restore(const RestoreRequest& request) {
  const auto started = Clock::now();
  auto manifest = ReadCheckedBackup(request.from);
  if (!manifest.ok()) return manifest.error();
  auto target = LoadTarget(request.spec, {.one_engine_for = "restore"});
  if (!target.ok()) return target.error();
  auto data_lock = DataLock::Take(target->dir, "restore");
  if (!data_lock.ok()) return Classify(data_lock.error());
  const Deployment& deployment = *target->deployment;
  if (auto formats = CheckFormats(*manifest, deployment.engine); !formats.ok()) {
    return formats.error();
  }
  const ResumeMarker marker = MarkerOf(target->dir, request.from, *manifest);
  // A restore killed while it held primaries stopped to place their files leaves them restarting
  // for a few seconds: the run again waits for them rather than refusing at once.
  auto serving = marker.LeftBefore()
                     ? WaitForServingCluster(target->access, deployment.plan, kResumePatience)
                     : ReadServingCluster(target->access, deployment.plan);
  if (!serving.ok()) return serving.error();
  RestoreReport report{.manifest = *manifest, .target_shards = serving->primaries.size()};
  auto held = TotalKeys(target->access, serving->primaries);
  if (!held.ok()) return held.error();
  report.resumed = marker.LeftBefore();
  if (*held > 0 && !report.resumed) {
    return Failure::Usage("the deployment holds " + std::to_string(*held) +
                          " keys; restore goes only into an empty deployment (restore into a "
                          "new one with another --name, or shardctl down --purge and up again)");
  }
  LocalPrimaries local;
  const Placement placement = ChooseMethod(*target, *serving, *manifest, local);
  report.method = placement.ok() ? "placed" : "copied";
  report.why_copied = placement.why_not;
  if (auto loads = CheckFilesLoad(request, *manifest, *target); !loads.ok()) {
    return loads.error();
  }
  if (request.dry_run) return report;
  // A placed load restarts the primaries: not while `restart` does (restart also takes the data
  // lock this restore holds, so it is refused anyway; taken before the marker, so a refusal
  // changes nothing).
  std::optional<DataLock> restarts;
  if (placement.ok()) {
    auto taken = DataLock::Take(target->dir, "restore", DataLock::Kind::kRestarts);
    if (!taken.ok()) return Classify(taken.error());
    restarts.emplace(std::move(taken).value());
  }
  if (auto marked = marker.Write(); !marked.ok()) {
    return marked.error();
  }
  auto baseline = DeparturesBefore(*target, *serving, placement.ok());
  if (!baseline.ok()) return baseline.error();
  CopiedKeys copied{.keys = 0, .before = std::move(baseline).value()};
  const std::optional<Error> failure =
      placement.ok()
          ? LoadInPlace(request, *target, *serving, local, *manifest, placement, report)
          : CopyFromScratchServers(request, *target, *serving, *manifest, report, copied);
  if (placement.ok()) {
    copied.keys = report.keys;
    copied.how = "loaded";
  }
  if (failure && failure->message().starts_with("usage: ")) {
    // Not the environment's (files that do not match their manifest): a run again would do the
    // same, so no marker invites one; what was loaded stays (keys are never deleted here).
    marker.Remove();
    return Classify(*failure);
  }
  const bool interrupted = request.interrupted != nullptr && request.interrupted->load();
  auto after = marker.End(failure, interrupted, "restore", "run it again with the same --from",
                          target->access, serving->primaries, copied);
  if (!after.ok()) return after.error();
  report.keys_after = *after;
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return report;
}

}  // namespace shardctl::launcher
