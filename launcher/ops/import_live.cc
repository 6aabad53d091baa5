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
#include "launcher/cluster/key_copy.h"
#include "launcher/cluster/rdb_snapshot.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/cluster/repl_apply.h"
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
  void Write() { (void)WriteLiveImport(dir_, progress_); }

 private:
  const DeploymentDir& dir_;
  LiveImportProgress progress_;
};

bool CutoverAsked(const DeploymentDir& dir) {
  return std::filesystem::exists(LiveImportDir(dir) / "cutover");
}

}  // namespace

Outcome<ImportReport> FollowSource(const ImportRequest& request, const Access& source_access,
                                   const common::Endpoint& source, const Target& target,
                                   const ServingCluster& serving, ImportReport report) {
  const auto started = Clock::now();
  const auto dir = LiveImportDir(target.dir);
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  std::filesystem::create_directories(dir, error);
  if (error) return Error(dir.string() + ": " + error.message());
  ProgressFile progress(target.dir, source.ToString());
  auto fail = [&](const Failure& failure) {
    progress.progress().phase = "failed";
    progress.progress().error = failure.message();
    progress.Write();
    return failure;
  };
  progress.progress().phase = "snapshot";
  progress.Write();
  auto link =
      SnapshotLink::Open(source_access, source.host, source.port, 10s, SnapshotLink::Mode::kFollow);
  if (!link.ok()) return fail(link.error().Context("source"));
  if (auto asked = link->Request(); !asked.ok()) return fail(asked.error());
  if (auto forked = link->AwaitFork(Clock::now() + kForkWait); !forked.ok())
    return fail(forked.error());
  auto snapshot = link->CopyTo(dir / "source.rdb");
  if (!snapshot.ok()) return fail(snapshot.error().Context("source snapshot"));
  const int64_t start_offset = link->replication_offset();
  StreamSpool spool(std::move(link).value(), dir / "stream.spool", source_access, source);
  if (auto spooling = spool.Start(); !spooling.ok()) return fail(spooling.error());
  spool.SetApplied(start_offset);

  // The snapshot's keys, through a scratch server of the deployment's engine.
  progress.progress().phase = "copying";
  progress.Write();
  {
    auto server =
        ScratchServer::Start(target.deployment->engine, dir / "source.rdb", dir / "scratch", 30min);
    if (!server.ok()) return fail(server.error().Context("source snapshot"));
    KeyCopyOptions options{.source_access = {}, .target_access = target.access};
    options.stop = request.interrupted;
    options.on_progress = [&](uint64_t keys, uint64_t) {
      if (request.on_progress) request.on_progress(keys, report.source_keys);
    };
    auto copied = CopyKeys(server->endpoint(), serving.table, options);
    if (!copied.ok()) return fail(copied.error());
    report.keys = copied->keys;
    report.bytes = copied->bytes;
    report.vanished = copied->vanished;
  }
  std::filesystem::remove(dir / "source.rdb", error);
  progress.progress().keys = report.keys;

  // Then every write after the snapshot, until cutover.
  StreamApplier applier(spool, start_offset,
                        ReplApplier(serving.table, target.access, std::chrono::seconds(30)));
  progress.progress().phase = "following";
  std::optional<Clock::time_point> cutover_at;
  std::optional<int64_t> cutover_target;
  auto next_report = Clock::now();
  while (true) {
    if (auto failure = spool.failure()) return fail(*failure);
    auto stepped = applier.Step();
    if (!stepped.ok()) return fail(stepped.error().Context("applying the source's writes"));
    const bool stopping =
        CutoverAsked(target.dir) || (request.interrupted != nullptr && request.interrupted->load());
    if (stopping && !cutover_at) {
      cutover_at = Clock::now();
      progress.progress().phase = "cutover";
    }
    if (cutover_at) {
      // Caught up when everything the source had written when asked is applied.
      if (!cutover_target) {
        auto offset = spool.SampleSource();
        if (offset.ok()) cutover_target = *offset;
      }
      if (cutover_target && applier.applied_offset() >= *cutover_target) break;
      if (Clock::now() - *cutover_at > kCatchUpLimit) {
        return fail(Failure(Fault::kRuntime, "cutover: still " + std::to_string(spool.Lag().first) +
                                                 " bytes behind the source after 5 minutes; "
                                                 "stop writes to the source and run it again"));
      }
    }
    if (Clock::now() >= next_report) {
      next_report = Clock::now() + kReportEvery;
      auto& now = progress.progress();
      now.commands = applier.commands();
      now.co_located = applier.co_located();
      now.applied_offset = applier.applied_offset();
      now.source_offset = spool.source_offset();
      std::tie(now.lag_bytes, now.lag_ms) = spool.Lag();
      progress.Write();
      if (request.on_following) {
        request.on_following(now.phase + ": " + std::to_string(now.commands) +
                             " writes applied, lag " + std::to_string(now.lag_ms) + " ms / " +
                             std::to_string(now.lag_bytes) + " bytes (import --cutover ends it)");
      }
    }
    if (!*stepped) std::this_thread::sleep_for(10ms);
  }
  spool.Stop();
  report.live = true;
  report.commands_applied = applier.commands();
  report.commands_co_located = applier.co_located();
  report.final_lag_bytes = std::max<int64_t>(0, *cutover_target - applier.applied_offset());
  report.cutover_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - *cutover_at).count();
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  auto& done = progress.progress();
  done.phase = "done";
  done.commands = report.commands_applied;
  done.co_located = report.commands_co_located;
  done.applied_offset = applier.applied_offset();
  done.source_offset = *cutover_target;
  done.lag_bytes = report.final_lag_bytes;
  done.lag_ms = 0;
  progress.Write();
  std::filesystem::remove(dir / "stream.spool", error);
  std::filesystem::remove(dir / "cutover", error);
  return report;
}

Outcome<ImportReport> Cutover(const Target& target) {
  auto running = ReadLiveImport(target.dir);
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
