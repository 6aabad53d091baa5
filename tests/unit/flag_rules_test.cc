// The one flag rule (common/flags) holds in all four parsers: shardctl, bench run, bench compare
// and shardproxy. A value flag takes the next word unless it starts with "--"; a negative number
// is a value; "--flag=value" works; a switch takes no value; errors point at --help.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "launcher/bench/args.h"
#include "launcher/bench/compare.h"
#include "launcher/cli/args.h"
#include "launcher/model/spec.h"
#include "proxy/services/options.h"

namespace shardctl {
namespace {

using Args = std::vector<std::string>;

// The error of a parse, or "" when it succeeded.
using Parser = std::function<std::string(const Args&)>;

template <typename Result>
std::string ErrorOf(const Result& result) {
  return result.ok() ? "" : result.error().message();
}

struct Program {
  const char* name;
  Parser parse;
  Args before;       // words that make a valid line ("up", "--cluster 1:1", ...)
  std::string flag;  // a value flag taking a number
  std::string help;  // where its errors point
};

std::vector<Program> Programs() {
  return {
      {"shardctl",
       [](const Args& a) { return ErrorOf(launcher::ParseArgs(a)); },
       {"up"},
       "shards",
       "see shardctl up --help"},
      {"bench_run",
       [](const Args& a) { return ErrorOf(launcher::ParseBenchArgs(a)); },
       {"run"},
       "threads",
       "see shardctl bench run --help"},
      {"bench_compare",
       [](const Args& a) { return ErrorOf(launcher::ParseCompareArgs(a)); },
       {"compare", "--cpus", "0", "--out", "r"},
       "shards",
       "see shardctl bench compare --help"},
      {"shardproxy",
       [](const Args& a) { return ErrorOf(proxy::ParseProxyArgs(a)); },
       {"--cluster", "127.0.0.1:7000"},
       "threads",
       "see shardproxy --help"},
  };
}

Args Line(const Program& program, const Args& words) {
  Args line = program.before;
  line.insert(line.end(), words.begin(), words.end());
  return line;
}

TEST(FlagRulesTest, AFlagIsNeverTheValueOfTheFlagBeforeIt) {
  for (const auto& p : Programs()) {
    const std::string error = p.parse(Line(p, {"--" + p.flag, "--help"}));
    EXPECT_EQ(error, "--" + p.flag + " needs a value (" + p.help + ")") << p.name;
    EXPECT_EQ(p.parse(Line(p, {"--" + p.flag})), error) << p.name;
  }
}

TEST(FlagRulesTest, BothSpellingsOfAValue) {
  for (const auto& p : Programs()) {
    EXPECT_EQ(p.parse(Line(p, {"--" + p.flag, "2"})), "") << p.name;
    EXPECT_EQ(p.parse(Line(p, {"--" + p.flag + "=2"})), "") << p.name;
  }
}

TEST(FlagRulesTest, ANegativeNumberIsReadAsAValue) {
  // Read as the value, then refused by the flag's own range check (not "needs a value").
  for (const auto& p : Programs()) {
    const std::string error = p.parse(Line(p, {"--" + p.flag, "-1"}));
    EXPECT_EQ(error.find("needs a value"), std::string::npos) << p.name << ": " << error;
  }
}

TEST(FlagRulesTest, UnknownFlagsSwitchValuesAndStrayWordsPointAtHelp) {
  for (const auto& p : Programs()) {
    EXPECT_EQ(p.parse(Line(p, {"--frobnicate", "1"})).rfind("unknown flag --frobnicate (", 0), 0u)
        << p.name;
    EXPECT_NE(p.parse(Line(p, {"--frobnicate"})).find(p.help), std::string::npos) << p.name;
    EXPECT_EQ(p.parse(Line(p, {"stray"})), "unexpected argument \"stray\" (" + p.help + ")")
        << p.name;
  }
  EXPECT_EQ(proxy::ParseProxyArgs(Args{"--cluster", "1:1", "--quiet=yes"}).error().message(),
            "--quiet takes no value (see shardproxy --help)");
}

TEST(FlagRulesTest, HelpStopsEveryParser) {
  for (const auto& p : Programs()) {
    EXPECT_EQ(p.parse(Line(p, {"--help", "--frobnicate"})), "") << p.name;
    EXPECT_EQ(p.parse(Line(p, {"-h"})), "") << p.name;
  }
}

TEST(FlagRulesTest, EverySpecKeyIsAFlagOfUp) {
  std::vector<std::string> offered;
  for (const auto& flag : launcher::CommandFlags("up")) offered.push_back(flag.name);
  for (std::string_view key : launcher::SpecKeys()) {
    EXPECT_NE(std::find(offered.begin(), offered.end(), key), offered.end()) << key;
  }
}

}  // namespace
}  // namespace shardctl
