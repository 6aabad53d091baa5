// What gets installed beside the binaries, tried the way a user meets it: --version names the git
// revision the binaries were built from, the man pages the build rendered pass groff's warnings
// check and read like --help, and the bash and zsh completion scripts (packaging/completion/),
// run in real bash and zsh against the real binaries, offer every command, every flag and the
// deployments of the state directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "launcher/cli/args.h"
#include "proxy/services/options.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = SHARDCTL_SOURCE_DIR;
const fs::path kCompletion = kSource / "packaging" / "completion";

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::set<std::string> LineSet(const std::string& text) {
  std::set<std::string> lines;
  for (const auto& line : SplitLines(text)) lines.insert(line);
  return lines;
}

// "'word'" for a shell script.
std::string Quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string QuotedWords(const std::vector<std::string>& words) {
  std::string line;
  for (const auto& word : words) line += " " + Quoted(word);
  return line;
}

// What bash offers for the last of `words` (words[0] the program), one candidate per line; the
// script runs in `dir`.
CommandResult BashComplete(const std::vector<std::string>& words, const fs::path& dir,
                           const std::map<std::string, std::string>& env = {}) {
  const std::string script = "cd " + Quoted(dir) + " && source " +
                             Quoted(kCompletion / "shardctl.bash") + " && COMP_WORDS=(" +
                             QuotedWords(words) +
                             ") && COMP_CWORD=" + std::to_string(words.size() - 1) +
                             " && _shardctl_complete && printf '%s\\n' \"${COMPREPLY[@]}\"";
  return RunCommand({"bash", "--norc", "--noprofile", "-c", script}, 30s, env);
}

// The same in zsh: compadd and _files stand in for the completion system's and print what they
// are given.
CommandResult ZshComplete(const std::vector<std::string>& words, const fs::path& dir,
                          const std::map<std::string, std::string>& env = {}) {
  const std::string script =
      "cd " + Quoted(dir) +
      " && compadd() { [[ $1 == -- ]] && shift; print -rl -- \"$@\" }"
      " && _files() { print -r -- \":files $*\" }"
      " && complete_line() { local -a words; words=(\"$@\"); local CURRENT=$#;"
      " local PREFIX=${words[CURRENT]}; source " +
      Quoted(kCompletion / "_shardctl") + " } && complete_line" + QuotedWords(words);
  return RunCommand({"zsh", "-f", "-c", script}, 30s, env);
}

using Completer = CommandResult (*)(const std::vector<std::string>&, const fs::path&,
                                    const std::map<std::string, std::string>&);

class CompletionTest : public testing::TestWithParam<const char*> {
 protected:
  CommandResult Complete(const std::vector<std::string>& words,
                         const std::map<std::string, std::string>& env = {}) {
    const Completer complete = std::string(GetParam()) == "bash" ? BashComplete : ZshComplete;
    auto result = complete(words, dir_.path(), env);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    return result;
  }
  TempDir dir_;
};

TEST_P(CompletionTest, OffersEveryCommandAndEveryFlag) {
  const auto commands = LineSet(Complete({SHARDCTL_BINARY, ""}).out);
  for (const auto& command : launcher::CommandNames()) {
    EXPECT_TRUE(commands.contains(command)) << command;
    if (command == "help" || command == "bench") continue;
    const auto flags = LineSet(Complete({SHARDCTL_BINARY, command, "--"}).out);
    for (const auto& flag : launcher::CommandFlags(command)) {
      EXPECT_TRUE(flags.contains("--" + flag.name)) << command << " --" << flag.name;
    }
  }
  EXPECT_EQ(LineSet(Complete({SHARDCTL_BINARY, "bench", ""}).out),
            (std::set<std::string>{"run", "compare"}));
  EXPECT_TRUE(
      LineSet(Complete({SHARDCTL_BINARY, "bench", "run", "--"}).out).contains("--rate-profile"));
  const auto proxy_flags = LineSet(Complete({SHARDPROXY_BINARY, "--"}).out);
  for (const auto& flag : proxy::ProxyFlags()) {
    EXPECT_TRUE(proxy_flags.contains("--" + flag.name)) << "shardproxy --" << flag.name;
  }
  EXPECT_EQ(LineSet(Complete({SHARDPROXY_BINARY, "--re"}).out),
            (std::set<std::string>{"--read-from", "--refresh-interval"}));
}

TEST_P(CompletionTest, OffersTheDeploymentsOfTheStateDirectory) {
  TempDir state;
  for (const char* name : {"cache", "sessions"}) {
    fs::create_directories(state.path() / name);
    std::ofstream(state.path() / name / "deployment.json") << "{}\n";
  }
  fs::create_directories(state.path() / "not-a-deployment");
  const std::map<std::string, std::string> env = {{"SHARDCTL_STATE_DIR", state.path().string()}};
  EXPECT_EQ(LineSet(Complete({SHARDCTL_BINARY, "status", "--name", ""}, env).out),
            (std::set<std::string>{"cache", "sessions"}));
  EXPECT_EQ(LineSet(Complete({SHARDCTL_BINARY, "down", "--name", "se"}, env).out),
            (std::set<std::string>{"sessions"}));
  // --state-dir on the line wins over the environment.
  TempDir other;
  fs::create_directories(other.path() / "batch");
  std::ofstream(other.path() / "batch" / "deployment.json") << "{}\n";
  EXPECT_EQ(LineSet(Complete({SHARDCTL_BINARY, "logs", "--state-dir", other.path().string(),
                              "--name", ""},
                             env)
                        .out),
            (std::set<std::string>{"batch"}));
}

TEST_P(CompletionTest, CompletesFileNamesForFiles) {
  std::ofstream(dir_.path() / "cache.toml") << "shards = 2\n";
  const std::string out = Complete({SHARDCTL_BINARY, "up", "--config", "ca"}).out;
  if (std::string(GetParam()) == "bash") {
    EXPECT_EQ(LineSet(out), (std::set<std::string>{"cache.toml"})) << out;
  } else {
    EXPECT_EQ(LineSet(out), (std::set<std::string>{":files "})) << out;  // zsh's _files
  }
}

INSTANTIATE_TEST_SUITE_P(Shells, CompletionTest, testing::Values("bash", "zsh"),
                         [](const testing::TestParamInfo<const char*>& test) {
                           return std::string(test.param);
                         });

// The revision the sources are at, as the build records it; "unknown" outside a checkout.
std::string SourceRevision() {
  auto top = RunCommand({"git", "-C", kSource.string(), "rev-parse", "--show-toplevel"}, 10s);
  if (top.exit_code != 0 || fs::canonical(Trimmed(top.out)) != fs::canonical(kSource)) {
    return "unknown";
  }
  auto head = RunCommand({"git", "-C", kSource.string(), "rev-parse", "--short=7", "HEAD"}, 10s);
  return head.exit_code == 0 ? Trimmed(head.out) : "unknown";
}

TEST(VersionTest, NamesTheVersionAndTheGitRevision) {
  const std::regex line(
      R"((shardctl|shardproxy) \d+\.\d+\.\d+ \(git ([0-9a-f]{7}(-dirty)?|unknown)\)\n)");
  const std::string revision = SourceRevision();
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{SHARDCTL_BINARY, "--version"},
        std::vector<std::string>{SHARDCTL_BINARY, "version"},
        std::vector<std::string>{SHARDPROXY_BINARY, "--version"}}) {
    auto result = RunCommand(argv, 10s);
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
    EXPECT_TRUE(std::regex_match(result.out, line)) << result.out;
    EXPECT_NE(result.out.find("(git " + revision), std::string::npos)
        << result.out << "sources at " << revision << " (rebuild after a commit)";
  }
}

TEST(ManPageTest, RendersWithoutWarningsAndReadsLikeHelp) {
  for (const char* program : {"shardctl", "shardproxy"}) {
    const fs::path page = fs::path(SHARDCTL_MAN_DIR) / (std::string(program) + ".1");
    ASSERT_TRUE(fs::exists(page)) << page << " (the man_pages target renders it)";
    // -ww: every warning; -z: format, print nothing.
    auto lint = RunCommand({"groff", "-man", "-Tutf8", "-ww", "-z", page.string()}, 30s);
    EXPECT_EQ(lint.exit_code, 0) << lint.Describe();
    EXPECT_EQ(lint.err, "") << program;
    auto text = RunCommand({"groff", "-man", "-Tascii", "-P-cbou", page.string()}, 30s);
    ASSERT_EQ(text.exit_code, 0) << text.Describe();
    EXPECT_NE(text.out.find("NAME"), std::string::npos);
    EXPECT_NE(text.out.find(std::string(program) + " - "), std::string::npos) << text.out;
  }
  auto shardctl = RunCommand(
      {"groff", "-man", "-Tascii", "-P-cbou", (fs::path(SHARDCTL_MAN_DIR) / "shardctl.1").string()},
      30s);
  for (const char* part : {"shardctl rebalance-roles", "--max-shard-memory SIZE", "--rate-profile",
                           "Exit codes", "SEE ALSO"}) {
    EXPECT_NE(shardctl.out.find(part), std::string::npos) << part;
  }
}

}  // namespace
}  // namespace shardctl::integration
