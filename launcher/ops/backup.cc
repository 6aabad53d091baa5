#include "launcher/ops/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "common/slots.h"
#include "common/wall_clock.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/engine/rdb_check.h"
#include "launcher/ops/backup_cut.h"
#include "launcher/ops/serving_cluster.h"
#include "launcher/ops/snapshot_gate.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/data_lock.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kAttempts = 3;                       // cuts tried before the backup gives up
constexpr std::chrono::minutes kCheckTimeout{30};  // reading one file back

std::string Address(const common::NodeLine& node) { return node.address.ToString(); }

// A backup's claim on DIR while it writes there (and what a killed one leaves behind, so that
// DIR is not empty and no second backup mixes its files with the first's).
std::filesystem::path ClaimOf(const std::filesystem::path& dir) {
  return dir / ".backup-in-progress";
}

// Removes what this backup wrote, so a failed backup leaves DIR as it found it.
void RemoveWritten(const std::filesystem::path& dir, size_t files, bool created) {
  std::error_code ignored;
  if (created) {
    std::filesystem::remove_all(dir, ignored);
    return;
  }
  for (size_t k = 0; k < files; ++k) std::filesystem::remove(dir / BackupFileName(k), ignored);
  std::filesystem::remove(ClaimOf(dir), ignored);
}

// Exactly one of two backups started into the same empty DIR at once gets it: the claim is
// created exclusively before anything is written, and the other changes nothing in DIR.
Outcome<bool> ClaimDir(const std::filesystem::path& dir) {
  const int fd = open(ClaimOf(dir).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  if (errno == EEXIST) {
    return Failure::Usage("--to " + dir.string() +
                          ": another backup is writing into it; give each backup a directory of "
                          "its own");
  }
  return Failure::Usage("--to " + dir.string() + ": " + std::strerror(errno));
}

// True when `dir` is `root` or inside it (both made absolute and normal, symlinks followed as
// far as they exist).
bool IsInside(const std::filesystem::path& dir, const std::filesystem::path& root) {
  std::error_code error;
  const auto inner = std::filesystem::weakly_canonical(std::filesystem::absolute(dir), error);
  if (error) return false;
  const auto outer = std::filesystem::weakly_canonical(std::filesystem::absolute(root), error);
  if (error || outer.empty()) return false;
  auto [end, rest] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return end == outer.end();
}

// DIR may not be inside the state directory: `down --purge` of a deployment deletes everything
// under its directory, and a backup there went with it (back up, purge, up with another shape,
// restore: nothing left to restore).
Outcome<bool> CheckOutsideState(const std::filesystem::path& dir, const DeploymentDir& deployment) {
  const auto state_root = deployment.root().parent_path();
  if (!IsInside(dir, state_root)) return true;
  return Failure::Usage(
      "--to " + dir.string() + ": inside the state directory " + state_root.string() +
      ", where down --purge would delete it; back up into a directory outside it");
}

// A restore cut short has copied part of a backup that exists elsewhere: a backup now would be
// taken, and later restored, as if it were the data.
Outcome<bool> CheckNoRestoreCutShort(const DeploymentDir& dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir.RestoreMarkerFile(), error)) return true;
  return Failure::Usage(
      "a restore into this deployment was cut short and holds only part of its "
      "keys (" +
      dir.RestoreMarkerFile().string() +
      "): run the same restore again to finish it, then back up");
}

// An import cut short is backed up (the deployment may hold the only copy of keys its source has
// lost since), and the report says what the backup holds.
std::string ImportCutShortWarning(const DeploymentDir& dir) {
  std::error_code error;
  if (!std::filesystem::exists(dir.ImportMarkerFile(), error)) return "";
  return "an import into this deployment was cut short (" + dir.ImportMarkerFile().string() +
         "): this backup holds the keys it had copied, not the whole source";
}

Outcome<bool> PrepareDir(const std::filesystem::path& dir) {
  std::error_code error;
  if (std::filesystem::exists(dir, error)) {
    if (!std::filesystem::is_directory(dir, error)) {
      return Failure::Usage("--to " + dir.string() + ": not a directory");
    }
    if (!std::filesystem::is_empty(dir, error)) {
      return Failure::Usage("--to " + dir.string() +
                            ": not empty; back up into a new or empty directory");
    }
    // The operator's directory keeps its mode (a shared mount point stays shared); the files
    // written into it are the owner's alone (0600).
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
      return Failure::Usage("--to " + dir.string() + ": " + std::strerror(errno) +
                            "; back up into a directory you can write to");
    }
    return false;
  }
  std::filesystem::create_directories(dir, error);
  if (error) return Failure::Usage("--to " + dir.string() + ": " + error.message());
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, error);
  return true;
}

// What a backup needs before it touches DIR: the deployment's locks, the deployment as it is
// under them, and a cluster serving with no atomic slot migration under way.
struct Clear {
  DataLock data;
  DataLock snapshots;
  Target target;
  ServingCluster serving;
};

// The atomic slot migrations the serving cluster's primaries list.
Result<AtomicMigrations> AtomicMigrationsOf(const Target& target) {
  auto serving = ReadServingCluster(target.access, target.deployment->plan);
  if (!serving.ok()) return serving.error();
  auto control = ConnectPrimaries(target.access, serving->primaries);
  if (!control.ok()) return control.error();
  return SeeAtomicMigrations(*control);
}

// The migrations are looked for before the locks are taken: a backup waiting one out must not
// hold the data lock every second against a restore or scale started meanwhile. One that starts
// after this look is found by the cut's own (Backup).
Outcome<Clear> TryClear(const Spec& spec) {
  auto target = LoadTarget(spec, {.one_engine_for = "backup"});
  if (!target.ok()) return target.error();
  auto migrations = AtomicMigrationsOf(*target);
  if (!migrations.ok()) {
    // A command holding the data (a placed restore restarts every primary) leaves the cluster
    // failing meanwhile: its refusal then, which --wait waits out, not a failure of ours.
    auto data = DataLock::Take(target->dir, "backup");
    if (!data.ok() && data.error().message().starts_with("usage: ")) {
      return Classify(data.error());
    }
    return migrations.error();
  }
  if (!migrations->unfinished.empty()) return MigrationUnderWay(*migrations);
  auto data = DataLock::Take(target->dir, "backup");
  if (!data.ok()) return Classify(data.error());
  auto snapshots = DataLock::Take(target->dir, "backup", DataLock::Kind::kSnapshots);
  if (!snapshots.ok()) return Classify(snapshots.error());
  // Read again under the locks: a scale this backup waited for has changed the shards.
  auto locked = LoadTarget(spec, {.one_engine_for = "backup"});
  if (!locked.ok()) return locked.error();
  auto serving = ReadServingCluster(locked->access, locked->deployment->plan);
  if (!serving.ok()) return serving.error();
  return Clear{.data = std::move(data).value(),
               .snapshots = std::move(snapshots).value(),
               .target = std::move(locked).value(),
               .serving = std::move(serving).value()};
}

// A backup's wait with --wait: since when, until when, and what it was last refused for.
struct Waiting {
  Clock::time_point since;
  Clock::time_point until;
  std::string told;      // the refusal last shown as progress
  bool refused = false;  // it has waited at all

  std::chrono::milliseconds waited() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since);
  }

  // `refusal` met: a usage failure is waited out (shown once as progress, then a second's sleep)
  // while --wait has time left; anything else, or a wait that is over, is returned.
  std::optional<Failure> Refused(const BackupRequest& request, const Failure& refusal) {
    if (refusal.fault() != Fault::kUsage || request.wait.count() == 0) return refusal;
    if (Clock::now() >= until) {
      return Failure::Usage(refusal.message() + " (waited " +
                            std::to_string(waited().count() / 1000) + " s)");
    }
    refused = true;
    if (request.on_progress && refusal.message() != told) {
      told = refusal.message();
      request.on_progress("waiting: " + told);
    }
    for (auto next = std::min(until, Clock::now() + 1s); Clock::now() < next;) {
      if (request.interrupted != nullptr && request.interrupted->load()) {
        return Failure(Fault::kInterrupted,
                       "backup stopped (Ctrl-C) while waiting (" + refusal.message() + ")");
      }
      std::this_thread::sleep_for(50ms);
    }
    return std::nullopt;
  }
};

// TryClear(), and with --wait again every second while it is refused (another command holds the
// data, a migration runs) until the wait is over: a backup from cron that meets a rebalance then
// runs after it instead of failing.
Outcome<Clear> WaitUntilClear(const BackupRequest& request, Waiting& waiting) {
  while (true) {
    auto clear = TryClear(request.spec);
    if (clear.ok()) return clear;
    if (auto final = waiting.Refused(request, clear.error())) return *final;
  }
}

// One backup under its locks: DIR prepared and claimed, the cut, the copies, the manifest. On
// every failure DIR is left as it was found.
class BackupPass {
 public:
  BackupPass(const BackupRequest& request, const Clear& clear)
      : request_(request),
        target_(clear.target),
        deployment_(*clear.target.deployment),
        primaries_(clear.serving.primaries),
        local_(LocalPrimaries()) {}

  Outcome<BackupReport> Run() {
    if (auto outside = CheckOutsideState(request_.to, target_.dir); !outside.ok()) {
      return outside.error();
    }
    if (auto whole = CheckNoRestoreCutShort(target_.dir); !whole.ok()) return whole.error();
    auto created = PrepareDir(request_.to);
    if (!created.ok()) return created.error();
    created_ = *created;
    if (auto claimed = ClaimDir(request_.to); !claimed.ok()) return claimed.error();
    // Children a killed backup left stopped go on; while this one runs, the supervisor leaves
    // the children it holds stopped (the pid file says whose they are).
    std::vector<ProcessId> running;
    for (const auto& process : local_) {
      if (process) running.push_back(*process);
    }
    ContinueStoppedChildren(running);
    pid_file_.emplace(target_.dir.BackupPidFile());

    BackupReport report{.dir = request_.to, .manifest = {}, .attempts = 0, .took = {}};
    report.warning = ImportCutShortWarning(target_.dir);
    auto cut = CutWithRetries(report.attempts);
    if (!cut.ok()) {
      RemoveWritten(request_.to, 0, created_);
      return cut.error();
    }
    if (request_.on_progress) {
      request_.on_progress("writes paused " + std::to_string(cut->pause.count()) + " ms; copying " +
                           std::to_string(primaries_.size()) + " snapshots");
    }
    auto manifest = CopySnapshots(*cut);
    if (!manifest.ok()) {
      RemoveWritten(request_.to, primaries_.size(), created_);
      return manifest.error();
    }
    report.manifest = std::move(manifest).value();
    const auto checked_from = Clock::now();
    if (auto whole = CheckSnapshots(cut->keys); !whole.ok()) {
      RemoveWritten(request_.to, primaries_.size(), created_);
      return whole.error();
    }
    report.checked =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - checked_from);
    if (request_.interrupted != nullptr && request_.interrupted->load()) {
      RemoveWritten(request_.to, primaries_.size(), created_);
      return Failure(Fault::kInterrupted, "backup stopped (Ctrl-C); nothing was kept");
    }
    if (auto saved =
            WriteFileAtomically(request_.to / "manifest.json", ManifestJson(report.manifest));
        !saved.ok()) {
      RemoveWritten(request_.to, primaries_.size(), created_);
      return saved.error();
    }
    std::error_code ignored;
    std::filesystem::remove(ClaimOf(request_.to), ignored);  // the manifest says it is whole now
    report.cut_realtime = cut->realtime;
    report.cut_realtime_refusal = cut->realtime_refusal;
    report.fork_limit = deployment_.durability.fork_limit;
    report.most_copying = gate_ ? gate_->most_running() : 0;
    return report;
  }

  // Run() was refused because an atomic slot migration was under way at the cut: one that began
  // after TryClear looked (Backup waits it out with --wait).
  bool met_a_migration() const { return met_a_migration_; }

 private:
  // This host's primaries' processes, in the primaries' order (none: another host's): their
  // snapshot children are held to the fork limit.
  std::vector<std::optional<ProcessId>> LocalPrimaries() const {
    std::vector<std::optional<ProcessId>> local(primaries_.size());
    for (size_t k = 0; k < primaries_.size(); ++k) {
      for (const auto& shard : deployment_.plan.shards) {
        if (shard.port == primaries_[k].address.port &&
            primaries_[k].address.host == deployment_.plan.bind) {
          local[k] = ReadProcessId(target_.dir.ShardPidFile(shard.index));
        }
      }
    }
    return local;
  }

  // True when primary k's child was seen (or it has none of ours to see: another host's).
  bool Forked(size_t k) {
    if (!local_[k]) {
      gate_->Forked(k, {});
      return true;
    }
    std::vector<pid_t> children = ChildrenOf(*local_[k]);
    const bool seen = !children.empty();
    gate_->Forked(k, std::move(children));
    return seen;
  }

  // The cut, tried again (fresh connections: a failed attempt may have left replies unread) up
  // to kAttempts times; a migration under way is final.
  Outcome<Cut> CutWithRetries(int& attempts) {
    for (attempts = 1;; ++attempts) {
      // A cut given up continues the children its gate held (~SnapshotGate): stopped, they
      // would keep their primaries "saving" and WaitForNoFork waiting.
      gate_.reset();
      auto cut = TryCut();
      if (cut.ok() || met_a_migration_) return cut;
      if (attempts == kAttempts) return cut.error().Context("backup");
    }
  }

  Outcome<Cut> TryCut() {
    auto connected = ConnectPrimaries(target_.access, primaries_);
    if (!connected.ok()) return connected.error();
    std::vector<RedisConnection>& control = *connected;
    if (auto idle = WaitForNoFork(control, request_.on_progress); !idle.ok()) return idle.error();
    auto before = SeeAtomicMigrations(control);
    if (!before.ok()) return before.error();
    if (!before->unfinished.empty()) {
      met_a_migration_ = true;
      return MigrationUnderWay(*before);
    }
    gate_.emplace(primaries_.size(), deployment_.durability.fork_limit);
    auto cut = TakeCut(target_.access, deployment_.engine, primaries_, control,
                       [this](size_t k) { return Forked(k); });
    if (!cut.ok()) return cut.error();
    // A migration begun since the look before may have copied keys by the fork: cut again.
    auto after = SeeAtomicMigrations(control);
    if (!after.ok()) return after.error();
    for (const auto& name : after->names) {
      if (!before->names.contains(name)) {
        return Failure(Error("an atomic slot migration began while the backup was cut"));
      }
    }
    return std::move(cut).value();
  }

  // Every snapshot at once, each primary's fork streaming to a thread of its own (the gate lets
  // at most fork-limit local children work), then what the manifest says of them.
  Outcome<BackupManifest> CopySnapshots(Cut& cut) {
    std::vector<std::optional<Result<SnapshotFile>>> written(primaries_.size());
    std::vector<std::thread> copiers;
    for (size_t k = 0; k < primaries_.size(); ++k) {
      copiers.emplace_back([&, k] {
        gate_->WaitTurn(k);
        written[k] = cut.links[k].CopyTo(request_.to / BackupFileName(k));
        gate_->Done(k);
      });
    }
    for (auto& copier : copiers) copier.join();
    BackupManifest manifest;
    manifest.deployment = request_.spec.name;
    manifest.engine = deployment_.engine.Name();
    manifest.engine_version = deployment_.engine.version;
    manifest.created_unix_ms = common::UnixMsNow();
    manifest.write_pause_ms = cut.pause.count();
    manifest.moving_slots = SlotListText(cut.moving);
    for (size_t k = 0; k < primaries_.size(); ++k) {
      if (!written[k]->ok()) {
        return written[k]->error().Context("backup of " + Address(primaries_[k]));
      }
      const SnapshotFile& file = written[k]->value();
      manifest.files.push_back({.file = BackupFileName(k),
                                .slots = common::FormatSlotRanges(primaries_[k].slots),
                                .node = Address(primaries_[k]),
                                .keys = cut.keys[k],
                                .bytes = file.bytes,
                                .sha256 = file.sha256,
                                .rdb_format = file.rdb_format});
      manifest.keys += cut.keys[k];
    }
    return manifest;
  }

  // Every file read back by the deployment's engine as its RDB checker (engine/rdb_check.h): it
  // loads, and it holds the keys its primary held at the cut (DBSIZE inside the pause, which holds
  // expiry and eviction too, so the snapshot forked then has exactly those). A file that fails
  // either was cut or written wrong: found while the backup can be taken again, not at a restore.
  Outcome<bool> CheckSnapshots(const std::vector<uint64_t>& keys_at_cut) {
    if (request_.on_progress) {
      request_.on_progress("reading the " + std::to_string(primaries_.size()) +
                           " files back with " + deployment_.engine.Name() + "'s checker");
    }
    std::vector<std::filesystem::path> files;
    for (size_t k = 0; k < primaries_.size(); ++k) files.push_back(request_.to / BackupFileName(k));
    // As many at once as snapshots may be written: the primaries serve clients meanwhile.
    const auto checks =
        CheckRdbFiles(CheckerBinary(deployment_, target_.dir), files, kCheckTimeout,
                      static_cast<size_t>(deployment_.durability.fork_limit), request_.interrupted);
    if (request_.interrupted != nullptr && request_.interrupted->load()) {
      return Failure(Fault::kInterrupted, "backup stopped (Ctrl-C); nothing was kept");
    }
    for (size_t k = 0; k < checks.size(); ++k) {
      const std::string what = "backup of " + Address(primaries_[k]) + ": " + BackupFileName(k);
      if (!checks[k].ok()) return checks[k].error().Context("checking " + what);
      if (auto problem = RdbFileProblem(*checks[k], keys_at_cut[k]); !problem.empty()) {
        // Either the file was written wrong, or it is not the snapshot of the cut's instant
        // (its primary held keys_at_cut[k] then): a backup to take again, not to keep.
        return Failure(Fault::kRuntime, what + " as written does not read back as the primary's " +
                                            std::to_string(keys_at_cut[k]) +
                                            " keys at the cut in " + deployment_.engine.Name() +
                                            " " + deployment_.engine.version + " (" + problem +
                                            "); nothing was kept: run the backup again");
      }
    }
    return true;
  }

  const BackupRequest& request_;
  const Target& target_;
  const Deployment& deployment_;
  const std::vector<common::NodeLine>& primaries_;
  const std::vector<std::optional<ProcessId>> local_;
  bool created_ = false;  // DIR is ours to remove on failure
  // This process's pid while the backup runs: the supervisor leaves the snapshot children it
  // holds stopped. Declared before the gate, so it outlives it (the gate continues them).
  std::optional<OwnPidFile> pid_file_;
  std::optional<SnapshotGate> gate_;
  bool met_a_migration_ = false;
};

}  // namespace

Outcome<BackupReport> Backup(const BackupRequest& request) {
  const auto started = Clock::now();
  Waiting waiting{.since = started, .until = started + request.wait};
  while (true) {
    // Taken before DIR is touched: a refused backup leaves nothing behind.
    auto cleared = WaitUntilClear(request, waiting);
    if (!cleared.ok()) return cleared.error();
    const auto waited = waiting.refused ? waiting.waited() : std::chrono::milliseconds(0);
    BackupPass pass(request, *cleared);
    auto report = pass.Run();
    if (!report.ok() && pass.met_a_migration()) {
      // A migration that began between TryClear's look and the cut is waited out as one seen
      // before the locks: they are let go (this pass ends) while it runs.
      if (auto final = waiting.Refused(request, report.error())) return *final;
      continue;
    }
    if (!report.ok()) return report.error();
    report->waited = waited;
    report->took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return report;
  }
}

}  // namespace shardctl::launcher
