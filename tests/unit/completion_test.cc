// Shell completion: the engine (common::Complete) on shardctl's real command tree, and the flag
// lists it is built from checked against the parsers and the --help texts, so every command and
// flag a user can type is offered and documented, and nothing is offered that does not parse.
#include "common/completion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "launcher/bench/args.h"
#include "launcher/bench/compare.h"
#include "launcher/bench/help.h"
#include "launcher/cli/args.h"
#include "launcher/cli/completion.h"
#include "proxy/services/options.h"

namespace shardctl {
namespace {

using common::Completion;
using common::CompletionFlag;
using common::FlagValue;
using Words = std::vector<std::string>;

// Deployments "cache" and "default" in every state dir; remembers the last --state-dir it saw.
struct FakeDeployments {
  std::string seen_state_dir = "(none)";
  common::DynamicValues Callback() {
    return [this](const std::string& flag, const std::map<std::string, std::string>& given) {
      EXPECT_EQ(flag, "name");
      auto dir = given.find("state-dir");
      seen_state_dir = dir == given.end() ? "" : dir->second;
      return Words{"cache", "default"};
    };
  }
};

struct CompleteCase {
  const char* name;
  Words words;  // after "shardctl"; the last is the word being completed
  Completion::Kind kind;
  Words expected;
};

class CompleteTest : public testing::TestWithParam<CompleteCase> {};

TEST_P(CompleteTest, OffersTheRightWords) {
  const CompleteCase& c = GetParam();
  FakeDeployments deployments;
  Completion got = common::Complete(launcher::CompletionTree(), c.words, deployments.Callback());
  EXPECT_EQ(got.kind, c.kind);
  EXPECT_EQ(got.words, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Shardctl, CompleteTest,
    testing::Values(
        CompleteCase{"CommandsByPrefix",
                     {"s"},
                     Completion::Kind::kWords,
                     {"status", "scale", "save", "supervise"}},
        CompleteCase{"OneCommand", {"rebalance-"}, Completion::Kind::kWords, {"rebalance-roles"}},
        CompleteCase{"CommandsSharingAPrefix",
                     {"reb"},
                     Completion::Kind::kWords,
                     {"rebalance-roles", "rebalance"}},
        CompleteCase{"TopLevelFlags", {"--"}, Completion::Kind::kWords, {"--help", "--version"}},
        CompleteCase{"FlagOfTheCommand",
                     {"up", "--sh"},
                     Completion::Kind::kWords,
                     {"--shards", "--shard-memory"}},
        CompleteCase{
            "FlagsWhereNoSubcommands",
            {"down", ""},
            Completion::Kind::kWords,
            {"--name", "--state-dir", "--config", "--json", "--leave", "--purge", "--no-save", "--help"}},
        CompleteCase{"SwitchTakesNoValue",
                     {"up", "--json", "--rep"},
                     Completion::Kind::kWords,
                     {"--replicas"}},
        CompleteCase{"ValueSkipped",
                     {"up", "--shards", "4", "--fork"},
                     Completion::Kind::kWords,
                     {"--fork-limit"}},
        CompleteCase{"InlineValueSkipped",
                     {"up", "--shards=4", "--fork"},
                     Completion::Kind::kWords,
                     {"--fork-limit"}},
        CompleteCase{"NumberValueUnguessed", {"up", "--shards", ""}, Completion::Kind::kWords, {}},
        CompleteCase{"ConfigIsAFile", {"up", "--config", "con"}, Completion::Kind::kFiles, {}},
        CompleteCase{"StateDirIsADirectory",
                     {"status", "--state-dir", ""},
                     Completion::Kind::kDirectories,
                     {}},
        CompleteCase{"NameIsADeployment",
                     {"status", "--name", ""},
                     Completion::Kind::kWords,
                     {"cache", "default"}},
        CompleteCase{
            "DeploymentByPrefix", {"restart", "--name", "c"}, Completion::Kind::kWords, {"cache"}},
        CompleteCase{
            "BenchSubcommands", {"bench", ""}, Completion::Kind::kWords, {"run", "compare"}},
        CompleteCase{"BenchRunFlag",
                     {"bench", "run", "--rate-p"},
                     Completion::Kind::kWords,
                     {"--rate-profile"}},
        CompleteCase{"BenchCompareOutIsADirectory",
                     {"bench", "compare", "--out", "r"},
                     Completion::Kind::kDirectories,
                     {}},
        CompleteCase{"HelpTopics",
                     {"help", "re"},
                     Completion::Kind::kWords,
                     {"restart", "rebalance-roles", "rebalance", "reload-tls", "restore"}},
        CompleteCase{"InternalFlagHidden", {"supervise", "--re"}, Completion::Kind::kWords, {}},
        CompleteCase{
            "InlineFlagValueLeftAlone", {"up", "--config=x"}, Completion::Kind::kWords, {}},
        CompleteCase{"UnknownWordKeepsTheTopLevel",
                     {"frob", "--"},
                     Completion::Kind::kWords,
                     {"--help", "--version"}}),
    [](const testing::TestParamInfo<CompleteCase>& case_info) { return case_info.param.name; });

TEST(CompleteTest, DeploymentsComeFromTheStateDirOnTheLine) {
  FakeDeployments deployments;
  const auto tree = launcher::CompletionTree();
  common::Complete(tree, {"status", "--name", ""}, deployments.Callback());
  EXPECT_EQ(deployments.seen_state_dir, "");
  common::Complete(tree, {"status", "--state-dir", "/srv/a", "--name", ""}, deployments.Callback());
  EXPECT_EQ(deployments.seen_state_dir, "/srv/a");
  common::Complete(tree, {"down", "--state-dir=/srv/b", "--name", "d"}, deployments.Callback());
  EXPECT_EQ(deployments.seen_state_dir, "/srv/b");
}

TEST(CompleteTest, FormatsOneWordPerLineOrAPathRequest) {
  EXPECT_EQ(common::FormatCompletion({.words = {"up", "down"}}), "up\ndown\n");
  EXPECT_EQ(common::FormatCompletion({}), "");
  EXPECT_EQ(common::FormatCompletion({.kind = Completion::Kind::kFiles}), ":files\n");
  EXPECT_EQ(common::FormatCompletion({.kind = Completion::Kind::kDirectories}), ":directories\n");
}

// ---------------------------------------------------------------------------------------------
// The flag lists against the parsers and the help texts.

// The flags a help text lists as options: lines starting with "  --flag" or "  -f, --flag", and
// "  --a, --b" lists.
std::set<std::string> OptionLineFlags(const std::string& help) {
  static const std::regex line(R"(^ +(?:-[a-zA-Z], )?((?:--[a-z0-9-]+(?:, )?)+))");
  static const std::regex flag(R"(--([a-z0-9-]+))");
  std::set<std::string> flags;
  std::istringstream lines(help);
  for (std::string text; std::getline(lines, text);) {
    std::smatch match;
    if (!std::regex_search(text, match, line)) continue;
    const std::string list = match[1];
    for (std::sregex_iterator it(list.begin(), list.end(), flag), end; it != end; ++it) {
      flags.insert((*it)[1]);
    }
  }
  return flags;
}

bool Mentions(const std::string& help, const std::string& flag) {
  return std::regex_search(help, std::regex("--" + flag + "([^a-z0-9-]|$)"));
}

std::set<std::string> Names(const std::vector<CompletionFlag>& flags) {
  std::set<std::string> names;
  for (const auto& flag : flags) names.insert(flag.name);
  return names;
}

// Each flag of `flags` is documented in `help` (--help itself is documented once, in the
// overview), and each option line of `help` is in `flags`.
void ExpectFlagsMatchHelp(const std::string& what, const std::vector<CompletionFlag>& flags,
                          const std::string& help) {
  SCOPED_TRACE(what);
  const std::set<std::string> offered = Names(flags);
  for (const auto& name : offered) {
    if (name == "help") continue;
    EXPECT_TRUE(Mentions(help, name)) << "--" << name << " is offered but not in the --help";
  }
  for (const auto& name : OptionLineFlags(help)) {
    EXPECT_TRUE(offered.contains(name)) << "--" << name << " is documented but not offered";
  }
  EXPECT_TRUE(offered.contains("help"));
}

// A value that gets past "unknown flag": the parsers check values after recognising the flag.
std::vector<std::string> WithFlag(std::vector<std::string> args, const CompletionFlag& flag) {
  args.push_back("--" + flag.name);
  if (flag.value != FlagValue::kNone) args.push_back("1");
  return args;
}

void ExpectRecognised(const std::string& what, const std::string& error) {
  EXPECT_EQ(error.find("unknown flag"), std::string::npos) << what << ": " << error;
  EXPECT_EQ(error.find("does not apply"), std::string::npos) << what << ": " << error;
}

TEST(CompletionFlagsTest, EveryShardctlCommandIsOfferedAndInTheOverview) {
  const auto tree = launcher::CompletionTree();
  const std::string overview = launcher::HelpText("");
  std::set<std::string> offered;
  for (const auto& command : tree.commands) offered.insert(command.name);
  for (const auto& command : launcher::CommandNames()) {
    EXPECT_TRUE(offered.contains(command)) << command;
    if (command != "help") {
      EXPECT_NE(overview.find("\n  " + command), std::string::npos) << command;
    }
  }
  EXPECT_TRUE(offered.contains("version"));
}

TEST(CompletionFlagsTest, ShardctlFlagsParseAndAreDocumented) {
  for (const auto& command : launcher::CommandNames()) {
    if (command == "help" || command == "bench") continue;
    const auto flags = launcher::CommandFlags(command);
    ExpectFlagsMatchHelp(command, flags, launcher::HelpText(command));
    for (const auto& flag : flags) {
      if (flag.name == "help") continue;
      auto parsed = launcher::ParseArgs(WithFlag({command}, flag));
      ExpectRecognised(command + " --" + flag.name, parsed.ok() ? "" : parsed.error().message());
    }
  }
}

TEST(CompletionFlagsTest, BenchFlagsParseAndAreDocumented) {
  ExpectFlagsMatchHelp("bench run", launcher::BenchRunFlags(), launcher::BenchHelpText("bench"));
  for (const auto& flag : launcher::BenchRunFlags()) {
    auto parsed = launcher::ParseBenchArgs(WithFlag({"run"}, flag));
    ExpectRecognised("bench run --" + flag.name, parsed.ok() ? "" : parsed.error().message());
  }
  ExpectFlagsMatchHelp("bench compare", launcher::BenchCompareFlags(),
                       launcher::BenchHelpText("bench compare"));
  for (const auto& flag : launcher::BenchCompareFlags()) {
    auto parsed = launcher::ParseCompareArgs(WithFlag({"compare"}, flag));
    ExpectRecognised("bench compare --" + flag.name, parsed.ok() ? "" : parsed.error().message());
  }
}

TEST(CompletionFlagsTest, ProxyFlagsParseAndAreDocumented) {
  ExpectFlagsMatchHelp("shardproxy", proxy::ProxyFlags(), proxy::ProxyHelpText());
  for (const auto& flag : proxy::ProxyFlags()) {
    const std::vector<std::string> args = WithFlag({}, flag);
    auto parsed = proxy::ParseProxyArgs(args);
    ExpectRecognised("shardproxy --" + flag.name, parsed.ok() ? "" : parsed.error().message());
  }
}

TEST(CompletionFlagsTest, HiddenEntryPointsParse) {
  auto man = launcher::ParseArgs({"help", "--man"});
  ASSERT_TRUE(man.ok()) << man.error().message();
  EXPECT_TRUE(man->man_page);
  auto complete = launcher::ParseArgs({"help", "--complete", "up", "--sh"});
  ASSERT_TRUE(complete.ok()) << complete.error().message();
  EXPECT_EQ(complete->complete, (Words{"up", "--sh"}));
  const Words proxy_args = {"--help-complete", "--li"};
  auto proxy_complete = proxy::ParseProxyArgs(proxy_args);
  ASSERT_TRUE(proxy_complete) << proxy_complete.error().message();
  EXPECT_EQ(proxy_complete->complete, (Words{"--li"}));
  const Words proxy_man = {"--help-man"};
  auto man_page = proxy::ParseProxyArgs(proxy_man);
  ASSERT_TRUE(man_page) << man_page.error().message();
  EXPECT_TRUE(man_page->man_page);
}

}  // namespace
}  // namespace shardctl
