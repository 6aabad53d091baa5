// `shardctl rebalance` and `shardctl move-slots`: parse, call ops/rebalance, print. A progress line
// on a terminal; with --json one event object per line, the last one the result.
#include "launcher/ops/rebalance.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "common/endpoint.h"
#include "common/numbers.h"
#include "launcher/cli/commands.h"
#include "launcher/ops/scale.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

using nlohmann::json;

// The first Ctrl-C lets the batches in hand finish (no slot is left half-moved); a second one
// stops at once (CatchInterrupt).
const std::atomic<bool>& stop_requested = InterruptRequested();

// After a first Ctrl-C (or SIGTERM) the move stopped between batches: what moved stays moved and
// no slot is left open. Exit 130 as a shell reports an interrupted command.
int ReportInterrupted(const std::string& command, const Spec& spec) {
  PrintError(command.substr(0, command.find(' ')) +
             ": interrupted; slots moved so far stay moved and none is left open (run " +
             "shardctl " + command + StateDirHint(spec) + " again to continue)");
  return kExitInterrupted;
}

// "25%", "2.5%" or "2" (percent either way) as a fraction.
common::Result<double> ParseThreshold(const std::string& text) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  auto percent = common::ParseDecimal(number);
  if (!percent || *percent < 0 || *percent > 100) {
    return common::Error("--threshold " + text + ": expected a percentage such as 2% (0-100)");
  }
  return *percent / 100;
}

common::Result<MovePath> ParseMigration(const std::string& text) {
  if (text == "auto") return MovePath::kAuto;
  if (text == "migrate") return MovePath::kMigrate;
  if (text == "atomic") return MovePath::kAtomic;
  return common::Error("--migration " + text + ": expected auto, migrate or atomic");
}

json ProgressJson(const MoveProgress& progress) {
  return {{"slots_total", progress.slots_total}, {"slots_moved", progress.slots_moved},
          {"keys_total", progress.keys_total},   {"keys_moved", progress.keys_moved},
          {"bytes_total", progress.bytes_total}, {"bytes_moved", progress.bytes_moved}};
}

// "slots 1200/8191  keys 150000/1000000  45.2 MB/s  ETA 12 s".
std::string ProgressText(const MoveProgress& progress, double seconds) {
  char text[160];
  const double rate = seconds > 0 ? progress.bytes_moved / seconds / 1e6 : 0;
  const double done = progress.keys_total ? double(progress.keys_moved) / progress.keys_total
                                          : double(progress.slots_moved) / progress.slots_total;
  const double eta = done > 0 ? seconds / std::min(done, 1.0) - seconds : 0;
  std::snprintf(text, sizeof text, "moving: slots %d/%d  keys %llu/%llu  %.1f MB/s  ETA %.0f s",
                progress.slots_moved, progress.slots_total,
                static_cast<unsigned long long>(progress.keys_moved),
                static_cast<unsigned long long>(progress.keys_total), rate, eta);
  return text;
}

// Where progress goes: a line rewritten in place on a terminal, JSON events with --json,
// nothing otherwise.
std::function<void(const MoveProgress&)> ProgressReporter(bool json_events) {
  const bool terminal = isatty(STDERR_FILENO);
  if (!json_events && !terminal) return nullptr;
  const auto start = std::chrono::steady_clock::now();
  return [=, last = std::chrono::steady_clock::time_point{}](const MoveProgress& progress) mutable {
    const auto now = std::chrono::steady_clock::now();
    const bool finished = progress.slots_moved == progress.slots_total;
    if (!finished && now - last < std::chrono::milliseconds(json_events ? 1000 : 200)) return;
    last = now;
    const double seconds = std::chrono::duration<double>(now - start).count();
    if (json_events) {
      json event = ProgressJson(progress);
      event["event"] = "progress";
      std::cout << event.dump() << std::endl;
    } else {
      std::cerr << "\r" << ProgressText(progress, seconds) << "\033[K" << std::flush;
      if (finished) std::cerr << "\n";
    }
  };
}

json MovesJson(const std::vector<PlannedMove>& moves) {
  json list = json::array();
  for (const auto& move : moves) {
    list.push_back({{"from_shard", move.source_shard},
                    {"to_shard", move.target_shard},
                    {"from", common::FormatEndpoint(move.task.source.host, move.task.source.port)},
                    {"to", common::FormatEndpoint(move.task.target.host, move.task.target.port)},
                    {"slots", common::FormatSlotRanges(move.task.ranges)},
                    {"slot_count", move.slots}});
  }
  return list;
}

std::string MovesTable(const std::vector<PlannedMove>& moves) {
  std::vector<std::vector<std::string>> rows = {{"FROM", "TO", "SLOTS", "RANGES"}};
  auto name = [](int shard, const MoveNode& node) {
    return shard < 0 ? common::FormatEndpoint(node.host, node.port)
                     : "shard " + std::to_string(shard);
  };
  for (const auto& move : moves) {
    rows.push_back({name(move.source_shard, move.task.source),
                    name(move.target_shard, move.task.target), std::to_string(move.slots),
                    common::FormatSlotRanges(move.task.ranges)});
  }
  return FormatTable(rows);
}

json LoadJson(const LoadView& load) {
  json primaries = json::array();
  for (const auto& primary : load.primaries) {
    primaries.push_back({{"shard", primary.shard},
                         {"node", primary.node},
                         {"cpu_usec", primary.before},
                         {"predicted_cpu_usec", primary.after}});
  }
  json hot = json::array();
  for (const auto& slot : load.hot_slots) {
    hot.push_back({{"slot", slot.slot},
                   {"shard", slot.shard},
                   {"node", slot.node},
                   {"share_of_fair", slot.share}});
  }
  return {{"window_ms", load.window.count()}, {"primaries", primaries}, {"hot_slots", hot}};
}

// Each primary's measured load against the mean, now and predicted, and the hot slots.
std::string LoadText(const LoadView& load) {
  double before = 0;
  double after = 0;
  for (const auto& primary : load.primaries) {
    before += primary.before;
    after += primary.after;
  }
  const double count = static_cast<double>(std::max<size_t>(load.primaries.size(), 1));
  const auto ratio = [](double value, double total, double n) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", total > 0 ? value / (total / n) : 0);
    return std::string(text);
  };
  std::vector<std::vector<std::string>> rows = {{"PRIMARY", "CPU MS", "NOW/MEAN", "AFTER/MEAN"}};
  for (const auto& primary : load.primaries) {
    rows.push_back({primary.shard < 0 ? primary.node : "shard " + std::to_string(primary.shard),
                    std::to_string(static_cast<long long>(primary.before / 1000)),
                    ratio(primary.before, before, count), ratio(primary.after, after, count)});
  }
  std::string text = "load over " + std::to_string(load.window.count()) +
                     " ms (CPU each primary's slots used, CLUSTER SLOT-STATS):\n" +
                     FormatTable(rows);
  for (const auto& slot : load.hot_slots) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f", slot.share);
    text += "hot slot " + std::to_string(slot.slot) + " on " +
            (slot.shard < 0 ? slot.node : "shard " + std::to_string(slot.shard)) + ": " + share +
            "x a primary's fair share; no move can split it, so it stays and its primary keeps "
            "no other slot (spread its keys with other hash tags, or read them from replicas)\n";
  }
  return text;
}

json ReadMostlyJson(const std::vector<ProxyHotKey>& keys) {
  json list = json::array();
  for (const auto& key : keys) {
    list.push_back(
        {{"key", key.key}, {"requests", key.requests}, {"reads", key.reads}, {"error", key.error}});
  }
  return list;
}

// The proxy's read-mostly hot keys, and what would spread them.
std::string ReadMostlyText(const std::vector<ProxyHotKey>& keys, const std::string& read_from) {
  if (keys.empty()) return "";
  std::string text = "read-mostly hot keys (reads >= 90% of their requests, from shardproxy):\n";
  for (const auto& key : keys) {
    text += "  " + key.key + ": " + std::to_string(key.requests) + " requests, " +
            std::to_string(key.reads) + " reads\n";
  }
  if (read_from == "primary") {
    text +=
        "`--proxy-read-from prefer-replica` would spread them over the replicas (shardctl up "
        "... --proxy-read-from prefer-replica)\n";
  } else {
    text += "the proxy already reads from replicas (--proxy-read-from " + read_from + ")\n";
  }
  return text;
}

int PrintResult(const Invocation& invocation, const ReshardResult& result) {
  if (invocation.json) {
    json done = {{"event", "done"},
                 {"dry_run", invocation.dry_run},
                 {"finished_open_slots", result.open_slots.size()},
                 {"moves", MovesJson(result.moves)}};
    if (result.load) done["load"] = LoadJson(*result.load);
    if (result.read_mostly_keys)
      done["read_mostly_keys"] = ReadMostlyJson(*result.read_mostly_keys);
    if (result.report) {
      done["progress"] = ProgressJson(result.report->progress);
      done["elapsed_ms"] = result.report->elapsed.count();
      done["paths"] = result.report->paths;
    }
    std::cout << done.dump() << "\n";
    return kExitOk;
  }
  if (!result.open_slots.empty()) {
    std::cout << (invocation.dry_run ? "would finish " : "finished ") << result.open_slots.size()
              << " slot move(s) an earlier run left open\n";
  }
  if (result.load) std::cout << LoadText(*result.load);
  if (result.read_mostly_keys) {
    std::cout << ReadMostlyText(*result.read_mostly_keys, result.proxy_read_from);
  }
  if (result.moves.empty()) {
    std::cout << "balanced: nothing to move\n";
    return kExitOk;
  }
  std::cout << (invocation.dry_run ? "would move:\n" : "moved:\n") << MovesTable(result.moves);
  if (result.report) {
    const auto& progress = result.report->progress;
    std::cout << progress.slots_moved << " slots and " << progress.keys_moved << " keys in "
              << result.report->elapsed.count() << " ms (" << result.report->paths.front()
              << " path)\n";
  }
  return kExitOk;
}

int RunReshard(const Invocation& invocation, ReshardRequest request) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  auto path = ParseMigration(invocation.migration);
  if (!path.ok()) {
    PrintError(path.error().message());
    return kExitUsage;
  }
  request.path = *path;
  request.dry_run = invocation.dry_run;
  request.on_progress = ProgressReporter(invocation.json);
  request.stop = &stop_requested;
  CatchInterrupt();
  auto result = Rebalance(*spec, request);
  if (!result.ok() && result.error().fault() == Fault::kInterrupted) {
    // The command to run again, whole: move-slots needs its ranges and target to continue.
    std::string again = invocation.command;
    if (invocation.slot_ranges && invocation.to_shard) {
      again += " " + *invocation.slot_ranges + " --to " + std::to_string(*invocation.to_shard);
    }
    return ReportInterrupted(again, *spec);
  }
  if (!result.ok()) return Fail(result.error().Context(invocation.command));
  return PrintResult(invocation, *result);
}

}  // namespace

int RunRebalance(const Invocation& invocation) {
  auto by = ParseBalanceBy(invocation.balance_by);
  // Measured load is noisy where slot counts are exact: a wider default band.
  const bool by_load = by.ok() && *by == BalanceBy::kLoad;
  auto threshold = ParseThreshold(invocation.threshold.empty() ? (by_load ? "10%" : "2%")
                                                               : invocation.threshold);
  for (const auto& problem :
       {by.ok() ? "" : by.error().message(), threshold.ok() ? "" : threshold.error().message()}) {
    if (problem.empty()) continue;
    PrintError("rebalance: " + problem);
    return kExitUsage;
  }
  return RunReshard(invocation,
                    {.by = *by, .threshold = *threshold, .window = invocation.load_window});
}

int RunScale(const Invocation& invocation) {
  auto path = ParseMigration(invocation.migration);
  if (!path.ok()) {
    PrintError(path.error().message());
    return kExitUsage;
  }
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  CatchInterrupt();
  const bool terminal = isatty(STDERR_FILENO);
  ScaleRequest request{
      .primaries = spec->shards.value_or(0),
      .dry_run = invocation.dry_run,
      .path = *path,
      .on_step =
          [&](const std::string& step) {
            if (invocation.json) {
              std::cout << json{{"event", "step"}, {"step", step}}.dump() << std::endl;
            } else if (terminal) {
              std::cerr << step << "\n";
            }
          },
      .on_progress = ProgressReporter(invocation.json),
      .stop = &stop_requested};
  auto scaled = Scale(*spec, request);
  if (!scaled.ok() && scaled.error().fault() == Fault::kInterrupted) {
    return ReportInterrupted("scale --shards " + std::to_string(request.primaries), *spec);
  }
  if (!scaled.ok()) return Fail(scaled.error().Context("scale"));
  // As up says them: more shards than CPUs, replicas sharing a core with their primary.
  for (const auto& warning : scaled->plan.warnings) {
    if (!invocation.json) PrintWarning(warning);
  }
  if (invocation.json) {
    std::cout << json{{"event", "done"},
                      {"dry_run", invocation.dry_run},
                      {"warnings", scaled->plan.warnings},
                      {"from_shards", scaled->from_primaries},
                      {"to_shards", scaled->to_primaries},
                      {"added", scaled->added},
                      {"removed", scaled->removed},
                      {"moves", MovesJson(scaled->reshard.moves)}}
                     .dump()
              << "\n";
    return kExitOk;
  }
  if (scaled->added.empty() && scaled->removed.empty()) {
    std::cout << "already " << scaled->to_primaries << " primaries"
              << (scaled->reshard.moves.empty() ? ": nothing to do\n" : "; evened out slots:\n")
              << (scaled->reshard.moves.empty() ? "" : MovesTable(scaled->reshard.moves));
    return kExitOk;
  }
  std::cout << (invocation.dry_run ? "would scale " : "scaled ") << "from "
            << scaled->from_primaries << " to " << scaled->to_primaries << " primaries ("
            << (scaled->added.empty() ? "removing " : "adding ")
            << (scaled->added.empty() ? scaled->removed.size() : scaled->added.size())
            << " shard(s))\n";
  if (invocation.dry_run) std::cout << PlanTable(scaled->plan);
  if (!scaled->reshard.moves.empty()) std::cout << MovesTable(scaled->reshard.moves);
  return kExitOk;
}

int RunMoveSlots(const Invocation& invocation) {
  auto ranges = common::ParseSlotRanges(*invocation.slot_ranges);
  if (!ranges.ok()) {
    PrintError("move-slots: " + ranges.error().message());
    return kExitUsage;
  }
  return RunReshard(invocation, {.ranges = *ranges, .to_shard = *invocation.to_shard});
}

}  // namespace shardctl::launcher
