// One updating line on the terminal for work that takes more than a second (forming a big
// cluster, saving every shard through the fork limit, a bench run):
//
//   shardctl: forming the cluster of 120 shards (8/120) 2.4s
//
// rewritten in place ("\r" + erase line), never scrolling. Silent when stderr is not a terminal or
// the command prints JSON, so logs and scripts see only results. Nothing is drawn during the
// first second: quick work stays quiet. Not thread-safe: one thread owns the line.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace shardctl::launcher {

// Whether a progress line may be drawn: stderr is a terminal and the command does not print JSON.
bool ProgressAllowed(bool json);

// Pure: the line for `text` after `elapsed`, with "(done/total)" when total > 0, cut to fit
// `width` columns (one is left free so the cursor never wraps).
std::string FormatProgress(std::string_view text, size_t done, size_t total,
                           std::chrono::milliseconds elapsed, size_t width);

class ProgressDisplay {
 public:
  using Clock = std::chrono::steady_clock;

  // Draws on `out` only when `enabled` (ProgressAllowed()), and only once `delay` has passed.
  explicit ProgressDisplay(bool enabled, std::FILE* out = stderr,
                           std::chrono::milliseconds delay = std::chrono::seconds(1));
  ~ProgressDisplay();  // Clear()
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // What the line says from now on; drawn at once if the delay has passed.
  void Show(std::string_view text, size_t done = 0, size_t total = 0);
  // Redraws the current text with the time elapsed, at most every 100 ms; call it while waiting.
  void Tick();
  // Erases the line: call it before printing anything else. The next Show() draws again.
  void Clear();
  bool enabled() const { return enabled_; }

 private:
  void Draw();

  bool enabled_;
  std::FILE* out_;
  Clock::time_point started_;
  std::chrono::milliseconds delay_;
  Clock::time_point last_draw_{};
  std::string text_;
  size_t done_ = 0;
  size_t total_ = 0;
  bool drawn_ = false;
};

}  // namespace shardctl::launcher
