#include "launcher/ops/backup_cut.h"

#include <map>
#include <thread>

#include "common/numbers.h"
#include "launcher/cluster/slot_migrations.h"
#include "launcher/ops/backup_manifest.h"
#include "launcher/os/realtime_section.h"

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
constexpr auto kLinkTimeout = 10s;  // a primary sends a keepalive every second while it works

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

// The cut's pause: CLIENT PAUSE WRITE and DBSIZE on every primary at once, each one's snapshot
// asked for as soon as its own pause is in place (PSYNC cannot share the write: a primary refuses
// it while replies are pending), every fork seen, then CLIENT UNPAUSE on every path out. That is
// enough for one cut: every fork happens inside its primary's pause, and every pause begins before
// any ends. Fills cut.keys, cut.pause and cut.realtime; the links are cut.links, open.
Status PauseAndFork(std::vector<RedisConnection>& control,
                    const std::function<bool(size_t)>& forked, Cut& cut) {
  // Each reply wakes this thread; at real-time priority it does not then wait for a CPU behind
  // the primaries and their snapshot children while writes are held (docs/benchmarks.md: 35 ms
  // of a 101 ms pause with 40 primaries on 2 vCPUs). Back to its policy as this returns.
  RealtimeSection realtime;
  cut.realtime = realtime.raised();
  cut.realtime_refusal = realtime.refusal();
  const auto paused_at = Clock::now();
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
  (void)OnEvery(control, {"CLIENT", "UNPAUSE"});
  cut.pause = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - paused_at);
  if (failed) return *failed;
  return common::Ok();
}

}  // namespace

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

Result<AtomicMigrations> SeeAtomicMigrations(std::vector<RedisConnection>& control) {
  AtomicMigrations seen;
  std::map<std::string, std::string> unfinished;  // by job name
  for (auto& connection : control) {
    auto jobs = ListSlotMigrations(connection);
    if (!jobs.ok()) {
      // Named by what was asked, not by Valkey's command: Redis has none (the list is empty).
      return jobs.error().Context(connection.address() + ": looking for slot migrations under way");
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

Failure MigrationUnderWay(const AtomicMigrations& seen) {
  return Failure::Usage(
      "an atomic slot migration is under way (" + seen.unfinished.front() +
      (seen.unfinished.size() > 1 ? ", and " + std::to_string(seen.unfinished.size() - 1) + " more"
                                  : std::string()) +
      "): a backup cut now would hold those slots' keys twice, one copy stale; run backup again "
      "once CLUSTER GETSLOTMIGRATIONS shows it finished, or give it --wait; nothing was written");
}

Result<Cut> TakeCut(const Access& access, const Engine& engine,
                    const std::vector<common::NodeLine>& primaries,
                    std::vector<RedisConnection>& control,
                    const std::function<bool(size_t)>& forked) {
  Cut cut;
  const std::string valkey_loader = SnapshotLink::LoaderVersion(engine);
  for (const auto& primary : primaries) {
    auto link = SnapshotLink::Open(access, primary.address.host, primary.address.port, kLinkTimeout,
                                   SnapshotLink::Mode::kSnapshotOnly, valkey_loader);
    if (!link.ok()) return link.error();
    cut.links.push_back(std::move(link).value());
  }
  if (auto paused = PauseAndFork(control, forked, cut); !paused.ok()) return paused.error();
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

}  // namespace shardctl::launcher
