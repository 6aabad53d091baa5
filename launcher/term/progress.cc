#include "launcher/term/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace shardctl::launcher {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

size_t TerminalWidth(std::FILE* out) {
  winsize size{};
  if (ioctl(fileno(out), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

}  // namespace

bool ProgressAllowed(bool json) { return !json && isatty(STDERR_FILENO) == 1; }

std::string FormatProgress(std::string_view text, size_t done, size_t total,
                           std::chrono::milliseconds elapsed, size_t width) {
  std::string line = "shardctl: ";
  line += text;
  if (total > 0) line += " (" + std::to_string(done) + "/" + std::to_string(total) + ")";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, " %.1fs", static_cast<double>(elapsed.count()) / 1000.0);
  line += seconds;
  if (width > 0 && line.size() >= width) line.resize(width - 1);
  return line;
}

ProgressDisplay::ProgressDisplay(bool enabled, std::FILE* out, std::chrono::milliseconds delay)
    : enabled_(enabled), out_(out), started_(Clock::now()), delay_(delay) {}

ProgressDisplay::~ProgressDisplay() { Clear(); }

void ProgressDisplay::Show(std::string_view text, size_t done, size_t total) {
  text_.assign(text);
  done_ = done;
  total_ = total;
  Draw();
}

void ProgressDisplay::Tick() {
  if (Clock::now() - last_draw_ >= kRedrawInterval) Draw();
}

void ProgressDisplay::Clear() {
  if (!drawn_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

void ProgressDisplay::Draw() {
  const auto now = Clock::now();
  if (!enabled_ || text_.empty() || now - started_ < delay_) return;
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - started_);
  const std::string line = FormatProgress(text_, done_, total_, elapsed, TerminalWidth(out_));
  std::fprintf(out_, "\r\x1b[K%s", line.c_str());
  std::fflush(out_);
  last_draw_ = now;
  drawn_ = true;
}

}  // namespace shardctl::launcher
