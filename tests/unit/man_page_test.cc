// Man pages rendered from the --help texts: roff escaping, blocks, the split into NAME / SYNOPSIS /
// DESCRIPTION, and that shardctl(1) and shardproxy(1) hold every command and flag of --help.
#include "common/man_page.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "launcher/cli/args.h"
#include "proxy/services/options.h"

namespace shardctl {
namespace {

struct RoffCase {
  const char* name;
  const char* help;
  const char* roff;
};

class HelpToRoffTest : public testing::TestWithParam<RoffCase> {};

TEST_P(HelpToRoffTest, Renders) { EXPECT_EQ(common::HelpToRoff(GetParam().help), GetParam().roff); }

INSTANTIATE_TEST_SUITE_P(
    Cases, HelpToRoffTest,
    testing::Values(
        RoffCase{"ProseStaysProse", "one line\nand the next\n", "one line\nand the next\n"},
        RoffCase{"HyphensAreMinus", "use --json -f\n", "use \\-\\-json \\-f\n"},
        RoffCase{"QuotesAndBackslash", "it's `up` \\n\n", "it\\(aqs \\(gaup\\(ga \\en\n"},
        RoffCase{"LeadingDotIsText", ".hidden\n", "\\&.hidden\n"},
        RoffCase{"BlankLineIsAParagraph", "a\n\nb\n", "a\n.PP\nb\n"},
        RoffCase{"LeadingAndDoubleBlanksCollapse", "\na\n\n\nb\n\n", "a\n.PP\nb\n"},
        RoffCase{
            "IndentedLinesKeepTheirColumns",
            "Options:\n  --name NAME   the name\n                more\nafter\n",
            "Options:\n.nf\n  \\-\\-name NAME   the name\n                more\n.fi\nafter\n"}),
    [](const testing::TestParamInfo<RoffCase>& test) { return test.param.name; });

TEST(SplitHelpTest, SummaryUsageAndBody) {
  const auto parts = common::SplitHelp(
      "tool - does things,\nwell.\n\nUsage: tool [options]\n\nOptions:\n  --x  x\n", "tool");
  EXPECT_EQ(parts.summary, "tool - does things,\nwell.\n");
  EXPECT_EQ(parts.usage, std::vector<std::string>{"tool [options]"});
  EXPECT_EQ(parts.body, "Options:\n  --x  x\n");
}

TEST(SplitHelpTest, UsageOnTheIndentedLinesBelow) {
  const auto parts =
      common::SplitHelp("tool: a thing.\n\nUsage:\n  tool --a\n  tool --b\n\nMore.\n", "tool");
  EXPECT_EQ(parts.usage, (std::vector<std::string>{"tool --a", "tool --b"}));
  EXPECT_EQ(parts.body, "More.\n");
}

TEST(SplitHelpTest, NoUsageIsAllBody) {
  const auto parts = common::SplitHelp("Just text.\n", "tool");
  EXPECT_TRUE(parts.summary.empty());
  EXPECT_TRUE(parts.usage.empty());
  EXPECT_EQ(parts.body, "Just text.\n");
}

// The page as a reader sees its words: roff's minus signs as hyphens again.
std::string Unescaped(std::string roff) {
  for (size_t at = 0; (at = roff.find("\\-", at)) != std::string::npos;) roff.replace(at, 2, "-");
  return roff;
}

// Every line is text or one of the few requests the renderer writes.
void ExpectOnlyKnownRequests(const std::string& roff) {
  static const std::set<std::string> requests = {".TH", ".SH", ".SS", ".PP",
                                                 ".nf", ".fi", ".ad", ".nh"};
  std::istringstream lines(roff);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || (line[0] != '.' && line[0] != '\'')) continue;
    EXPECT_TRUE(requests.contains(line.substr(0, 3))) << "stray request: " << line;
  }
}

TEST(ShardctlManPageTest, HoldsEveryCommandAndFlag) {
  const std::string roff = launcher::ManPage("shardctl 0.1.0 (git 3265a9b)");
  ExpectOnlyKnownRequests(roff);
  EXPECT_TRUE(roff.starts_with(".TH SHARDCTL 1 \"\" \"shardctl 0.1.0 (git 3265a9b)\""));
  EXPECT_NE(roff.find(".SH NAME\nshardctl \\- run Redis or Valkey as many pinned "
                      "single\\-threaded shards on one host\n"),
            std::string::npos);
  EXPECT_NE(roff.find(".SH SYNOPSIS\n.nf\nshardctl <command> [options]\n.fi\n"), std::string::npos);
  const std::string page = Unescaped(roff);
  for (const auto& command : launcher::CommandNames()) {
    if (command == "help") continue;
    if (command == "bench") {
      EXPECT_NE(page.find(".SS \"shardctl bench run\""), std::string::npos);
      EXPECT_NE(page.find(".SS \"shardctl bench compare\""), std::string::npos);
      continue;
    }
    EXPECT_NE(page.find(".SS \"shardctl " + command + "\""), std::string::npos) << command;
    for (const auto& flag : launcher::CommandFlags(command)) {
      if (flag.name == "help") continue;
      EXPECT_TRUE(std::regex_search(page, std::regex("--" + flag.name + "[^a-z-]")))
          << command << " --" << flag.name;
    }
  }
  EXPECT_NE(page.find("\\fBshardproxy\\fR(1)"), std::string::npos);
}

TEST(ProxyManPageTest, HoldsEveryFlag) {
  const std::string roff = proxy::ProxyManPage("shardproxy 0.1.0 (git unknown)");
  ExpectOnlyKnownRequests(roff);
  EXPECT_NE(roff.find(".SH NAME\nshardproxy \\- one Redis endpoint in front of a Redis Cluster\n"),
            std::string::npos);
  EXPECT_NE(roff.find(".SH SYNOPSIS\n.nf\nshardproxy \\-\\-cluster HOST:PORT"), std::string::npos);
  const std::string page = Unescaped(roff);
  for (const auto& flag : proxy::ProxyFlags()) {
    EXPECT_TRUE(std::regex_search(page, std::regex("--" + flag.name + "[^a-z-]"))) << flag.name;
  }
}

}  // namespace
}  // namespace shardctl
