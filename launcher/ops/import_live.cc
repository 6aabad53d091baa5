#include "launcher/ops/import_live.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/numbers.h"
#include "common/repl_plan.h"
#include "common/repl_stream.h"
#include "common/slots.h"
#include "launcher/cluster/expiry_hold.h"
#include "launcher/cluster/function_copy.h"
#include "launcher/cluster/key_copy.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/repl_apply.h"
#include "launcher/cluster/stale_keys.h"
#include "launcher/ops/node_watch.h"
#include "launcher/ops/scratch_server.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using common::Status;
using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kFlushEvery = 512;   // commands queued before the cluster gets them
constexpr auto kReportEvery = 1s;     // progress.json and REPLCONF ACK
constexpr auto kSampleEvery = 100ms;  // the source's offset: the lag's resolution
constexpr auto kCatchUpLimit = 5min;  // cutover waits at most this long for lag 0
constexpr auto kForkWait = 5min;      // the source may be saving when the import starts

// The stream after the snapshot, from the link into a file, while the snapshot's keys are copied
// (a primary drops a replica whose unread output grows past its limit). Also acknowledges what
// was applied and samples the source's own offset, for the lag.
class StreamSpool {
 public:
  StreamSpool(SnapshotLink link, std::filesystem::path file, const Access& access,
              common::Endpoint source)
      : link_(std::move(link)), file_(std::move(file)), access_(access), source_(source) {}
  ~StreamSpool() { Stop(); }

  Status Start() {
    write_fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    read_fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (write_fd_ < 0 || read_fd_ < 0) return Error(file_.string() + ": cannot be written");
    if (auto acked = link_.Ack(link_.replication_offset()); !acked.ok()) return acked;
    thread_ = std::thread([this] { Run(); });
    return common::Ok();
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (write_fd_ >= 0) ::close(write_fd_);
    if (read_fd_ >= 0) ::close(read_fd_);
    write_fd_ = read_fd_ = -1;
  }

  // Up to `size` spooled bytes from `at`; "" when none yet.
  std::string Read(uint64_t at, size_t size) {
    const uint64_t have = spooled_.load();
    if (at >= have) return "";
    std::string bytes(static_cast<size_t>(std::min<uint64_t>(size, have - at)), '\0');
    const ssize_t got = ::pread(read_fd_, bytes.data(), bytes.size(), static_cast<off_t>(at));
    bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return bytes;
  }

  void SetApplied(int64_t offset) { applied_ = offset; }
  std::optional<Error> failure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }
  // The lag now: bytes the source wrote beyond what was applied, and for how long the oldest of
  // them has waited.
  std::pair<int64_t, int64_t> Lag() {
    std::lock_guard lock(mutex_);
    if (samples_.empty()) return {0, 0};
    const int64_t applied = applied_.load();
    const int64_t bytes = std::max<int64_t>(0, samples_.back().first - applied);
    for (const auto& [offset, seen] : samples_) {
      if (offset > applied) {
        return {bytes,
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - seen).count()};
      }
    }
    return {bytes, 0};
  }
  int64_t source_offset() {
    std::lock_guard lock(mutex_);
    return samples_.empty() ? 0 : samples_.back().first;
  }
  // Asks the source for its offset now (cutover: the target to reach).
  Result<int64_t> SampleSource() {
    std::lock_guard probing(probe_mutex_);  // the spool thread and a cutover both ask
    if (!probe_) {
      auto connection = RedisConnection::Connect(access_, source_.host, source_.port, 5s);
      if (!connection.ok()) return connection.error();
      probe_.emplace(std::move(connection).value());
    }
    auto info = probe_->Run({"INFO", "replication"});
    if (!info.ok()) {
      probe_.reset();
      return info.error();
    }
    const int64_t offset = InfoNumber<int64_t>(*info, "master_repl_offset", -1);
    std::lock_guard lock(mutex_);
    if (samples_.empty() || samples_.back().first != offset)
      samples_.emplace_back(offset, Clock::now());
    while (samples_.size() > 6000) samples_.pop_front();  // 10 minutes of history
    return offset;
  }

 private:
  void Run() {
    auto next_report = Clock::now();
    auto next_sample = Clock::now();
    while (!stop_) {
      auto bytes = link_.ReadStream(20ms);
      if (!bytes.ok()) {
        Fail(bytes.error());
        return;
      }
      if (!bytes->empty()) {
        if (::write(write_fd_, bytes->data(), bytes->size()) !=
            static_cast<ssize_t>(bytes->size())) {
          Fail(Error(file_.string() + ": write failed (disk full?)"));
          return;
        }
        spooled_ += bytes->size();
      }
      if (Clock::now() >= next_report) {
        next_report = Clock::now() + kReportEvery;
        if (auto acked = link_.Ack(applied_.load()); !acked.ok()) {
          Fail(acked.error());
          return;
        }
      }
      if (Clock::now() >= next_sample) {
        next_sample = Clock::now() + kSampleEvery;
        (void)SampleSource();
      }
    }
  }
  void Fail(Error error) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = Error("source stream: " + error.message());
  }

  SnapshotLink link_;
  std::filesystem::path file_;
  Access access_;
  common::Endpoint source_;
  std::mutex probe_mutex_;
  std::optional<RedisConnection> probe_;
  int write_fd_ = -1;
  int read_fd_ = -1;
  std::atomic<uint64_t> spooled_{0};
  std::atomic<int64_t> applied_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::optional<Error> failure_;
  std::deque<std::pair<int64_t, Clock::time_point>> samples_;
};

// Applies the spooled stream to the cluster, command by command, in order.
class StreamApplier {
 public:
  StreamApplier(StreamSpool& spool, int64_t start_offset, ReplApplier applier)
      : spool_(spool),
        parser_(start_offset),
        applier_(std::move(applier)),
        applied_offset_(start_offset) {}

  // Applies what has been spooled so far; true when it applied anything.
  Result<bool> Step() {
    std::string bytes = spool_.Read(read_, 256 * 1024);
    if (bytes.empty()) return false;
    read_ += bytes.size();
    parser_.Feed(bytes);
    int64_t safe = applied_offset_;
    while (true) {
      auto next = parser_.Next();
      if (!next.ok()) return next.error();
      if (!next->has_value()) break;
      common::ReplCommand command = std::move(**next);
      auto plan = planner_.Plan(std::move(command.args));
      if (auto refusal = applier_.Refusal(plan)) {
        // The import stops at this command, none of it applied; what came before it is the
        // source's too (dropping it with the queue lost writes acknowledged before this one).
        if (auto flushed = Flush(safe); !flushed.ok()) return flushed.error();
        return Error(*refusal);
      }
      if (auto applied = applier_.Apply(plan); !applied.ok()) return applied.error();
      // Inside a transaction nothing is applied before EXEC: the offset stays before MULTI.
      if (!planner_.in_transaction()) safe = command.offset;
      if (applier_.queued() >= kFlushEvery) {
        if (auto flushed = Flush(safe); !flushed.ok()) return flushed.error();
      }
    }
    if (auto flushed = Flush(safe); !flushed.ok()) return flushed.error();
    return true;
  }
  int64_t applied_offset() const { return applied_offset_; }
  uint64_t commands() const { return planner_.counts().commands; }
  uint64_t co_located() const { return applier_.co_located(); }

 private:
  Status Flush(int64_t safe) {
    if (auto flushed = applier_.Flush(); !flushed.ok()) return flushed;
    applied_offset_ = safe;
    spool_.SetApplied(safe);
    return common::Ok();
  }

  StreamSpool& spool_;
  common::ReplStreamParser parser_;
  common::ReplPlanner planner_;
  ReplApplier applier_;
  uint64_t read_ = 0;
  int64_t applied_offset_;
};

class ProgressFile {
 public:
  ProgressFile(const DeploymentDir& dir, std::string source) : dir_(dir) {
    progress_.source = std::move(source);
    progress_.pid = static_cast<int>(::getpid());
  }
  LiveImportProgress& progress() { return progress_; }
  void Write() {
    (void)WriteLiveImport(dir_, progress_);
    written_ = Clock::now();
  }
  // Keys copied so far, written at most once a second (the copy calls this every batch).
  void Copied(uint64_t keys) {
    progress_.keys = keys;
    if (Clock::now() - written_ >= kReportEvery) Write();
  }

 private:
  const DeploymentDir& dir_;
  LiveImportProgress progress_;
  Clock::time_point written_;
};

// The primaries' expiry held (cluster/expiry_hold.h) for as long as the object lives. Its record
// (state/import_progress.h) names this process and the primaries, and goes only once every one
// let go: a live import killed before, or one that could not reach a primary then, leaves it, and
// the supervisor or the next live import sets import-mode back to no.
class HeldExpiry {
 public:
  static Result<std::unique_ptr<HeldExpiry>> Start(const Access& access,
                                                   std::vector<common::Endpoint> primaries,
                                                   const DeploymentDir& dir) {
    auto self = IdentifyProcess(::getpid());
    if (!self) return Error("cannot read this process's start time from /proc");
    if (auto written = WriteExpiryHold(dir, {.holder = *self, .nodes = primaries}); !written.ok())
      return written.error();
    std::unique_ptr<HeldExpiry> held(new HeldExpiry(access, std::move(primaries), dir));
    if (auto set = SetExpiryHeld(access, held->primaries_, true); !set.ok()) return set.error();
    return held;
  }
  ~HeldExpiry() { (void)Release(); }

  // Lets the primaries expire again; an error (a primary that did not answer) leaves the record.
  Status Release() {
    if (released_) return common::Ok();
    if (auto set = SetExpiryHeld(access_, primaries_, false); !set.ok()) return set;
    released_ = true;
    RemoveExpiryHold(dir_);
    return common::Ok();
  }

 private:
  HeldExpiry(const Access& access, std::vector<common::Endpoint> primaries,
             const DeploymentDir& dir)
      : access_(access), primaries_(std::move(primaries)), dir_(dir) {}

  Access access_;
  std::vector<common::Endpoint> primaries_;
  const DeploymentDir& dir_;
  bool released_ = false;
};

bool CutoverAsked(const DeploymentDir& dir) {
  return std::filesystem::exists(LiveImportDir(dir) / "cutover");
}

// One source primary followed: its stream spooled from the snapshot's offset, then applied.
struct FollowedSource {
  common::Endpoint endpoint;
  std::filesystem::path snapshot;  // its RDB until its keys are copied
  int64_t start_offset = 0;
  std::unique_ptr<StreamSpool> spool;
  std::unique_ptr<StreamApplier> applier;
  std::optional<int64_t> cutover_target;  // its offset when the cutover was asked
};

// Snapshot of one source primary into `dir`, its later writes spooling from then on.
// `valkey_loader`: the deployment's Valkey version when the source runs Valkey (the snapshot is
// loaded by a scratch server of the deployment's engine), else "".
Result<std::unique_ptr<FollowedSource>> StartFollowing(const Access& access,
                                                       const common::Endpoint& endpoint,
                                                       const std::filesystem::path& dir,
                                                       size_t index,
                                                       const std::string& valkey_loader) {
  const std::string where = "source " + endpoint.ToString();
  auto link = SnapshotLink::Open(access, endpoint.host, endpoint.port, 10s,
                                 SnapshotLink::Mode::kFollow, valkey_loader);
  if (!link.ok()) return link.error().Context(where);
  if (auto asked = link->Request(); !asked.ok()) return asked.error().Context(where);
  if (auto forked = link->AwaitFork(Clock::now() + kForkWait); !forked.ok())
    return forked.error().Context(where);
  auto followed = std::make_unique<FollowedSource>();
  followed->endpoint = endpoint;
  followed->snapshot = dir / ("source-" + std::to_string(index) + ".rdb");
  if (auto copied = link->CopyTo(followed->snapshot); !copied.ok())
    return copied.error().Context(where + ": snapshot");
  followed->start_offset = link->replication_offset();
  followed->spool = std::make_unique<StreamSpool>(
      std::move(link).value(), dir / ("stream-" + std::to_string(index) + ".spool"), access,
      endpoint);
  if (auto spooling = followed->spool->Start(); !spooling.ok()) return spooling.error();
  followed->spool->SetApplied(followed->start_offset);
  return followed;
}

// The snapshot's keys, through a scratch server of the deployment's engine; the file is deleted
// once copied. A run again from the same source processes (report.resumed_same_source) then
// deletes the keys here that the snapshot lacks, left by the cut-short run (cluster/stale_keys.h):
// of those here, the ones `belongs` to this snapshot; `unchanged` says first that the source's
// slots and the deployment's primaries are as they were (a slot moved since would be another
// primary's keys, a primary restarted lost what it was given).
Status CopySnapshot(const ImportRequest& request, const Target& target,
                    const ServingCluster& serving, const FollowedSource& followed,
                    const std::function<bool(std::string_view)>& belongs,
                    const std::function<Status()>& unchanged, ProgressFile& progress,
                    ImportReport& report) {
  const uint64_t before = report.keys;
  {
    const bool held = report.expiry_held;
    auto server = ScratchServer::Start(target.deployment->engine, followed.snapshot,
                                       LiveImportScratchDir(target.dir), 30min,
                                       held ? ScratchExpiry::kHeld : ScratchExpiry::kAsUsual);
    if (!server.ok()) return server.error().Context("source snapshot");
    if (auto functions = CopyFunctions(server->endpoint(), {}, serving.table, target.access);
        !functions.ok()) {
      return functions.error().Context("source snapshot");
    }
    KeyCopyOptions options{.source_access = {}, .target_access = target.access};
    options.stop = request.interrupted;
    options.expiry_held = held;
    options.on_progress = [&](uint64_t keys, uint64_t) {
      progress.Copied(before + keys);
      if (request.on_progress) request.on_progress(before + keys, report.source_keys);
    };
    auto copied = CopyKeys(server->endpoint(), serving.table, options);
    if (!copied.ok()) return copied.error();
    report.keys += copied->keys;
    report.bytes += copied->bytes;
    report.vanished += copied->vanished;
    if (auto same = unchanged(); !same.ok()) return same;
    if (report.resumed_same_source) {
      StaleKeyScan scan{.snapshot = server->endpoint(),
                        .primaries = {},
                        .target_access = target.access,
                        .expiry_held = held,
                        .belongs = belongs,
                        .stop = request.interrupted};
      for (const auto& primary : serving.primaries) scan.primaries.push_back(primary.address);
      auto deleted = DeleteKeysNotInSnapshot(scan);
      if (!deleted.ok()) return deleted.error().Context("deleting what the cut-short run left");
      report.stale_removed += *deleted;
    }
  }
  std::error_code error;
  std::filesystem::remove(followed.snapshot, error);
  return common::Ok();
}

// A cluster's slot table as `node` states it (CLUSTER NODES).
Result<common::SlotTable> ReadSlotTable(const Access& access, const common::Endpoint& node) {
  auto connection = RedisConnection::Connect(access, node.host, node.port, 5s);
  if (!connection.ok()) return connection.error();
  auto nodes = connection->Run({"CLUSTER", "NODES"});
  if (!nodes.ok()) return nodes.error().Context(connection->address());
  return common::SlotTable::FromClusterNodes(*nodes);
}

// The keys the snapshot of `source` answers for (the prune of a run again: cluster/stale_keys.h):
// all (empty) from a standalone source; from a primary of a source cluster (`slots`), the keys of
// its slots.
std::function<bool(std::string_view)> KeysOfSnapshot(const std::optional<common::SlotTable>& slots,
                                                     const common::Endpoint& source) {
  if (!slots) return {};
  return [&slots, source](std::string_view key) {
    const int owner = slots->PrimaryFor(common::KeySlot(key));
    return owner != common::SlotTable::kNoNode &&
           static_cast<const common::Endpoint&>(slots->primaries()[static_cast<size_t>(owner)]) ==
               source;
  };
}

// The lag over every source: bytes summed, the oldest wait.
std::pair<int64_t, int64_t> TotalLag(const std::vector<std::unique_ptr<FollowedSource>>& sources) {
  std::pair<int64_t, int64_t> total{0, 0};
  for (const auto& source : sources) {
    const auto [bytes, ms] = source->spool->Lag();
    total.first += bytes;
    total.second = std::max(total.second, ms);
  }
  return total;
}

struct FollowTotals {
  uint64_t commands = 0;
  uint64_t co_located = 0;
  int64_t applied = 0;  // offsets summed: one number that grows as any stream is applied
  int64_t source = 0;
};

FollowTotals Totals(const std::vector<std::unique_ptr<FollowedSource>>& sources) {
  FollowTotals totals;
  for (const auto& source : sources) {
    totals.commands += source->applier->commands();
    totals.co_located += source->applier->co_located();
    totals.applied += source->applier->applied_offset();
    totals.source += source->spool->source_offset();
  }
  return totals;
}

// Applies every source's writes until a cutover (or Ctrl-C) asked and every stream caught up.
// Returns when the cutover was asked.
Result<Clock::time_point> FollowUntilCaughtUp(const ImportRequest& request, const Target& target,
                                              std::vector<std::unique_ptr<FollowedSource>>& sources,
                                              NodeWatch* watch, NodeWatch& restarts,
                                              ProgressFile& progress) {
  progress.progress().phase = "following";
  std::optional<Clock::time_point> cutover_at;
  auto next_report = Clock::now();
  while (true) {
    bool stepped_any = false;
    for (auto& source : sources) {
      if (auto failure = source->spool->failure()) return *failure;
      auto stepped = source->applier->Step();
      if (!stepped.ok()) return stepped.error().Context("applying the source's writes");
      stepped_any = stepped_any || *stepped;
    }
    const bool stopping =
        CutoverAsked(target.dir) || (request.interrupted != nullptr && request.interrupted->load());
    if (stopping && !cutover_at) {
      cutover_at = Clock::now();
      progress.progress().phase = "cutover";
    }
    if (cutover_at) {
      // Caught up when everything each source had written when asked is applied.
      bool caught_up = true;
      for (auto& source : sources) {
        if (!source->cutover_target) {
          if (auto offset = source->spool->SampleSource(); offset.ok())
            source->cutover_target = *offset;
        }
        caught_up = caught_up && source->cutover_target &&
                    source->applier->applied_offset() >= *source->cutover_target;
      }
      if (caught_up) {
        // Whatever went to a primary that restarted since the last look is not there.
        if (auto same = restarts.Check(); !same.ok()) return same.error();
        return *cutover_at;
      }
      if (Clock::now() - *cutover_at > kCatchUpLimit) {
        return Error("cutover: still " + std::to_string(TotalLag(sources).first) +
                     " bytes behind the source after 5 minutes; stop writes to the source and "
                     "run it again");
      }
    }
    if (Clock::now() >= next_report) {
      next_report = Clock::now() + kReportEvery;
      if (watch != nullptr) {
        if (auto stable = watch->Check(); !stable.ok()) return stable.error();
      }
      if (auto same = restarts.Check(); !same.ok()) return same.error();
      const FollowTotals totals = Totals(sources);
      auto& now = progress.progress();
      now.commands = totals.commands;
      now.co_located = totals.co_located;
      now.applied_offset = totals.applied;
      now.source_offset = totals.source;
      std::tie(now.lag_bytes, now.lag_ms) = TotalLag(sources);
      progress.Write();
      if (request.on_following) {
        request.on_following(now.phase + ": " + std::to_string(now.commands) +
                             " writes applied, lag " + std::to_string(now.lag_ms) + " ms / " +
                             std::to_string(now.lag_bytes) + " bytes (import --cutover ends it)");
      }
    }
    if (!stepped_any) std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

Outcome<ImportReport> FollowSource(const ImportRequest& request, const Access& source_access,
                                   const std::vector<common::Endpoint>& sources,
                                   const Target& target, const ServingCluster& serving,
                                   ImportReport report) {
  const auto started = Clock::now();
  const auto dir = LiveImportDir(target.dir);
  std::vector<common::Endpoint> primaries;
  for (const auto& primary : serving.primaries) primaries.push_back(primary.address);
  // A live import killed while it held expiry left its nodes so, and its record is in `dir`:
  // they are let go before the record goes (held again below when this one holds it).
  if (auto left = ReadExpiryHold(target.dir)) {
    left->nodes.insert(left->nodes.end(), primaries.begin(), primaries.end());
    if (auto released = SetExpiryHeld(target.access, left->nodes, false); !released.ok())
      return released.error().Context("releasing what a killed live import held");
  }
  // A live import killed while it copied left its scratch server running, holding the source's
  // whole snapshot in memory; its pid file is in `dir`, so it is stopped before `dir` goes.
  RemoveScratchDir(LiveImportScratchDir(target.dir));
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  std::filesystem::create_directories(dir, error);
  if (error) return Error(dir.string() + ": " + error.message());
  ProgressFile progress(target.dir, report.source);
  std::unique_ptr<HeldExpiry> held_expiry;
  auto fail = [&](const Failure& failure) {
    // Let go first: status then says so (a release that fails leaves the record, for later).
    if (held_expiry) progress.progress().expiry_held = !held_expiry->Release().ok();
    progress.progress().phase = failure.fault() == Fault::kInterrupted ? "stopped" : "failed";
    progress.progress().error = failure.message();
    progress.Write();
    return failure;
  };
  // First: a primary that restarts after this (and so lost import-mode too) is seen.
  NodeWatch restarts = WatchForRestarts(target.access, primaries);
  if (auto watching = restarts.Start(); !watching.ok()) return fail(watching.error());
  // Held before the snapshot: a key copied from it must not expire here before the source's
  // writes after it arrive.
  if (report.expiry_held) {
    auto held = HeldExpiry::Start(target.access, primaries, target.dir);
    if (!held.ok()) return fail(held.error());
    held_expiry = std::move(held).value();
    progress.progress().expiry_held = true;
  }
  progress.progress().phase = "snapshot";
  progress.Write();
  std::optional<NodeWatch> watch;
  if (report.source_is_cluster) {
    watch.emplace(WatchSlotLayout(source_access, sources));
    if (auto watching = watch->Start(); !watching.ok()) return fail(watching.error());
  }
  // Which keys each snapshot answers for: all, or a source cluster's primary its slots' keys.
  std::optional<common::SlotTable> source_slots;
  if (report.source_is_cluster && report.resumed_same_source) {
    auto slots = ReadSlotTable(source_access, sources.front());
    if (!slots.ok()) return fail(slots.error().Context("source"));
    source_slots.emplace(std::move(slots).value());
  }
  // Every source's snapshot first, so each stream spools from its snapshot on while keys copy.
  std::vector<std::unique_ptr<FollowedSource>> followed;
  // A Valkey 9 standalone source sends its own format (VALKEY080) to a Valkey 9 deployment's
  // scratch server. Not to a source cluster: a Valkey 8+ primary counts a replica that announced
  // a version among those CLUSTER SETSLOT waits for, and this link acknowledges only what it has
  // applied, so the source's own slot moves would fail with NOREPLICAS while the import runs.
  const std::string valkey_loader =
      !report.source_is_cluster && report.source_engine.starts_with("valkey ")
          ? SnapshotLink::LoaderVersion(target.deployment->engine)
          : "";
  for (size_t i = 0; i < sources.size(); ++i) {
    auto started_one = StartFollowing(source_access, sources[i], dir, i, valkey_loader);
    if (!started_one.ok()) return fail(started_one.error());
    followed.push_back(std::move(started_one).value());
  }
  progress.progress().phase = "copying";
  progress.Write();
  const auto unchanged = [&]() -> Status {
    if (watch) {
      if (auto stable = watch->Check(); !stable.ok()) return stable;
    }
    return restarts.Check();
  };
  for (auto& source : followed) {
    if (auto copied = CopySnapshot(request, target, serving, *source,
                                   KeysOfSnapshot(source_slots, source->endpoint), unchanged,
                                   progress, report);
        !copied.ok()) {
      // Ctrl-C here stops the copy (while following, it is the cutover).
      const bool interrupted = request.interrupted != nullptr && request.interrupted->load();
      return fail(interrupted ? Failure(Fault::kInterrupted, copied.error().message())
                              : Failure(copied.error()));
    }
    ReplApplier applier(serving.table, target.access, std::chrono::seconds(30));
    if (followed.size() > 1) applier.OneOfSeveralStreams();
    if (report.expiry_held) applier.HoldExpiry();
    source->applier =
        std::make_unique<StreamApplier>(*source->spool, source->start_offset, std::move(applier));
  }
  progress.progress().keys = report.keys;

  auto cutover_at =
      FollowUntilCaughtUp(request, target, followed, watch ? &*watch : nullptr, restarts, progress);
  if (!cutover_at.ok()) return fail(Failure(Fault::kRuntime, cutover_at.error().message()));
  for (auto& source : followed) source->spool->Stop();
  const FollowTotals totals = Totals(followed);
  int64_t targets = 0;
  for (const auto& source : followed) targets += *source->cutover_target;
  report.live = true;
  report.commands_applied = totals.commands;
  report.commands_co_located = totals.co_located;
  report.final_lag_bytes = std::max<int64_t>(0, targets - totals.applied);
  report.cutover_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - *cutover_at).count();
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  bool still_held = false;
  if (held_expiry) {
    // Before "done": a cutover returns on it, and then the primaries expire as usual.
    if (auto released = held_expiry->Release(); !released.ok()) {
      still_held = true;
      report.warnings.push_back(released.error().message() +
                                " (the supervisor sets it back once they answer)");
      if (request.on_warning) request.on_warning(report.warnings.back());
    }
  }
  auto& done = progress.progress();
  done.phase = "done";
  done.expiry_held = still_held;
  done.commands = report.commands_applied;
  done.co_located = report.commands_co_located;
  done.applied_offset = totals.applied;
  done.source_offset = targets;
  done.lag_bytes = report.final_lag_bytes;
  done.lag_ms = 0;
  progress.Write();
  for (size_t i = 0; i < followed.size(); ++i) {
    std::filesystem::remove(dir / ("stream-" + std::to_string(i) + ".spool"), error);
  }
  std::filesystem::remove(dir / "cutover", error);
  return report;
}

Outcome<ImportReport> Cutover(const Target& target) {
  auto running = ReadLiveImport(target.dir);
  if (running && running->phase == "stopped") {
    return Failure::Usage("the live import from " + running->source +
                          " was stopped before its cutover (" + running->error +
                          "), then import --cutover");
  }
  if (!running || running->phase == "done" || running->phase == "failed" ||
      !ProcessStartTime(running->pid)) {
    return Failure::Usage(
        "no live import of this deployment is running (start one with import "
        "--from HOST:PORT --live)");
  }
  const auto asked = Clock::now();
  if (auto written = WriteFileAtomically(LiveImportDir(target.dir) / "cutover", "cutover\n");
      !written.ok()) {
    return written.error();
  }
  while (true) {
    auto now = ReadLiveImport(target.dir);
    if (now && now->phase == "done") {
      ImportReport report;
      report.source = now->source;
      report.live = true;
      report.keys = now->keys;
      report.commands_applied = now->commands;
      report.commands_co_located = now->co_located;
      report.final_lag_bytes = now->lag_bytes;
      report.cutover_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - asked).count();
      return report;
    }
    if (!now || now->phase == "failed" || !ProcessStartTime(now->pid)) {
      return Failure(Fault::kRuntime,
                     "the live import stopped before it caught up" +
                         (now && !now->error.empty() ? ": " + now->error : std::string()));
    }
    if (Clock::now() - asked > kCatchUpLimit + 30s) {
      return Failure(Fault::kRuntime, "the live import did not catch up within 5 minutes");
    }
    std::this_thread::sleep_for(100ms);
  }
}

}  // namespace shardctl::launcher
