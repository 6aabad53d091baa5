// `shardctl top`: a live per-shard table (ops/s, hit ratio, memory against the cap, clients, CPU,
// role, last fork) from ops/top.h, drawn by top_view.h.
//
//   stdout a terminal: the alternate screen, redrawn in place every --interval; keys change the
//                      sort (o m c l h s), q, Ctrl-C or SIGTERM end it and restore the screen
//   otherwise:         the table as plain lines every --interval, until --count or a signal
//   --slots:           the hottest slots (ops/top_slots.h) as plain lines or --json, one refresh
//                      per --interval after a first reading; the per-slot counting it turned on
//                      is turned off again however it ends (--count, q, Ctrl-C, SIGTERM)
#include "launcher/ops/top.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/cli/top_view.h"
#include "launcher/ops/top_keys.h"
#include "launcher/ops/top_slots.h"
#include "launcher/term/output.h"
#include "launcher/term/terminal.h"

namespace shardctl::launcher {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kShardTimeout = std::chrono::milliseconds(300);
constexpr auto kProxyTimeout = std::chrono::milliseconds(1000);
constexpr size_t kTopKeys = 20;  // rows of top --keys

volatile sig_atomic_t g_stop = 0;

// SIGINT and SIGTERM end the loop (and interrupt its waits) instead of the process, so the
// terminal is always restored.
void CatchStopSignals() {
  struct sigaction action {};
  action.sa_handler = [](int) { g_stop = 1; };
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a signal ends poll() at once
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void Draw(const std::string& name, std::vector<TopRow>& rows, TopSort sort) {
  SortTopRows(rows, sort);
  std::vector<std::string> lines = {TopHeadline(name, rows, sort, /*keys=*/true), ""};
  for (auto& line : TopTable(rows)) lines.push_back(std::move(line));
  std::fputs(FullScreenFrame(lines, TerminalSizeOf(STDOUT_FILENO)).c_str(), stdout);
  std::fflush(stdout);
}

int RunLive(TopFeed& feed, TopSort sort, const Invocation& invocation) {
  FullScreen screen;
  const std::string& name = feed.name();
  for (int refreshes = 0; !g_stop;) {
    std::vector<TopRow> rows = feed.Next();
    Draw(name, rows, sort);
    if (invocation.count > 0 && ++refreshes >= invocation.count) break;
    const auto next = Clock::now() + invocation.interval;
    while (!g_stop && Clock::now() < next) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      std::optional<char> key = screen.ReadKey(static_cast<int>(left.count()) + 1);
      if (!key) continue;
      if (*key == 'q' || *key == 'Q') return kExitOk;
      if (auto chosen = TopSortForKey(*key)) {
        sort = *chosen;
        Draw(name, rows, sort);
      }
    }
  }
  return kExitOk;
}

int RunPlain(TopFeed& feed, TopSort sort, const Invocation& invocation) {
  for (int refreshes = 0; !g_stop;) {
    std::vector<TopRow> rows = feed.Next();
    SortTopRows(rows, sort);
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    std::cout << stamp << "  " << TopHeadline(feed.name(), rows, sort, /*keys=*/false) << "\n";
    for (const auto& line : TopTable(rows)) std::cout << line << "\n";
    std::cout << std::endl;
    if (invocation.count > 0 && ++refreshes >= invocation.count) break;
    // Interrupted by SIGINT/SIGTERM, which end the loop.
    poll(nullptr, 0, static_cast<int>(invocation.interval.count()));
  }
  return kExitOk;
}

// Waits `interval` or until a signal; false when a signal came.
bool Wait(std::chrono::milliseconds interval) {
  const auto end = Clock::now() + interval;
  while (!g_stop && Clock::now() < end) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
    poll(nullptr, 0, static_cast<int>(left.count()) + 1);
  }
  return !g_stop;
}

int RunSlots(const Spec& spec, const Invocation& invocation) {
  CatchStopSignals();  // before Open turns counting on: a signal still lets the feed put it back
  auto feed = SlotTopFeed::Open(spec, kShardTimeout);
  if (!feed.ok()) return Fail(feed.error());
  const size_t limit = static_cast<size_t>(invocation.limit.value_or(20));
  for (int refreshes = 0; Wait(invocation.interval);) {
    const SlotTopFrame frame = (*feed)->Next(limit);
    if (invocation.json) {
      std::cout << SlotTopJson((*feed)->name(), frame).dump() << std::endl;
    } else {
      std::cout << SlotTopHeadline((*feed)->name(), frame) << "\n";
      for (const auto& line : SlotTopTable(frame)) std::cout << line << "\n";
      std::cout << std::endl;
    }
    if (invocation.count > 0 && ++refreshes >= invocation.count) break;
  }
  return kExitOk;
}

// top --keys: the proxy's hottest keys, one table per refresh, redrawn in place on a terminal
// (q quits) or printed as plain lines. A refresh the proxy does not answer shows its error.
int RunKeys(TopKeysFeed& feed, const Invocation& invocation) {
  std::optional<FullScreen> screen;
  if (IsTerminal(STDOUT_FILENO)) screen.emplace();
  for (int refreshes = 0; !g_stop;) {
    auto rows = feed.Next();
    std::vector<std::string> lines = {"shardctl top --keys: " + feed.name() +
                                      " (the proxy's counts; q quits)"};
    if (rows.ok()) {
      for (auto& line : TopKeysTable(*rows)) lines.push_back(std::move(line));
    } else {
      lines.push_back("shardproxy does not answer: " + rows.error().message());
    }
    if (screen) {
      std::fputs(FullScreenFrame(lines, TerminalSizeOf(STDOUT_FILENO)).c_str(), stdout);
      std::fflush(stdout);
    } else {
      const std::time_t now = std::time(nullptr);
      char stamp[32];
      std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
      lines[0] = std::string(stamp) + "  " + feed.name() + ": hot keys (shardproxy)";
      for (const auto& line : lines) std::cout << line << "\n";
      std::cout << std::endl;
    }
    if (invocation.count > 0 && ++refreshes >= invocation.count) break;
    const auto next = Clock::now() + invocation.interval;
    while (!g_stop && Clock::now() < next) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      if (!screen) {
        poll(nullptr, 0, static_cast<int>(left.count()) + 1);
        continue;
      }
      std::optional<char> key = screen->ReadKey(static_cast<int>(left.count()) + 1);
      if (key && (*key == 'q' || *key == 'Q')) return kExitOk;
    }
  }
  return kExitOk;
}

}  // namespace

int RunTop(const Invocation& invocation) {
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  if (invocation.slots && invocation.top_keys) {
    PrintError("top: --slots and --keys are two views (pick one)");
    return kExitUsage;
  }
  if (invocation.slots) return RunSlots(*spec, invocation);
  if (invocation.json || invocation.limit) {
    PrintError("top: --json and --limit go with --slots (add --slots, or drop them)");
    return kExitUsage;
  }
  if (invocation.top_keys) {
    auto feed = TopKeysFeed::Open(*spec, kProxyTimeout, kTopKeys);
    if (!feed.ok()) return Fail(feed.error());
    CatchStopSignals();
    return RunKeys(*feed, invocation);
  }
  auto feed = TopFeed::Open(*spec, kShardTimeout);
  if (!feed.ok()) return Fail(feed.error());
  const TopSort sort = ParseTopSort(invocation.sort).value_or(TopSort::kOps);
  CatchStopSignals();
  if (IsTerminal(STDOUT_FILENO)) return RunLive(*feed, sort, invocation);
  return RunPlain(*feed, sort, invocation);
}

}  // namespace shardctl::launcher
