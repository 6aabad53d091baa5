#include "launcher/cluster/key_copy.h"

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/numbers.h"
#include "common/slots.h"
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

// Walks the source's keyspace with one cursor into the queue.
Status Scan(RedisConnection& source, BatchQueue& queue, const KeyCopyOptions& options) {
  std::string cursor = "0";
  do {
    if (Stopped(options)) return common::Ok();  // CopyKeys says how far it got
    auto replies = source.PipelineLists({{"SCAN", cursor, "COUNT", std::to_string(options.batch)}});
    if (!replies.ok()) return replies.error();
    auto& reply = replies->front();
    if (!reply.ok()) return reply.error().Context(source.address() + ": SCAN");
    if (reply->empty()) return Error(source.address() + ": SCAN: empty reply");
    cursor = reply->front();
    std::vector<std::string> keys(std::make_move_iterator(reply->begin() + 1),
                                  std::make_move_iterator(reply->end()));
    if (!keys.empty() && !queue.Push(std::move(keys))) return common::Ok();
  } while (cursor != "0");
  return common::Ok();
}

// One worker's connections: the source, and each target primary once it is needed.
class CopyWorker {
 public:
  CopyWorker(const common::Endpoint& source, const common::SlotTable& target, CopyState& state)
      : source_address_(source), target_(target), state_(state) {}

  Status Run(BatchQueue& queue) {
    const auto& options = state_.options;
    auto source = RedisConnection::Connect(options.source_access, source_address_.host,
                                           source_address_.port, options.timeout);
    if (!source.ok()) return source.error();
    source_.emplace(std::move(source).value());
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
  Result<RedisConnection*> Owner(int slot) {
    const int primary = target_.PrimaryFor(slot);
    if (primary == common::SlotTable::kNoNode) {
      return Error("slot " + std::to_string(slot) + " has no owner in the cluster");
    }
    auto found = targets_.find(primary);
    if (found != targets_.end()) return &found->second;
    const auto& node = target_.primaries()[static_cast<size_t>(primary)];
    auto connection = RedisConnection::Connect(state_.options.target_access, node.host, node.port,
                                               state_.options.timeout);
    if (!connection.ok()) return connection.error();
    return &targets_.emplace(primary, std::move(connection).value()).first->second;
  }

  // One batch's RESTOREs, sent and not yet answered.
  struct InFlight {
    std::vector<std::string> keys;  // the batch (errors name its keys)
    // Per owner, in the order sent: the indexes into `keys` of its RESTOREs.
    std::map<RedisConnection*, std::vector<size_t>> sent;
    uint64_t bytes = 0;
    uint64_t vanished = 0;
  };

  // Reads the batch's values and sends every owner its writes. A string (most keys, usually) is
  // read with GET and written with SET: DUMP would compress it with LZF on the source, which
  // costs the source more than everything else it does for the copy. Any other type is DUMPed
  // (GET answers WRONGTYPE) and RESTOREd.
  Result<InFlight> Send(std::vector<std::string> keys) {
    InFlight batch{.keys = std::move(keys)};
    std::vector<Command> reads;
    reads.reserve(batch.keys.size() * 2);
    for (const auto& key : batch.keys) {
      reads.push_back({"PTTL", key});
      reads.push_back({"GET", key});
    }
    auto values = source_->Pipeline(reads);
    if (!values.ok()) return values.error();
    std::vector<size_t> typed;  // keys that are not strings
    std::vector<Command> dumps;
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      auto& value = (*values)[2 * i + 1];
      if (value.ok() || !value.error().message().starts_with("WRONGTYPE")) continue;
      typed.push_back(i);
      dumps.push_back({"DUMP", batch.keys[i]});
    }
    auto payloads = source_->Pipeline(dumps);
    if (!payloads.ok()) return payloads.error();
    for (size_t j = 0; j < typed.size(); ++j) (*values)[2 * typed[j] + 1] = (*payloads)[j];
    std::vector<bool> is_typed(batch.keys.size(), false);
    for (size_t i : typed) is_typed[i] = true;
    std::map<RedisConnection*, std::vector<Command>> writes;  // in the scan's order
    for (size_t i = 0; i < batch.keys.size(); ++i) {
      const std::string& key = batch.keys[i];
      auto& ttl = (*values)[2 * i];
      auto& value = (*values)[2 * i + 1];
      const char* read = is_typed[i] ? ": DUMP " : ": GET ";
      if (!ttl.ok()) return ttl.error().Context(source_->address() + ": PTTL " + key);
      if (!value.ok()) return value.error().Context(source_->address() + read + key);
      const long long left = common::ParseInteger<long long>(*ttl).value_or(-2);
      // Gone since the scan saw it (a string's GET of a missing key is "" too; PTTL tells), or
      // expiring this millisecond (a TTL of 0 would mean none to SET and RESTORE).
      if (left == -2 || left == 0 || (is_typed[i] && value->empty())) {
        ++batch.vanished;
        continue;
      }
      auto owner = Owner(common::KeySlot(key));
      if (!owner.ok()) return owner.error();
      batch.bytes += value->size();
      if (!is_typed[i]) {
        Command set = {"SET", key, std::move(*value)};
        if (left > 0) set.insert(set.end(), {"PX", std::to_string(left)});
        writes[*owner].push_back(std::move(set));
      } else {
        writes[*owner].push_back(
            {"RESTORE", key, std::to_string(left < 0 ? 0 : left), std::move(*value), "REPLACE"});
      }
      batch.sent[*owner].push_back(i);
    }
    // Every owner gets its writes before any reply is read: the primaries work at once.
    for (auto& [owner, commands] : writes) {
      if (auto sent = owner->Send(commands); !sent.ok()) return sent.error();
    }
    return batch;
  }

  // Reads the replies to a batch's RESTOREs.
  Status Settle(const InFlight& batch) {
    uint64_t restored = 0;
    for (const auto& [owner, indexes] : batch.sent) {
      auto replies = owner->Receive(indexes.size());
      if (!replies.ok()) return replies.error();
      for (size_t i = 0; i < replies->size(); ++i) {
        if ((*replies)[i].ok()) continue;
        return Error("copying " + batch.keys[indexes[i]] + " to " + owner->address() + ": " +
                     RestoreAdvice((*replies)[i].error().message()));
      }
      restored += replies->size();
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
    return message;
  }

  common::Endpoint source_address_;
  const common::SlotTable& target_;
  CopyState& state_;
  std::optional<RedisConnection> source_;
  std::map<int, RedisConnection> targets_;
};

}  // namespace

Result<KeyCopyReport> CopyKeys(const common::Endpoint& source, const common::SlotTable& target,
                               const KeyCopyOptions& options) {
  auto scanner =
      RedisConnection::Connect(options.source_access, source.host, source.port, options.timeout);
  if (!scanner.ok()) return scanner.error();
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
  if (auto scanned = Scan(*scanner, queue, options); !scanned.ok()) {
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
