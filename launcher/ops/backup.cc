#include "launcher/ops/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "common/numbers.h"
#include "common/slots.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/slot_migrations.h"
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
using common::Status;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// CLIENT PAUSE's own bound: if shardctl dies mid-pause, writes resume by themselves. Every fork
// must have started well inside it, or the attempt is abandoned.
constexpr auto kPauseBound = 10s;
constexpr auto kForkDeadline = 5s;
constexpr int kAttempts = 3;
constexpr auto kLinkTimeout = 10s;  // a primary sends a keepalive every second while it works

std::string Address(const common::NodeLine& node) { return node.address.ToString(); }

// Sends `command` to every connection, then reads every reply: the primaries act at once.
Result<std::vector<std::string>> OnEvery(std::vector<RedisConnection>& connections,
                                         const Command& command) {
  for (auto& connection : connections) {
    if (auto sent = connection.Send({command}); !sent.ok()) return sent.error();
  }
  std::vector<std::string> replies;
  for (auto& connection : connections) {
    auto reply = connection.Receive(1);
    if (!reply.ok()) return reply.error();
    if (!reply->front().ok()) {
      return reply->front().error().Context(connection.address() + ": " + command.front());
    }
    replies.push_back(*reply->front());
  }
  return replies;
}

// Waits (bounded) until no primary is forking: a snapshot asked for during another fork would
// wait for it, and the pause with it.
Status WaitForNoFork(std::vector<RedisConnection>& connections,
                     const std::function<void(const std::string&)>& progress) {
  const auto deadline = Clock::now() + 10min;
  while (true) {
    auto infos = OnEvery(connections, {"INFO", "persistence"});
    if (!infos.ok()) return infos.error();
    std::string busy;
    for (size_t i = 0; i < infos->size(); ++i) {
      if (InfoField((*infos)[i], "rdb_bgsave_in_progress") == "1" ||
          InfoField((*infos)[i], "aof_rewrite_in_progress") == "1") {
        busy = connections[i].address();
      }
    }
    if (busy.empty()) return common::Ok();
    if (Clock::now() > deadline) return Error(busy + " has been saving for 10 minutes");
    if (progress) progress("waiting for the save running on " + busy);
    std::this_thread::sleep_for(200ms);
  }
}

struct Cut {
  std::vector<SnapshotLink> links;
  std::vector<uint64_t> keys;
  std::set<int> moving;  // slots in the middle of a move at the cut (BackupManifest::moving_slots)
  std::chrono::milliseconds pause{0};
};

// What primary `before` had in motion, from its own CLUSTER NODES at the cut (only a node's own
// line shows the slots it migrates or imports).
Status NoteMoves(const common::NodeLine& before, const std::string& cluster_nodes,
                 std::set<int>& moving) {
  auto lines = common::ParseClusterNodes(cluster_nodes);
  if (!lines.ok()) return lines.error();
  const common::NodeLine* myself = common::FindMyself(*lines);
  if (myself == nullptr) return Error("no line for the node itself");
  NoteMovingSlots(before, *myself, moving);
  return common::Ok();
}

// Valkey's atomic slot migrations as the primaries list them. While one runs, the target holds a
// copy of the slots' keys that DBSIZE and SCAN do not show but its snapshot does: a cut then has
// those keys in two files, one copy behind the other (a restore would put back whichever it
// copied last). So a backup is not cut while one runs, and is cut again if one began meanwhile.
struct AtomicMigrations {
  std::set<std::string> names;          // every job listed, finished ones too
  std::vector<std::string> unfinished;  // "slots 15495-15495, snapshotting, from 127.0.0.1:7001"
};

Result<AtomicMigrations> SeeAtomicMigrations(std::vector<RedisConnection>& control) {
  AtomicMigrations seen;
  std::map<std::string, std::string> unfinished;  // by job name
  for (auto& connection : control) {
    auto jobs = ListSlotMigrations(connection);
    if (!jobs.ok()) {
      return jobs.error().Context(connection.address() + ": CLUSTER GETSLOTMIGRATIONS");
    }
    for (const auto& job : *jobs) {
      const std::string name = JobField(job, "name");
      seen.names.insert(name);
      if (SlotMigrationFinished(JobField(job, "state"))) continue;
      // Both ends list a job under one name; the source's entry (EXPORT) names the node where
      // it can be cancelled.
      const bool source = JobField(job, "operation") == "EXPORT";
      const std::string text = "slots " + JobField(job, "slot_ranges") + ", " +
                               JobField(job, "state") + ", " + (source ? "from " : "into ") +
                               connection.address();
      auto [entry, fresh] = unfinished.try_emplace(name, text);
      if (!fresh && source) entry->second = text;
    }
  }
  for (const auto& [name, text] : unfinished) seen.unfinished.push_back(text);
  return seen;
}

// The refusal while a migration runs: the operator's to wait for, nothing written yet.
Failure MigrationUnderWay(const AtomicMigrations& seen) {
  return Failure::Usage(
      "an atomic slot migration is under way (" + seen.unfinished.front() +
      (seen.unfinished.size() > 1 ? ", and " + std::to_string(seen.unfinished.size() - 1) + " more"
                                  : std::string()) +
      "): a backup cut now would hold those slots' keys twice, one copy stale; run backup again "
      "once CLUSTER GETSLOTMIGRATIONS shows it finished, or give it --wait; nothing was written");
}

// Waits for every primary of the cut to fork and tells `forked` (true: the child was seen, or is
// not ours to see). Each child is seen (and held beyond the fork limit) as soon as its primary has
// forked. A primary writes +FULLRESYNC just before it calls fork(), in the same call, so on a busy
// host the reply can arrive before the child exists. Where no child is seen yet, a PING goes out
// on the control connection: answered, it was served after that call returned, so the child is
// there by then (or has already ended). The PINGs are read after the last fork, one round trip in
// all: one per primary in turn, each to a primary sharing the CPUs with the children, stretched a
// 40-primary pause from ~60 ms to 300-450 ms.
Status SeeEveryFork(std::vector<SnapshotLink>& links, std::vector<RedisConnection>& control,
                    Clock::time_point deadline, const std::function<bool(size_t)>& forked) {
  std::vector<size_t> unseen;
  for (size_t i = 0; i < links.size(); ++i) {
    if (auto awaited = links[i].AwaitFork(deadline); !awaited.ok()) return awaited;
    if (forked(i)) continue;
    if (auto sent = control[i].Send({{"PING"}}); !sent.ok()) {
      return sent.error().Context(control[i].address());
    }
    unseen.push_back(i);
  }
  for (size_t i : unseen) {
    if (auto pong = control[i].Receive(1); !pong.ok()) {
      return pong.error().Context(control[i].address());
    }
    forked(i);
  }
  return common::Ok();
}

// One attempt at the cut: pause, count, start every fork, unpause. Writes are resumed on every
// path out.
Result<Cut> TakeCut(const Access& access, const std::vector<common::NodeLine>& primaries,
                    std::vector<RedisConnection>& control,
                    const std::function<bool(size_t)>& forked) {
  Cut cut;
  for (const auto& primary : primaries) {
    auto link =
        SnapshotLink::Open(access, primary.address.host, primary.address.port, kLinkTimeout);
    if (!link.ok()) return link.error();
    cut.links.push_back(std::move(link).value());
  }
  const auto paused_at = Clock::now();
  auto unpause = [&] { (void)OnEvery(control, {"CLIENT", "UNPAUSE"}); };
  // Every primary is asked to pause (and count its keys) at once; each one's snapshot is asked
  // for as soon as its own pause is in place (PSYNC cannot share the write: a primary refuses it
  // while replies are pending). That is enough for one cut: every fork happens inside its
  // primary's pause, and every pause begins before any ends (the unpause waits for every fork).
  const Command pause = {"CLIENT", "PAUSE",
                         std::to_string(std::chrono::milliseconds(kPauseBound).count()), "WRITE"};
  std::optional<Error> failed;
  for (auto& connection : control) {
    if (auto sent = connection.Send({pause, {"DBSIZE"}}); !sent.ok() && !failed) {
      failed = sent.error();
    }
  }
  for (size_t i = 0; !failed && i < control.size(); ++i) {
    auto replies = control[i].Receive(2);
    if (!replies.ok()) {
      failed = replies.error();
      break;
    }
    for (auto& reply : *replies) {
      if (!reply.ok() && !failed) failed = reply.error().Context(control[i].address());
    }
    if (failed) break;
    cut.keys.push_back(common::ParseInteger<uint64_t>(*(*replies)[1]).value_or(0));
    if (auto asked = cut.links[i].Request(); !asked.ok()) failed = asked.error();
  }
  if (!failed) {
    if (auto seen = SeeEveryFork(cut.links, control, paused_at + kForkDeadline, forked);
        !seen.ok()) {
      failed = seen.error();
    }
  }
  unpause();
  cut.pause = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - paused_at);
  if (failed) return *failed;
  // Which slots were moving, read just after the pause rather than in it (the pause is what
  // clients feel, 40 primaries' CLUSTER NODES would lengthen it). Nothing is missed that matters:
  // MIGRATE is a write and waited out the pause, so a slot half-moved at the cut is still marked
  // now, and one handed over since the slot map this backup started from has changed owner.
  auto nodes = OnEvery(control, {"CLUSTER", "NODES"});
  if (!nodes.ok()) return nodes.error();
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (auto noted = NoteMoves(primaries[i], (*nodes)[i], cut.moving); !noted.ok()) {
      return noted.error().Context(control[i].address() + ": CLUSTER NODES");
    }
  }
  return cut;
}

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
    if (auto writable = EnsureWritableDir(dir); !writable.ok()) {
      return Failure::Usage("--to " + writable.error().message());
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
  std::chrono::milliseconds waited{0};  // refused meanwhile, with --wait
};

// The migrations are looked for before the locks are taken: a backup waiting one out must not
// hold the data lock every second against a restore or scale started meanwhile. One that starts
// after this look is found by the cut's own (Backup).
Outcome<Clear> TryClear(const Spec& spec) {
  auto target = LoadTarget(spec, {});
  if (!target.ok()) return target.error();
  {
    auto serving = ReadServingCluster(target->access, target->deployment->plan);
    if (!serving.ok()) return serving.error();
    auto control = ConnectPrimaries(target->access, serving->primaries);
    if (!control.ok()) return control.error();
    auto migrations = SeeAtomicMigrations(*control);
    if (!migrations.ok()) return migrations.error();
    if (!migrations->unfinished.empty()) return MigrationUnderWay(*migrations);
  }
  auto data = DataLock::Take(target->dir, "backup");
  if (!data.ok()) return Classify(data.error());
  auto snapshots = DataLock::Take(target->dir, "backup", DataLock::Kind::kSnapshots);
  if (!snapshots.ok()) return Classify(snapshots.error());
  // Read again under the locks: a scale this backup waited for has changed the shards.
  auto locked = LoadTarget(spec, {});
  if (!locked.ok()) return locked.error();
  auto serving = ReadServingCluster(locked->access, locked->deployment->plan);
  if (!serving.ok()) return serving.error();
  return Clear{.data = std::move(data).value(),
               .snapshots = std::move(snapshots).value(),
               .target = std::move(locked).value(),
               .serving = std::move(serving).value()};
}

// TryClear(), and with --wait again every second while it is refused (another command holds the
// data, a migration runs) until `give_up`: a backup from cron that meets a rebalance then runs
// after it instead of failing. `told` is the refusal last reported as progress.
Outcome<Clear> WaitUntilClear(const BackupRequest& request, Clock::time_point first_try,
                              std::string& told) {
  const auto give_up = first_try + request.wait;
  while (true) {
    auto clear = TryClear(request.spec);
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - first_try);
    if (clear.ok()) {
      clear->waited = told.empty() ? std::chrono::milliseconds(0) : waited;
      return clear;
    }
    if (clear.error().fault() != Fault::kUsage || request.wait.count() == 0) return clear;
    if (Clock::now() >= give_up) {
      return Failure::Usage(clear.error().message() + " (waited " +
                            std::to_string(waited.count() / 1000) + " s)");
    }
    if (request.on_progress && clear.error().message() != told) {
      told = clear.error().message();
      request.on_progress("waiting: " + told);
    }
    for (auto until = std::min(give_up, Clock::now() + 1s); Clock::now() < until;) {
      if (request.interrupted != nullptr && request.interrupted->load()) {
        return Failure(Fault::kInterrupted,
                       "backup stopped (Ctrl-C) while waiting (" + clear.error().message() + ")");
      }
      std::this_thread::sleep_for(50ms);
    }
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
    struct BackupPidFile {
      std::filesystem::path file;
      ~BackupPidFile() {
        std::error_code ignored;
        std::filesystem::remove(file, ignored);
      }
    } pid_file{target_.dir.BackupPidFile()};
    if (auto self = IdentifyProcess(::getpid())) (void)WriteProcessId(pid_file.file, *self);

    BackupReport report{.dir = request_.to, .manifest = {}, .attempts = 0, .took = {}};
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
      auto control = ConnectPrimaries(target_.access, primaries_);
      if (!control.ok()) return control.error();
      auto cut = TryCut(*control);
      if (cut.ok() || met_a_migration_) return cut;
      if (attempts == kAttempts) return cut.error().Context("backup");
    }
  }

  Outcome<Cut> TryCut(std::vector<RedisConnection>& control) {
    if (auto idle = WaitForNoFork(control, request_.on_progress); !idle.ok()) return idle.error();
    auto before = SeeAtomicMigrations(control);
    if (!before.ok()) return before.error();
    if (!before->unfinished.empty()) {
      met_a_migration_ = true;
      return MigrationUnderWay(*before);
    }
    gate_.emplace(primaries_.size(), deployment_.durability.fork_limit);
    auto cut = TakeCut(target_.access, primaries_, control, [this](size_t k) { return Forked(k); });
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
    manifest.created_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
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

  const BackupRequest& request_;
  const Target& target_;
  const Deployment& deployment_;
  const std::vector<common::NodeLine>& primaries_;
  const std::vector<std::optional<ProcessId>> local_;
  bool created_ = false;  // DIR is ours to remove on failure
  std::optional<SnapshotGate> gate_;
  bool met_a_migration_ = false;
};

}  // namespace

Outcome<BackupReport> Backup(const BackupRequest& request) {
  const auto started = Clock::now();
  std::string told;  // the refusal last reported while waiting
  while (true) {
    // Taken before DIR is touched: a refused backup leaves nothing behind.
    auto cleared = WaitUntilClear(request, started, told);
    if (!cleared.ok()) return cleared.error();
    BackupPass pass(request, *cleared);
    auto report = pass.Run();
    // A migration that began between TryClear's look and the cut is waited out as one seen
    // before the locks: they are let go (this pass ends) while it runs.
    if (!report.ok() && pass.met_a_migration() && Clock::now() < started + request.wait) {
      if (request.on_progress && report.error().message() != told) {
        told = report.error().message();
        request.on_progress("waiting: " + told);
      }
      continue;
    }
    if (!report.ok()) return report.error();
    report->waited = cleared->waited;
    report->took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return report;
  }
}

}  // namespace shardctl::launcher
