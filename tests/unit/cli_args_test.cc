// Command-line parsing (ParseArgs) and the --help texts (HelpText).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/cli/args.h"

namespace shardctl::launcher {
namespace {

using Args = std::vector<std::string>;

std::string Join(const Args& args) {
  std::string joined;
  for (const auto& arg : args) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

Invocation MustParse(const Args& args) {
  auto invocation = ParseArgs(args);
  EXPECT_TRUE(invocation.ok()) << Join(args) << ": " << invocation.error().message();
  return invocation.ok() ? *invocation : Invocation{};
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Commands

struct CommandCase {
  Args args;
  const char* command;
};

class ParseCommandTest : public testing::TestWithParam<CommandCase> {};

TEST_P(ParseCommandTest, RecognisesTheCommand) {
  Invocation invocation = MustParse(GetParam().args);
  EXPECT_EQ(invocation.command, GetParam().command) << Join(GetParam().args);
}

INSTANTIATE_TEST_SUITE_P(
    Commands, ParseCommandTest,
    testing::Values(CommandCase{{"plan"}, "plan"}, CommandCase{{"up"}, "up"},
                    CommandCase{{"status"}, "status"}, CommandCase{{"down"}, "down"},
                    CommandCase{{"supervise", "--name", "x"}, "supervise"},
                    CommandCase{{"restart", "3"}, "restart"},
                    CommandCase{{"restart", "--rolling"}, "restart"}, CommandCase{{"logs"}, "logs"},
                    CommandCase{{"help"}, "help"}, CommandCase{{"--help"}, "help"},
                    CommandCase{{"-h"}, "help"}, CommandCase{{"--version"}, "version"},
                    CommandCase{{"version"}, "version"}),
    [](const testing::TestParamInfo<CommandCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ParseArgsTest, CommandAloneHasNothingElseSet) {
  Invocation invocation = MustParse({"up"});
  EXPECT_TRUE(invocation.settings.empty());
  EXPECT_FALSE(invocation.config_file.has_value());
  EXPECT_FALSE(invocation.sysfs_root.has_value());
  EXPECT_FALSE(invocation.help_topic.has_value());
  EXPECT_FALSE(invocation.json);
  EXPECT_FALSE(invocation.dry_run);
  EXPECT_FALSE(invocation.foreground);
  EXPECT_FALSE(invocation.purge);
}

TEST(ParseArgsTest, NoArgumentsIsAnError) {
  auto invocation = ParseArgs({});
  ASSERT_FALSE(invocation.ok());
  EXPECT_TRUE(Contains(invocation.error().message(), "--help")) << invocation.error().message();
}

struct UnknownCommandCase {
  const char* typed;
  const char* suggestion;  // "" when none is expected
};

class UnknownCommandTest : public testing::TestWithParam<UnknownCommandCase> {};

TEST_P(UnknownCommandTest, IsRefusedWithASuggestion) {
  auto invocation = ParseArgs({GetParam().typed});
  ASSERT_FALSE(invocation.ok()) << GetParam().typed;
  const std::string& message = invocation.error().message();
  EXPECT_TRUE(Contains(message, std::string("unknown command \"") + GetParam().typed + "\""))
      << message;
  if (*GetParam().suggestion) {
    EXPECT_TRUE(Contains(message, std::string("did you mean ") + GetParam().suggestion + "?"))
        << message;
  } else {
    EXPECT_FALSE(Contains(message, "did you mean")) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Typos, UnknownCommandTest,
                         testing::Values(UnknownCommandCase{"stauts", "status"},
                                         UnknownCommandCase{"pln", "plan"},
                                         UnknownCommandCase{"donw", "down"},
                                         UnknownCommandCase{"upp", "up"},
                                         UnknownCommandCase{"xyzzyxyzzy", ""}),
                         [](const testing::TestParamInfo<UnknownCommandCase>& case_info) {
                           return std::to_string(case_info.index);
                         });

TEST(ParseArgsTest, FlagBeforeTheCommandIsNotACommand) {
  auto invocation = ParseArgs({"--shards", "4", "up"});
  ASSERT_FALSE(invocation.ok());
  EXPECT_TRUE(Contains(invocation.error().message(), "unknown command"))
      << invocation.error().message();
}

// ---------------------------------------------------------------------------------------------
// Flags and values

struct ValueCase {
  Args args;
  const char* key;
  const char* value;
};

class ParseValueTest : public testing::TestWithParam<ValueCase> {};

TEST_P(ParseValueTest, RecordsTheSettingWithItsFlagAsWhere) {
  const ValueCase& c = GetParam();
  Invocation invocation = MustParse(c.args);
  ASSERT_EQ(invocation.settings.size(), 1u) << Join(c.args);
  EXPECT_EQ(invocation.settings[0].key, c.key);
  EXPECT_EQ(invocation.settings[0].value, c.value);
  EXPECT_EQ(invocation.settings[0].where, std::string("--") + c.key);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, ParseValueTest,
    testing::Values(ValueCase{{"up", "--shards", "8"}, "shards", "8"},
                    ValueCase{{"up", "--shards=8"}, "shards", "8"},
                    ValueCase{{"plan", "--cpus", "2-63"}, "cpus", "2-63"},
                    ValueCase{{"plan", "--cpus=2-63"}, "cpus", "2-63"},
                    ValueCase{{"plan", "--bind=::1"}, "bind", "::1"},
                    // Only the first '=' splits.
                    ValueCase{{"plan", "--state-dir=/tmp/a=b"}, "state-dir", "/tmp/a=b"},
                    // An empty inline value is a value (BuildSpec judges it).
                    ValueCase{{"plan", "--reserve-cpus="}, "reserve-cpus", ""},
                    ValueCase{{"status", "--name", "cache"}, "name", "cache"},
                    ValueCase{{"down", "--name=cache"}, "name", "cache"},
                    ValueCase{{"down", "--state-dir", "/tmp/x"}, "state-dir", "/tmp/x"},
                    ValueCase{{"supervise", "--name", "cache"}, "name", "cache"}),
    [](const testing::TestParamInfo<ValueCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ParseArgsTest, EverySpecFlagIsAcceptedByPlanAndUp) {
  for (const char* command : {"plan", "up"}) {
    for (auto key : SpecKeys()) {
      // --allow-no-auth and --tls-also-plain are switches: each sets its key to true.
      const bool switch_key = key == "allow-no-auth" || key == "tls-also-plain";
      Args args = switch_key ? Args{command, "--" + std::string(key)}
                             : Args{command, "--" + std::string(key), "v"};
      auto invocation = ParseArgs(args);
      ASSERT_TRUE(invocation.ok()) << Join(args) << ": " << invocation.error().message();
      ASSERT_EQ(invocation->settings.size(), 1u);
      EXPECT_EQ(invocation->settings[0].key, key);
    }
  }
}

TEST(ParseArgsTest, SettingsKeepTheirOrder) {
  Invocation invocation =
      MustParse({"up", "--shards", "4", "--base-port=8000", "--shards", "6", "--json"});
  ASSERT_EQ(invocation.settings.size(), 3u);
  EXPECT_EQ(invocation.settings[0].value, "4");
  EXPECT_EQ(invocation.settings[1].key, "base-port");
  EXPECT_EQ(invocation.settings[2].value, "6");
  EXPECT_TRUE(invocation.json);
  auto spec = ResolveSpec(invocation);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->shards, 6);
  EXPECT_EQ(spec->base_port, 8000);
}

TEST(ParseArgsTest, SwitchesAndNonSpecValueFlags) {
  Invocation up = MustParse({"up", "--dry-run", "--foreground", "--json", "--config", "a.toml"});
  EXPECT_TRUE(up.dry_run);
  EXPECT_TRUE(up.foreground);
  EXPECT_TRUE(up.json);
  EXPECT_EQ(up.config_file, "a.toml");

  Invocation plan = MustParse({"plan", "--sysfs-root=/tmp/sys", "--config=b.toml"});
  EXPECT_EQ(plan.sysfs_root, "/tmp/sys");
  EXPECT_EQ(plan.config_file, "b.toml");

  Invocation down = MustParse({"down", "--purge"});
  EXPECT_TRUE(down.purge);

  Invocation status = MustParse({"status", "--json"});
  EXPECT_TRUE(status.json);

  Invocation supervise = MustParse({"supervise", "--name", "x", "--ready-fd", "3"});
  EXPECT_EQ(supervise.ready_fd, 3);
}

TEST(ParseArgsTest, RestartAndLogsTakeAShardIndex) {
  EXPECT_EQ(MustParse({"restart", "3"}).shard, 3);
  EXPECT_TRUE(MustParse({"restart", "--rolling"}).rolling);
  Invocation logs = MustParse({"logs", "2", "-f", "--lines", "10"});
  EXPECT_EQ(logs.shard, 2);
  EXPECT_TRUE(logs.follow);
  EXPECT_EQ(logs.lines, 10);
  EXPECT_FALSE(MustParse({"logs"}).shard.has_value());
  EXPECT_FALSE(ParseArgs({"restart"}).ok());
  EXPECT_FALSE(ParseArgs({"restart", "3", "--rolling"}).ok());
  EXPECT_FALSE(ParseArgs({"restart", "x"}).ok());
}

// ---------------------------------------------------------------------------------------------
// Usage errors

struct ErrorCase {
  Args args;
  std::vector<std::string> mentions;
};

class ParseErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrorTest, IsAUsageErrorNamingTheProblem) {
  const ErrorCase& c = GetParam();
  auto invocation = ParseArgs(c.args);
  ASSERT_FALSE(invocation.ok()) << Join(c.args);
  const std::string& message = invocation.error().message();
  for (const auto& text : c.mentions) {
    EXPECT_TRUE(Contains(message, text))
        << Join(c.args) << ": \"" << text << "\" not in: " << message;
  }
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ParseErrorTest,
    testing::Values(
        // Unknown flags, with a suggestion when one is close.
        ErrorCase{{"up", "--shard", "4"}, {"unknown flag --shard", "did you mean --shards?"}},
        ErrorCase{{"up", "--base_port", "4"}, {"unknown flag --base_port", "--base-port?"}},
        ErrorCase{{"plan", "--jsno"}, {"unknown flag --jsno", "--json?"}},
        ErrorCase{{"down", "--purg"}, {"unknown flag --purg", "--purge?"}},
        ErrorCase{{"up", "--shards=4", "--memroy=1gb"}, {"--memroy", "--memory?"}},
        ErrorCase{{"status", "--xyzzyxyzzyxyzzy"}, {"unknown flag --xyzzyxyzzyxyzzy"}},
        // Known flags given to a command they do not apply to.
        ErrorCase{{"status", "--shards", "4"}, {"--shards", "does not apply to status"}},
        ErrorCase{{"down", "--memory=1gb"}, {"--memory", "does not apply to down"}},
        ErrorCase{{"up", "--purge"}, {"--purge", "does not apply to up"}},
        ErrorCase{{"plan", "--dry-run"}, {"--dry-run", "does not apply to plan"}},
        ErrorCase{{"up", "--sysfs-root", "/tmp"}, {"--sysfs-root", "does not apply to up"}},
        ErrorCase{{"status", "--foreground"}, {"--foreground", "does not apply to status"}},
        ErrorCase{{"up", "--ready-fd", "3"}, {"--ready-fd", "does not apply to up"}},
        ErrorCase{{"supervise", "--shards", "3"}, {"--shards", "does not apply to supervise"}},
        // Missing values.
        ErrorCase{{"up", "--shards"}, {"--shards needs a value"}},
        ErrorCase{{"plan", "--cpus"}, {"--cpus needs a value"}},
        ErrorCase{{"up", "--config"}, {"--config needs a value"}},
        ErrorCase{{"status", "--name"}, {"--name needs a value"}},
        // A switch given a value.
        ErrorCase{{"status", "--json=yes"}, {"--json takes no value"}},
        // Stray positional arguments.
        ErrorCase{{"up", "8"}, {"unexpected argument \"8\""}},
        ErrorCase{{"up", "--shards", "8", "extra"}, {"unexpected argument \"extra\""}},
        ErrorCase{{"status", "cache"}, {"unexpected argument \"cache\""}},
        ErrorCase{{"down", "-x"}, {"unexpected argument \"-x\""}},
        ErrorCase{{"plan", "--"}, {"unexpected argument \"--\""}},
        // Bad values of non-spec flags.
        ErrorCase{{"supervise", "--ready-fd", "x"}, {"--ready-fd", "\"x\""}},
        ErrorCase{{"supervise", "--ready-fd=-1"}, {"--ready-fd"}}),
    [](const testing::TestParamInfo<ErrorCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ParseArgsTest, SpecValuesAreCheckedByResolveSpecNotByTheParser) {
  Invocation invocation = MustParse({"up", "--shards", "abc", "--bind", "localhost"});
  auto spec = ResolveSpec(invocation);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(Contains(spec.error().message(), "--shards: ")) << spec.error().message();
  EXPECT_TRUE(Contains(spec.error().message(), "--bind: ")) << spec.error().message();
}

TEST(ParseArgsTest, MissingConfigFileIsReportedByResolveSpec) {
  Invocation invocation = MustParse({"up", "--config", "/nonexistent/shardctl-test.toml"});
  auto spec = ResolveSpec(invocation);
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(Contains(spec.error().message(), "/nonexistent/shardctl-test.toml"))
      << spec.error().message();
}

// ---------------------------------------------------------------------------------------------
// Help and version

struct HelpCase {
  Args args;
  const char* topic;
};

class ParseHelpTest : public testing::TestWithParam<HelpCase> {};

TEST_P(ParseHelpTest, SetsTheHelpTopic) {
  auto invocation = ParseArgs(GetParam().args);
  ASSERT_TRUE(invocation.ok()) << Join(GetParam().args) << ": " << invocation.error().message();
  ASSERT_TRUE(invocation->help_topic.has_value()) << Join(GetParam().args);
  EXPECT_EQ(*invocation->help_topic, GetParam().topic) << Join(GetParam().args);
}

INSTANTIATE_TEST_SUITE_P(
    Help, ParseHelpTest,
    testing::Values(HelpCase{{"--help"}, ""}, HelpCase{{"-h"}, ""}, HelpCase{{"help"}, ""},
                    HelpCase{{"help", "up"}, "up"}, HelpCase{{"help", "status"}, "status"},
                    HelpCase{{"up", "--help"}, "up"}, HelpCase{{"up", "-h"}, "up"},
                    HelpCase{{"plan", "--shards", "4", "--help"}, "plan"},
                    HelpCase{{"plan", "--help", "--shards", "4"}, "plan"},
                    HelpCase{{"status", "--json", "--help"}, "status"},
                    HelpCase{{"down", "--purge", "-h"}, "down"},
                    // Help wins over what follows it, even if that is wrong.
                    HelpCase{{"up", "--help", "--no-such-flag"}, "up"},
                    HelpCase{{"status", "--help", "--shards", "4"}, "status"},
                    HelpCase{{"--help", "up"}, ""}, HelpCase{{"supervise", "--help"}, "supervise"}),
    [](const testing::TestParamInfo<HelpCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ParseArgsTest, VersionIgnoresTheRest) {
  EXPECT_EQ(MustParse({"--version"}).command, "version");
  EXPECT_FALSE(MustParse({"--version"}).help_topic.has_value());
}

struct HelpTextCase {
  const char* command;
  std::vector<std::string> mentions;
};

class HelpTextTest : public testing::TestWithParam<HelpTextCase> {};

TEST_P(HelpTextTest, MentionsTheCommandsFlags) {
  const HelpTextCase& c = GetParam();
  std::string text = HelpText(c.command);
  EXPECT_TRUE(Contains(text, std::string("Usage: shardctl ") + c.command)) << c.command;
  for (const auto& part : c.mentions) {
    EXPECT_TRUE(Contains(text, part)) << c.command << ": \"" << part << "\" not in its help";
  }
}

std::vector<std::string> SpecFlags() {
  std::vector<std::string> flags;
  for (auto key : SpecKeys()) flags.push_back("--" + std::string(key));
  flags.push_back("--config");
  return flags;
}

std::vector<std::string> With(std::vector<std::string> base, std::vector<std::string> more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

INSTANTIATE_TEST_SUITE_P(
    Commands, HelpTextTest,
    testing::Values(HelpTextCase{"plan", With(SpecFlags(), {"--json", "--sysfs-root"})},
                    HelpTextCase{"up", With(SpecFlags(), {"--json", "--dry-run", "--foreground"})},
                    HelpTextCase{
                        "status",
                        {"--name", "--state-dir", "--json", "Exit codes", "\n  0  ", "\n  1  ",
                         "\n  2  ", "\n  3  ", "healthy", "degraded", "down", "unknown"}},
                    HelpTextCase{"down", {"--name", "--state-dir", "--purge", "--json"}},
                    HelpTextCase{"restart", {"--rolling", "--engine", "--name", "--json"}},
                    HelpTextCase{"logs", {"--follow", "-f", "--lines"}},
                    HelpTextCase{"supervise", {"--name", "--state-dir"}}),
    [](const testing::TestParamInfo<HelpTextCase>& case_info) {
      return std::string(case_info.param.command);
    });

TEST(HelpTextTest, OverviewListsTheCommandsAndExitCodes) {
  std::string text = HelpText("");
  for (const char* part : {"Usage: shardctl <command>", "plan", "up", "status", "down",
                           "Exit codes", "0 success", "1 runtime", "2 usage"}) {
    EXPECT_TRUE(Contains(text, part)) << "\"" << part << "\" not in the overview";
  }
  EXPECT_EQ(HelpText("no-such-command"), text);
}

TEST(HelpTextTest, ExitCodeConstantsMatchTheDocumentedValues) {
  EXPECT_EQ(kExitOk, 0);
  EXPECT_EQ(kExitRuntime, 1);
  EXPECT_EQ(kExitUsage, 2);
  EXPECT_EQ(kStatusOk, 0);
  EXPECT_EQ(kStatusDegraded, 1);
  EXPECT_EQ(kStatusDown, 2);
  EXPECT_EQ(kStatusUnknown, 3);
}

}  // namespace
}  // namespace shardctl::launcher

namespace shardctl::launcher {
namespace {

TEST(ParseArgsTest, HelpForAnUnknownCommandIsAnError) {
  auto parsed = ParseArgs({"help", "bogus"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message().find("no command \"bogus\""), std::string::npos);
  EXPECT_TRUE(ParseArgs({"help", "restart"}).ok());
  EXPECT_TRUE(ParseArgs({"help"}).ok());
}

TEST(ParseArgsTest, AFlagIsNotTakenAsTheValueOfTheFlagBeforeIt) {
  auto parsed = ParseArgs({"up", "--shards", "--help"});
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message().find("--shards needs a value"), std::string::npos)
      << parsed.error().message();
  // A negative number is still a value (and refused later by validation, with its own message).
  auto negative = ParseArgs({"up", "--shards", "-3"});
  ASSERT_TRUE(negative.ok());
  EXPECT_EQ(negative->settings.back().value, "-3");
}

}  // namespace
}  // namespace shardctl::launcher
