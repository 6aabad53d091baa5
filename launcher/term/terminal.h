// A full-screen view on a terminal (`shardctl top`): keys one at a time, the alternate screen,
// its size, and the escape sequences that redraw in place.
#pragma once

#include <termios.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace shardctl::launcher {

bool IsTerminal(int fd);

struct TerminalSize {
  size_t columns = 80;
  size_t rows = 24;
};

// The size of the terminal on `fd`; 80x24 when it cannot tell.
TerminalSize TerminalSizeOf(int fd);

// Pure: `lines` as one frame drawn from the top-left corner over the previous one: each line cut
// to `size.columns - 1` and cleared to its end, at most `size.rows` lines, the rest of the screen
// cleared.
std::string FullScreenFrame(const std::vector<std::string>& lines, TerminalSize size);

// While it lives: stdout shows the alternate screen with the cursor hidden and, when stdin is a
// terminal, stdin delivers each key at once without echo (signals still work: Ctrl-C is SIGINT).
// The destructor puts everything back. Construct it only when stdout is a terminal.
class FullScreen {
 public:
  FullScreen();
  ~FullScreen();
  FullScreen(const FullScreen&) = delete;
  FullScreen& operator=(const FullScreen&) = delete;

  // A key pressed within `timeout_ms`, or nullopt (none, or stdin is not a terminal and the
  // wait simply passes). Returns early, with nullopt, when a signal arrives.
  std::optional<char> ReadKey(int timeout_ms);
  bool keys() const { return saved_.has_value(); }

 private:
  std::optional<termios> saved_;  // stdin's settings before raw mode
};

}  // namespace shardctl::launcher
