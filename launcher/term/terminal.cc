#include "launcher/term/terminal.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace shardctl::launcher {
namespace {

constexpr const char* kEnterAlternateScreen = "\x1b[?1049h\x1b[?25l";  // and hide the cursor
constexpr const char* kLeaveAlternateScreen = "\x1b[?25h\x1b[?1049l";

}  // namespace

bool IsTerminal(int fd) { return isatty(fd) == 1; }

TerminalSize TerminalSizeOf(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0 || size.ws_row == 0) return {};
  return {.columns = size.ws_col, .rows = size.ws_row};
}

std::string FullScreenFrame(const std::vector<std::string>& lines, TerminalSize size) {
  std::string frame = "\x1b[H";  // home
  const size_t width = size.columns > 1 ? size.columns - 1 : size.columns;
  for (size_t i = 0; i < lines.size() && i < size.rows; ++i) {
    if (i > 0) frame += "\r\n";
    frame += lines[i].substr(0, width);
    frame += "\x1b[K";  // clear what the previous frame left on this line
  }
  frame += "\x1b[J";  // and every line below
  return frame;
}

FullScreen::FullScreen() {
  if (IsTerminal(STDIN_FILENO)) {
    termios settings{};
    if (tcgetattr(STDIN_FILENO, &settings) == 0) {
      saved_ = settings;
      settings.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
      settings.c_cc[VMIN] = 0;
      settings.c_cc[VTIME] = 0;
      tcsetattr(STDIN_FILENO, TCSANOW, &settings);
    }
  }
  std::fputs(kEnterAlternateScreen, stdout);
  std::fflush(stdout);
}

FullScreen::~FullScreen() {
  std::fputs(kLeaveAlternateScreen, stdout);
  std::fflush(stdout);
  if (saved_) tcsetattr(STDIN_FILENO, TCSANOW, &*saved_);
}

std::optional<char> FullScreen::ReadKey(int timeout_ms) {
  if (!saved_) {
    poll(nullptr, 0, timeout_ms);  // no keyboard: just wait (a signal ends the wait early)
    return std::nullopt;
  }
  pollfd input{.fd = STDIN_FILENO, .events = POLLIN, .revents = 0};
  if (poll(&input, 1, timeout_ms) <= 0) return std::nullopt;
  char key = 0;
  if (read(STDIN_FILENO, &key, 1) != 1) return std::nullopt;
  return key;
}

}  // namespace shardctl::launcher
