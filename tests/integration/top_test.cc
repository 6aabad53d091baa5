// `shardctl top` and the progress line on a real terminal: tmux gives the commands a terminal
// (new-session -d), the test reads the screen (capture-pane) and types (send-keys). Without a
// terminal top prints plain lines, and `up` prints no progress at all.
#include <signal.h>

#include <fstream>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

// A tmux server of the test's own (its own socket, no user config), killed when the test ends so
// nothing outlives it.
class Tmux {
 public:
  explicit Tmux(const std::filesystem::path& dir) : socket_((dir / "tmux.sock").string()) {}
  ~Tmux() { Run({"kill-server"}); }

  CommandResult Run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"tmux", "-S", socket_, "-f", "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, 10s);
  }
  // Starts `command` (run by sh) in a detached 150x40 session named "test".
  CommandResult Start(const std::string& command) {
    return Run({"new-session", "-d", "-s", "test", "-x", "150", "-y", "40", command});
  }
  std::string Screen() { return Run({"capture-pane", "-p", "-t", "test"}).out; }
  bool SessionAlive() { return Run({"has-session", "-t", "test"}).exit_code == 0; }

 private:
  std::string socket_;
};

// A shell-quoted word.
std::string Quote(const std::string& word) { return "'" + word + "'"; }

class TopTest : public ShardctlTest {
 protected:
  // `shardctl <args> --name N --state-dir S` as one shell command line.
  std::string CommandLine(const std::vector<std::string>& args) {
    std::string line =
        "SHARDCTL_STATE_DIR=" + Quote(state_root().string()) + " " + Quote(ShardctlBinary());
    for (const auto& arg : args) line += " " + Quote(arg);
    return line + " --name " + Quote(name()) + " --state-dir " + Quote(state_root().string());
  }
};

TEST_F(TopTest, LiveTableUnderTmuxChangesSortAndQuitsOnQ) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  Tmux tmux(scratch_dir());
  auto started = tmux.Start(CommandLine({"top", "--interval", "300ms"}));
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  std::string screen;
  ASSERT_TRUE(WaitUntil(
      [&] {
        screen = tmux.Screen();
        return screen.find("sorted by ops") != std::string::npos &&
               screen.find(std::to_string(base_port() + 2) + "  primary") != std::string::npos;
      },
      20s, 100ms))
      << screen;
  EXPECT_NE(screen.find("shardctl top: \"" + name() + "\", 3 shards"), std::string::npos) << screen;
  EXPECT_NE(screen.find("SHARD  PORT"), std::string::npos) << screen;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(screen.find(std::to_string(base_port() + i) + "  primary"), std::string::npos)
        << screen;
  }
  // In place: the table is drawn once per screen, however many refreshes passed.
  EXPECT_EQ(screen.find("SHARD  PORT"), screen.rfind("SHARD  PORT")) << screen;

  ASSERT_EQ(tmux.Run({"send-keys", "-t", "test", "m"}).exit_code, 0);
  EXPECT_TRUE(WaitUntil([&] { return tmux.Screen().find("sorted by mem") != std::string::npos; },
                        10s, 50ms))
      << tmux.Screen();
  ASSERT_EQ(tmux.Run({"send-keys", "-t", "test", "q"}).exit_code, 0);
  EXPECT_TRUE(WaitUntil([&] { return !tmux.SessionAlive(); }, 10s, 50ms))
      << "top did not quit on q:\n"
      << tmux.Screen();
}

TEST_F(TopTest, PlainLinesWithoutATerminalAndSigtermEndsIt) {
  auto up = Up(2);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto top = OnDeployment("top", {"--count", "2", "--interval", "200ms", "--sort", "shard"});
  ASSERT_EQ(top.exit_code, 0) << top.Describe();
  EXPECT_EQ(top.out.find("\x1b"), std::string::npos) << "escape sequences without a terminal";
  auto lines = SplitLines(top.out);
  int headlines = 0, rows = 0;
  for (const auto& line : lines) {
    headlines += line.find("shardctl top: \"" + name() + "\", 2 shards") != std::string::npos;
    rows += line.starts_with("1      " + std::to_string(base_port() + 1) + "  primary");
  }
  EXPECT_EQ(headlines, 2) << top.out;
  EXPECT_EQ(rows, 2) << top.out;

  auto endless = StartOnDeployment("top", {"--interval", "200ms"}, "top");
  const auto out = scratch_dir() / "top.out";
  ASSERT_TRUE(WaitUntil([&] { return ReadFileText(out).find("SHARD") != std::string::npos; }, 20s))
      << ReadFileText(scratch_dir() / "top.err");
  ASSERT_EQ(kill(endless->pid(), SIGTERM), 0);
  EXPECT_EQ(endless->WaitForExit(10s), 0) << ReadFileText(scratch_dir() / "top.err");

  auto missing = Shardctl(
      {"top", "--name", "nothing-here", "--state-dir", state_root().string(), "--count", "1"});
  EXPECT_EQ(missing.exit_code, 1) << missing.Describe();
  EXPECT_EQ(SplitLines(missing.err).size(), 1u) << missing.err;
}

TEST_F(TopTest, UpShowsOneUpdatingProgressLineOnATerminal) {
  Tmux tmux(scratch_dir());
  const auto log = scratch_dir() / "pane.log";
  // The pane waits for a key, so its output is recorded from the first byte on.
  auto started =
      tmux.Start("read go; " +
                 CommandLine({"up", "--shards", "3", "--base-port", std::to_string(base_port())}) +
                 "; echo UP-EXIT=$?; read done");
  ASSERT_EQ(started.exit_code, 0) << started.Describe();
  ASSERT_EQ(tmux.Run({"pipe-pane", "-t", "test", "-o", "cat >> " + Quote(log.string())}).exit_code,
            0);
  ASSERT_EQ(tmux.Run({"send-keys", "-t", "test", "Enter"}).exit_code, 0);
  ASSERT_TRUE(WaitUntil([&] { return ReadFileText(log).find("UP-EXIT=") != std::string::npos; },
                        90s, 100ms))
      << ReadFileText(log);
  const std::string output = ReadFileText(log);
  EXPECT_NE(output.find("UP-EXIT=0"), std::string::npos) << output;
  // Formation takes over a second (Redis keeps a new primary failed for 2 s): the line showed,
  // was rewritten in place, and was erased before the result.
  EXPECT_NE(output.find("\r\x1b[Kshardctl: "), std::string::npos) << output;
  const size_t result = output.find("started \"" + name() + "\"");
  ASSERT_NE(result, std::string::npos) << output;
  EXPECT_LT(output.rfind("\r\x1b[K", result), result) << output;
  const std::string screen = tmux.Screen();
  EXPECT_EQ(screen.find("answer PING"), std::string::npos) << "progress left on screen:\n"
                                                           << screen;
}

}  // namespace
}  // namespace shardctl::integration
