// The MIGRATE path of the slot mover (steps 1-4 in slot_mover.h), for every engine.
#include <algorithm>
#include <optional>

#include "launcher/cluster/slot_mover_internal.h"

namespace shardctl::launcher::mover_internal {
namespace {

using common::Error;
using common::Result;
using common::Status;

// Keys asked of GETKEYSINSLOT per slot per round; the rest come in later rounds.
constexpr int kKeysPerScan = 1000;
// A slot that still has keys after this many rounds is being refilled faster than we move it,
// which the MIGRATING state makes impossible: something else is wrong.
constexpr int kMaxRounds = 100000;

// "already done" refusals of SETSLOT when finishing an earlier run's move.
bool AlreadyDone(const std::string& message) {
  return message.find("already the owner") != std::string::npos ||
         message.find("not the owner") != std::string::npos ||
         message.find("I'm not the owner") != std::string::npos;
}

Command SetSlot(int slot, const char* state, const std::string& node_id) {
  return {"CLUSTER", "SETSLOT", std::to_string(slot), state, node_id};
}

}  // namespace

Result<SlotMigration> SlotMigration::Open(const MoveTask& task, const MoverOptions& options) {
  auto source = ConnectTo(task.source, options);
  if (!source.ok()) return source.error();
  auto target = ConnectTo(task.target, options);
  if (!target.ok()) return target.error();
  SlotMigration migration(task, options, std::move(*source), std::move(*target));
  migration.others_.resize(options.primaries.size());
  migration.bytes_per_key_ = BytesPerKey(migration.source_);
  return migration;
}

Status SlotMigration::MoveBatch(const std::vector<int>& slots, ProgressSink& sink, bool resuming) {
  resuming_ = resuming;
  if (auto marked = MarkSlots(target_, slots, "IMPORTING", task_.source.id, resuming);
      !marked.ok()) {
    return marked;
  }
  if (auto marked = MarkSlots(source_, slots, "MIGRATING", task_.target.id, resuming);
      !marked.ok()) {
    return marked;
  }
  if (auto emptied = EmptySlots(slots, sink); !emptied.ok()) return emptied;
  if (auto announced = AnnounceOwner(slots); !announced.ok()) return announced;
  sink.Add(static_cast<int>(slots.size()), 0, bytes_per_key_);
  return common::Ok();
}

Status SlotMigration::MarkSlots(RedisConnection& node, const std::vector<int>& slots,
                                const char* state, const std::string& peer_id, bool resuming) {
  std::vector<Command> commands;
  for (int slot : slots) commands.push_back(SetSlot(slot, state, peer_id));
  auto replies = node.Pipeline(commands);
  if (!replies.ok()) return replies.error();
  for (size_t i = 0; i < replies->size(); ++i) {
    const auto& reply = (*replies)[i];
    if (reply.ok() || (resuming && AlreadyDone(reply.error().message()))) continue;
    return Error(node.address() + ": CLUSTER SETSLOT " + std::to_string(slots[i]) + " " + state +
                 ": " + reply.error().message());
  }
  return common::Ok();
}

// Step 3: rounds of GETKEYSINSLOT for the slots that still have keys, each followed by MIGRATEs
// of what it listed, until a round finds every slot empty.
Status SlotMigration::EmptySlots(const std::vector<int>& slots, ProgressSink& sink) {
  std::vector<int> remaining = slots;
  for (int round = 0; !remaining.empty(); ++round) {
    if (round == kMaxRounds) {
      return Error(source_.address() + ": slots keep refilling while MIGRATING (run again)");
    }
    std::vector<Command> scans;
    for (int slot : remaining) {
      scans.push_back(
          {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), std::to_string(kKeysPerScan)});
    }
    auto listed = source_.PipelineLists(scans);
    if (!listed.ok()) return listed.error();
    std::vector<int> still;
    std::vector<std::vector<std::string>> chunks;
    for (size_t i = 0; i < listed->size(); ++i) {
      auto& keys = (*listed)[i];
      if (!keys.ok())
        return Error(source_.address() + ": GETKEYSINSLOT: " + keys.error().message());
      if (keys->empty()) continue;
      still.push_back(remaining[i]);
      for (size_t at = 0; at < keys->size(); at += options_.keys_per_migrate) {
        const size_t end = std::min(keys->size(), at + options_.keys_per_migrate);
        chunks.emplace_back(keys->begin() + at, keys->begin() + end);
      }
    }
    auto moved = MigrateKeys(chunks, /*one_by_one=*/false);
    if (!moved.ok()) return moved.error();
    sink.Add(0, *moved, bytes_per_key_);
    remaining = std::move(still);
  }
  return common::Ok();
}

// MIGRATEs of `chunks`, `migrates_in_flight` at a time. A chunk that fails as a whole (a key too
// big for the timeout, say) is retried key by key. In a move of ours a key that already exists on
// the target is never overwritten (BUSYKEY stops the move: someone else wrote there). Finishing a
// move an earlier run left open, the source's copy replaces the target's: a source killed
// mid-MIGRATE can come back with keys it had already handed over (its DEL not yet on disk), and
// since then every write to such a key went to the source, which serves the keys it has.
Result<uint64_t> SlotMigration::MigrateKeys(const std::vector<std::vector<std::string>>& chunks,
                                            bool one_by_one) {
  // The key-by-key retry of a chunk that timed out against a target that still answers: one
  // MIGRATE at a time, with three times the time (a key that takes the target seconds to
  // restore); the source waits on each, no longer than the supervisor's hang limit.
  const auto timeout = one_by_one ? options_.migrate_timeout * 3 : options_.migrate_timeout;
  const auto make = [&](const std::vector<std::string>& keys) {
    Command migrate = {"MIGRATE",
                       task_.target.host,
                       std::to_string(task_.target.port),
                       "",
                       "0",
                       std::to_string(timeout.count())};
    if (resuming_) migrate.push_back("REPLACE");
    // The source logs in to the target itself; the shards share one password.
    const std::string& password = options_.access.password;
    if (!password.empty()) migrate.insert(migrate.end(), {"AUTH", password});
    migrate.push_back("KEYS");
    migrate.insert(migrate.end(), keys.begin(), keys.end());
    return migrate;
  };
  uint64_t moved = 0;
  const size_t step = one_by_one ? 1 : std::max(1, options_.migrates_in_flight);
  for (size_t at = 0; at < chunks.size(); at += step) {
    std::vector<Command> batch;
    for (size_t i = at; i < std::min(chunks.size(), at + step); ++i)
      batch.push_back(make(chunks[i]));
    auto replies = source_.Pipeline(batch);
    if (!replies.ok()) return replies.error();
    for (size_t i = 0; i < replies->size(); ++i) {
      const auto& keys = chunks[at + i];
      if ((*replies)[i].ok()) {
        moved += keys.size();
        continue;
      }
      const std::string& why = (*replies)[i].error().message();
      // MIGRATE timed out or lost the target: a target that stopped answering would time every
      // key of a key-by-key retry out, the source blocked meanwhile (and killed as hung by its
      // supervisor, with the writes it had not saved).
      if (why.find("IOERR") != std::string::npos) {
        if (std::string silent = TargetSilent(); !silent.empty()) return Error(silent);
      }
      if (why.find("BUSYKEY") != std::string::npos || keys.size() == 1) {
        std::string advice;
        // What to do differs from any other failure: running again fails the same way until
        // the target has room (the next run says so before moving anything).
        if (why.find("OOM") != std::string::npos) {
          advice =
              ": the target is out of memory, and the slot is left half-moved (every key "
              "in it is still served, from the side that holds it); free memory on " +
              NodeName(task_.target) + ", then run the command again to finish the move";
        }
        const bool stop = !advice.empty() && why.ends_with('.');  // no ".:" before the advice
        return Error(source_.address() + ": MIGRATE to " + NodeName(task_.target) + ": " +
                     (stop ? why.substr(0, why.size() - 1) : why) + advice);
      }
      std::vector<std::vector<std::string>> singles;
      for (const auto& key : keys) singles.push_back({key});
      auto retried = MigrateKeys(singles, /*one_by_one=*/true);
      if (!retried.ok()) return retried.error();
      moved += *retried;
    }
  }
  return moved;
}

std::string SlotMigration::TargetSilent() const {
  // A target still restoring what it was sent answers once it is done: as long as a MIGRATE may
  // take, twice. The source is not blocked meanwhile (its MIGRATEs have ended).
  const auto wait = options_.migrate_timeout * 2;
  const MoveNode& target = task_.target;
  auto probe = RedisConnection::Connect(options_.access, target.host, target.port, wait);
  std::optional<Error> failed;
  if (!probe.ok()) {
    failed = probe.error();
  } else if (auto pong = probe->Run({"PING"}); !pong.ok()) {
    failed = pong.error();
  }
  if (!failed) return "";
  return "the target, " + NodeName(target) + ", does not answer (" + failed->message() +
         "): is it stopped (SIGSTOP) or hung? kill -CONT it, or let its supervisor restart it " +
         "(shardctl status shows it). The slots are left half-moved, every key served by the "
         "side " +
         "that holds it; run the command again to finish the move";
}

// Step 4, in redis-cli's order: the target first (it owns the slot, with a new epoch), then the
// source (it stops redirecting with ASK and sends MOVED), then everyone else, best effort: the
// others would learn it from gossip anyway, this only makes it immediate.
Status SlotMigration::AnnounceOwner(const std::vector<int>& slots) {
  std::vector<Command> commands;
  for (int slot : slots) commands.push_back(SetSlot(slot, "NODE", task_.target.id));
  for (RedisConnection* node : {&target_, &source_}) {
    auto replies = node->Pipeline(commands);
    if (!replies.ok()) return replies.error();
    for (size_t i = 0; i < replies->size(); ++i) {
      // A source that gave its last slots to a target that had none is turned into the target's
      // replica by the engine itself (even with cluster-allow-replica-migration no): it owns
      // nothing, which is what this step would have told it.
      if (node == &source_ && !(*replies)[i].ok() &&
          (*replies)[i].error().message().find("only with masters") != std::string::npos) {
        break;
      }
      if (!(*replies)[i].ok()) {
        return Error(node->address() + ": CLUSTER SETSLOT " + std::to_string(slots[i]) +
                     " NODE: " + (*replies)[i].error().message());
      }
    }
  }
  for (size_t i = 0; i < options_.primaries.size(); ++i) {
    const MoveNode& other = options_.primaries[i];
    if (other.id == task_.source.id || other.id == task_.target.id) continue;
    if (!others_[i]) {
      auto connected = ConnectTo(other, options_);
      if (!connected.ok()) continue;
      others_[i].emplace(std::move(*connected));
    }
    if (!others_[i]->Pipeline(commands).ok()) others_[i].reset();
  }
  return common::Ok();
}

Status MigrateTask(const MoveTask& task, const MoverOptions& options, ProgressSink& sink) {
  auto migration = SlotMigration::Open(task, options);
  if (!migration.ok()) return migration.error();
  const std::vector<int> slots = SlotsOf(task.ranges);
  const size_t batch = std::max(1, options.slots_per_batch);
  for (size_t at = 0; at < slots.size(); at += batch) {
    if (options.stop != nullptr && options.stop->load()) return Error("stopped");
    const std::vector<int> some(slots.begin() + at,
                                slots.begin() + std::min(slots.size(), at + batch));
    if (auto moved = migration->MoveBatch(some, sink, false); !moved.ok()) return moved;
  }
  return common::Ok();
}

}  // namespace shardctl::launcher::mover_internal
