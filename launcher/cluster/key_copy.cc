#include "launcher/cluster/key_copy.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/numbers.h"
#include "common/resp.h"
#include "common/slots.h"
#include "launcher/cluster/expiry_hold.h"
#include "launcher/cluster/frame_link.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using common::Status;

// Batches of keys from the one scanner to the workers, bounded so a fast scan of a big keyspace
// does not hold every key name in memory.
class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}

  // False when the copy is failing and nobody will take more.
  bool Push(std::vector<std::string> batch) {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return batches_.size() < capacity_ || closed_; });
    if (closed_) return false;
    batches_.push_back(std::move(batch));
    ready_.notify_one();
    return true;
  }
  // Nullopt once the scan ended (or the copy failed) and nothing is left.
  std::optional<std::vector<std::string>> Pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !batches_.empty() || closed_ || scan_done_; });
    if (batches_.empty() || closed_) return std::nullopt;
    auto batch = std::move(batches_.front());
    batches_.pop_front();
    space_.notify_one();
    return batch;
  }
  void ScanDone() {
    std::lock_guard lock(mutex_);
    scan_done_ = true;
    ready_.notify_all();
  }
  // Stops everyone: the first failure, or Ctrl-C.
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
    space_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::condition_variable space_;
  std::deque<std::vector<std::string>> batches_;
  size_t capacity_;
  bool scan_done_ = false;
  bool closed_ = false;
};

// What every thread shares: the totals, the first error, progress.
struct CopyState {
  const KeyCopyOptions& options;
  std::mutex mutex;
  KeyCopyReport report;
  std::optional<Error> failure;

  void Fail(Error error) {
    std::lock_guard lock(mutex);
    if (!failure) failure = std::move(error);
  }
  void Count(uint64_t keys, uint64_t bytes, uint64_t vanished) {
    std::lock_guard lock(mutex);
    report.keys += keys;
    report.bytes += bytes;
    report.vanished += vanished;
    if (options.on_progress) options.on_progress(report.keys, report.bytes);
  }
};

bool Stopped(const KeyCopyOptions& options) {
  return options.stop != nullptr && options.stop->load();
}

// Walks the source's keyspace with one cursor into the queue. One SCAN asks for a batch for every
// worker: the scanner's round trips then keep pace with the workers' instead of each worker
// waiting for a SCAN of its own batch (the source answers one request per client and loop turn).
Status Scan(RedisConnection& source, BatchQueue& queue, const KeyCopyOptions& options,
            int workers) {
  const size_t batch = static_cast<size_t>(std::max(1, options.batch));
  const std::string count = std::to_string(batch * static_cast<size_t>(workers));
  std::string cursor = "0";
  do {
    if (Stopped(options)) return common::Ok();  // CopyKeys says how far it got
    auto page = ScanPage(source, cursor, count);
    if (!page.ok()) return page.error();
    for (size_t at = 0; at < page->size(); at += batch) {
      const size_t end = std::min(page->size(), at + batch);
      std::vector<std::string> keys(std::make_move_iterator(page->begin() + at),
                                    std::make_move_iterator(page->begin() + end));
      if (!queue.Push(std::move(keys))) return common::Ok();
    }
  } while (cursor != "0");
  return common::Ok();
}

// The requests a batch makes of the source and its owners, framed once (common/resp.h).
void AppendRead(std::string& out, std::string_view command, std::string_view key) {
  const std::string_view args[] = {command, key};
  common::AppendCommand(out, args);
}

// A key's TTL as read: PTTL's milliseconds left or, with expiry held, PEXPIRETIME's unix time in
// milliseconds; -1 for none and -2 for a key that is gone in both.
struct Ttl {
  int64_t value = -1;
  bool absolute = false;

  bool some() const { return absolute ? value >= 0 : value > 0; }
  // Gone since the scan saw it (a GET of a missing key is nil and PTTL -2), or expiring this
  // millisecond (a TTL of 0 would mean none to SET and RESTORE).
  bool vanished() const { return value == -2 || (!absolute && value == 0); }
};

// SET key <value> [PX ttl | PXAT time]; `value` is the GET reply's frame, which is the argument's
// encoding.
void AppendSet(std::string& out, std::string_view key, std::string_view value, Ttl ttl) {
  common::AppendArrayHeader(out, ttl.some() ? 5 : 3);
  common::AppendBulk(out, "SET");
  common::AppendBulk(out, key);
  out += value;
  if (ttl.some()) {
    common::AppendBulk(out, ttl.absolute ? "PXAT" : "PX");
    common::AppendBulk(out, std::to_string(ttl.value));
  }
}

// RESTORE key ttl <payload> REPLACE [ABSTTL]; `payload` is the DUMP reply's frame.
void AppendRestore(std::string& out, std::string_view key, std::string_view payload, Ttl ttl) {
  const bool absolute = ttl.absolute && ttl.some();
  common::AppendArrayHeader(out, absolute ? 6 : 5);
  common::AppendBulk(out, "RESTORE");
  common::AppendBulk(out, key);
  common::AppendBulk(out, std::to_string(ttl.some() ? ttl.value : 0));
  out += payload;
  common::AppendBulk(out, "REPLACE");
  if (absolute) common::AppendBulk(out, "ABSTTL");
}

// CLIENT IMPORT-SOURCE ON, answered: this connection reads and writes keys past their TTL.
Status DeclareImportSource(FrameLink& link) {
  std::string request;
  const std::vector<std::string_view> args(kImportSourceOn.begin(), kImportSourceOn.end());
  common::AppendCommand(request, args);
  if (auto wrote = link.Write(request); !wrote.ok()) return wrote;
  auto reply = link.Next();
  if (!reply.ok()) return reply.error();
  if (IsErrorFrame(*reply)) {
    return Error(link.address() + ": CLIENT IMPORT-SOURCE ON: " + ErrorText(*reply));
  }
  return common::Ok();
}

// One worker's connections: the source, and each target primary once it is needed. Replies are
// read as frames and values forwarded as the bytes they came in (frame_link.h).
class CopyWorker {
 public:
  CopyWorker(const common::Endpoint& source, const common::SlotTable& target, CopyState& state)
      : source_address_(source), target_(target), state_(state) {}

  Status Run(BatchQueue& queue) {
    const auto& options = state_.options;
    auto source = FrameLink::Connect(options.source_access, source_address_.host,
                                     source_address_.port, options.timeout);
    if (!source.ok()) return source.error();
    source_.emplace(std::move(source).value());
    if (options.expiry_held) {
      if (auto declared = DeclareImportSource(*source_); !declared.ok()) return declared;
    }
    // One batch in flight on the primaries while the next one is read from the source.
    std::optional<InFlight> previous;
    while (auto keys = queue.Pop()) {
      auto sent = Send(std::move(*keys));
      if (!sent.ok()) return sent.error();
      if (previous) {
        if (auto settled = Settle(*previous); !settled.ok()) return settled;
      }
      previous = std::move(sent).value();
    }
    return previous ? Settle(*previous) : common::Ok();
  }

 private:
  // The primary owning `slot`, connected on first use; its writes are queued in `pending_`.
  Result<size_t> Owner(int slot) {
    const int primary = target_.PrimaryFor(slot);
    if (primary == common::SlotTable::kNoNode) {
      return Error("slot " + std::to_string(slot) + " has no owner in the cluster");
    }
    auto found = owner_index_.find(primary);
    if (found != owner_index_.end()) return found->second;
    const auto& node = target_.primaries()[static_cast<size_t>(primary)];
    auto connection = FrameLink::Connect(state_.options.target_access, node.host, node.port,
                                         state_.options.timeout);
    if (!connection.ok()) return connection.error();
    if (state_.options.expiry_held) {
      if (auto declared = DeclareImportSource(*connection); !declared.ok()) return declared.error();
    }
    owners_.push_back(std::move(connection).value());
    pending_.emplace_back();
    return owner_index_.emplace(primary, owners_.size() - 1).first->second;
  }

  // One batch's writes, sent and not yet answered.
  struct InFlight {
    std::vector<std::string> keys;  // the batch (errors name its keys)
    // Per owner (index into owners_), in the order sent: the indexes into `keys` of its writes.
    std::map<size_t, std::vector<size_t>> sent;
    uint64_t bytes = 0;
    uint64_t vanished = 0;
  };

  // Queues the write of keys[i] with `value` (a GET or DUMP reply frame) for its owner.
  Status Queue(InFlight& batch, size_t i, std::string_view value, Ttl ttl, bool typed) {
    const std::string& key = batch.keys[i];
    // Only a bulk string is a request argument as it stands (the connection speaks RESP2).
    if (!value.starts_with('$')) {
      return Error(source_->address() + ": " + (typed ? "DUMP " : "GET ") + key +
                   ": unexpected reply " + std::string(value.substr(0, 20)));
    }
    auto owner = Owner(common::KeySlot(key));
    if (!owner.ok()) return owner.error();
    batch.bytes += BulkLength(value);
    if (typed) {
      AppendRestore(pending_[*owner], key, value, ttl);
    } else {
      AppendSet(pending_[*owner], key, value, ttl);
    }
    batch.sent[*owner].push_back(i);
    return common::Ok();
  }

  // Reads the batch's values and sends every owner its writes. A string (most keys, usually) is
  // read with GET and written with SET: DUMP would compress it with LZF on the source, which
  // costs the source more than everything else it does for the copy. Any other type is DUMPed
  // (GET answers WRONGTYPE) and RESTOREd.
  Result<InFlight> Send(std::vector<std::string> keys) {
    InFlight batch{.keys = std::move(keys)};
    std::string reads;
    const std::string_view ttl_read = state_.options.expiry_held ? "PEXPIRETIME" : "PTTL";
    for (const auto& key : batch.keys) {
      AppendRead(reads, ttl_read, key);
      AppendRead(reads, "GET", key);
    }
    if (auto wrote = source_->Write(reads); !wrote.ok()) return wrote.error();
    std::vector<size_t> typed;  // keys that are not strings, and their TTLs
    std::vector<Ttl> typed_ttls;
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      auto ttl = ReadTtl(batch.keys[i]);
      if (!ttl.ok()) return ttl.error();
      auto value = source_->Next();
      if (!value.ok()) return value.error();
      if (IsErrorFrame(*value) && value->starts_with("-WRONGTYPE")) {
        typed.push_back(i);
        typed_ttls.push_back(*ttl);
      } else if (IsErrorFrame(*value)) {
        return Error(source_->address() + ": GET " + batch.keys[i] + ": " + ErrorText(*value));
      } else if (ttl->vanished() || IsNilFrame(*value)) {
        ++batch.vanished;
      } else if (auto queued = Queue(batch, i, *value, *ttl, false); !queued.ok()) {
        return queued.error();
      }
    }
    if (auto dumped = Dump(batch, typed, typed_ttls); !dumped.ok()) return dumped.error();
    // Every owner gets its writes before any reply is read: the primaries work at once.
    for (const auto& [owner, indexes] : batch.sent) {
      if (auto sent = owners_[owner].Write(pending_[owner]); !sent.ok()) return sent.error();
      pending_[owner].clear();
    }
    return batch;
  }

  Result<Ttl> ReadTtl(const std::string& key) {
    const bool absolute = state_.options.expiry_held;
    const std::string what = source_->address() + (absolute ? ": PEXPIRETIME " : ": PTTL ") + key;
    auto frame = source_->Next();
    if (!frame.ok()) return frame.error();
    if (IsErrorFrame(*frame)) return Error(what + ": " + ErrorText(*frame));
    auto ttl = FrameInteger(*frame);
    if (!ttl) return Error(what + ": not a number");
    return Ttl{.value = *ttl, .absolute = absolute};
  }

  // DUMPs the keys that are not strings and queues their RESTOREs.
  Status Dump(InFlight& batch, const std::vector<size_t>& typed, const std::vector<Ttl>& ttls) {
    if (typed.empty()) return common::Ok();
    std::string dumps;
    for (size_t i : typed) AppendRead(dumps, "DUMP", batch.keys[i]);
    if (auto wrote = source_->Write(dumps); !wrote.ok()) return wrote.error();
    for (size_t j = 0; j < typed.size(); ++j) {
      auto payload = source_->Next();
      if (!payload.ok()) return payload.error();
      const std::string& key = batch.keys[typed[j]];
      if (IsErrorFrame(*payload)) {
        return Error(source_->address() + ": DUMP " + key + ": " + ErrorText(*payload));
      }
      if (ttls[j].vanished() || IsNilFrame(*payload)) {
        ++batch.vanished;
      } else if (auto queued = Queue(batch, typed[j], *payload, ttls[j], true); !queued.ok()) {
        return queued;
      }
    }
    return common::Ok();
  }

  // Reads the replies to a batch's writes.
  Status Settle(const InFlight& batch) {
    uint64_t restored = 0;
    for (const auto& [owner, indexes] : batch.sent) {
      FrameLink& link = owners_[owner];
      for (size_t i : indexes) {
        auto reply = link.Next();
        if (!reply.ok()) return reply.error();
        if (!IsErrorFrame(*reply)) continue;
        return Error("copying " + batch.keys[i] + " to " + link.address() + ": " +
                     RestoreAdvice(ErrorText(*reply)));
      }
      restored += indexes.size();
    }
    state_.Count(restored, batch.bytes, batch.vanished);
    return common::Ok();
  }

  // Redis' words, and what they mean here.
  static std::string RestoreAdvice(const std::string& message) {
    if (message.find("payload version") != std::string::npos) {
      return message +
             " (the cluster's engine cannot read the source's data format: use an "
             "engine at least as new as the source's)";
    }
    if (message.starts_with("MOVED") || message.starts_with("ASK")) {
      return message + " (the cluster's slots moved during the copy: run the command again)";
    }
    if (message.starts_with("OOM")) {
      // Redis' sentence ends in a full stop, where ours goes on.
      return message.substr(0, message.find_last_not_of('.') + 1) +
             " (the data does not fit the deployment's memory: give it more shards with scale "
             "--shards N, or import into a new deployment with more up --memory, then run the "
             "command again)";
    }
    return message;
  }

  common::Endpoint source_address_;
  const common::SlotTable& target_;
  CopyState& state_;
  std::optional<FrameLink> source_;
  std::map<int, size_t> owner_index_;  // primary (index in the slot table) → owners_
  std::vector<FrameLink> owners_;
  std::vector<std::string> pending_;  // per owner: writes framed, not yet sent
};

}  // namespace

Result<KeyCopyReport> CopyKeys(const common::Endpoint& source, const common::SlotTable& target,
                               const KeyCopyOptions& options) {
  auto scanner =
      RedisConnection::Connect(options.source_access, source.host, source.port, options.timeout);
  if (!scanner.ok()) return scanner.error();
  if (options.expiry_held) {
    if (auto declared = DeclareImportSource(*scanner); !declared.ok()) return declared.error();
  }
  CopyState state{.options = options, .mutex = {}, .report = {}, .failure = {}};
  const int workers = std::max(1, options.workers);
  BatchQueue queue(static_cast<size_t>(workers) * 4);
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back([&] {
      CopyWorker worker(source, target, state);
      if (auto run = worker.Run(queue); !run.ok()) {
        state.Fail(run.error());
        queue.Close();
      }
    });
  }
  if (auto scanned = Scan(*scanner, queue, options, workers); !scanned.ok()) {
    state.Fail(scanned.error());
    queue.Close();
  }
  queue.ScanDone();
  for (auto& thread : threads) thread.join();
  if (state.failure) return *state.failure;
  if (Stopped(options))
    return Error("stopped (Ctrl-C) after " + std::to_string(state.report.keys) + " keys");
  return state.report;
}

}  // namespace shardctl::launcher
