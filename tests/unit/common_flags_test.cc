// The flag module (common/flags): one table of rows read by the parser, the --help options list
// and completion. Table-driven over a small made-up program.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/flags.h"

namespace shardctl::common {
namespace {

using Args = std::vector<std::string>;

// What the made-up program's flags store.
struct Options {
  bool json = false;
  bool help = false;
  int threads = 1;
  uint64_t buffer = 0;
  std::chrono::milliseconds timeout{0};
  std::string file;
  std::vector<std::string> seeds;  // --seed repeats
  std::vector<std::string> words;  // positional arguments
  int offset = 0;                  // --offset takes negative numbers
};

std::vector<Flag> Rows(Options& o) {
  return {
      SwitchFlag("json", o.json, "print JSON"),
      {.name = "threads",
       .type = FlagType::kNumber,
       .help = "event-loop threads (default: 1)",
       .apply = [&o](const std::string& v) -> Status {
         auto n = ParseNumberFlag(std::string_view("threads"), v, 1, 256);
         if (!n) return n.error();
         o.threads = *n;
         return Ok();
       }},
      {.name = "offset",
       .type = FlagType::kNumber,
       .help = "a signed number",
       .apply = [&o](const std::string& v) -> Status {
         auto n = ParseNumberFlag(std::string_view("offset"), v, -10, 10);
         if (!n) return n.error();
         o.offset = *n;
         return Ok();
       }},
      {.name = "buffer",
       .type = FlagType::kSize,
       .help = "bytes held per client",
       .apply = [&o](const std::string& v) -> Status {
         auto n = ParseSizeFlag("buffer", v, 1024, "64mb");
         if (!n) return n.error();
         o.buffer = *n;
         return Ok();
       },
       .group = "Limits"},
      {.name = "timeout",
       .type = FlagType::kDuration,
       .help = "how long to wait",
       .apply = [&o](const std::string& v) -> Status {
         auto d = ParsePositiveDurationFlag("timeout", v);
         if (!d) return d.error();
         o.timeout = *d;
         return Ok();
       },
       .group = "Limits"},
      TextFlag("file", FlagType::kFile, "", o.file, "where to write"),
      {.name = "seed",
       .type = FlagType::kText,
       .value_name = "HOST:PORT",
       .help = "a node to start from; repeatable",
       .apply =
           [&o](const std::string& v) {
             o.seeds.push_back(v);
             return Ok();
           }},
      {.name = "internal", .type = FlagType::kNumber, .hidden = true},
      {.name = "help",
       .help = "this help",
       .apply = [&o](const std::string&) { return (o.help = true, Ok()); },
       .short_name = 'h',
       .stops = true},
  };
}

FlagTable TableFor(Options& options) {
  return {.command = "run",
          .help_hint = "see tool run --help",
          .flags = Rows(options),
          .elsewhere = {"purge"},
          .positional = [&options](const std::string& word) -> Result<bool> {
            if (word.starts_with("-") || options.words.size() == 1) return false;
            if (word == "bad") return Error("\"bad\" is not a word");
            options.words.push_back(word);
            return true;
          },
          .suggest =
              [](const std::string& flag) {
                return flag == "thread" ? std::string("threads") : std::string();
              }};
}

Result<Options> Parse(const Args& args) {
  Options options;
  if (auto status = ParseFlags(TableFor(options), args); !status.ok()) return status.error();
  return options;
}

TEST(ParseFlagsTest, ValuesInBothSpellingsSwitchesAndRepeats) {
  auto parsed = Parse({"--threads", "4", "--json", "--seed=a:1", "--file=out.txt", "--seed", "b:2",
                       "--buffer", "2kb", "--timeout=300ms"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->threads, 4);
  EXPECT_TRUE(parsed->json);
  EXPECT_EQ(parsed->seeds, (Args{"a:1", "b:2"}));
  EXPECT_EQ(parsed->file, "out.txt");
  EXPECT_EQ(parsed->buffer, 2048u);
  EXPECT_EQ(parsed->timeout, std::chrono::milliseconds(300));
}

TEST(ParseFlagsTest, ALaterFlagWins) {
  auto parsed = Parse({"--threads", "4", "--threads=6"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->threads, 6);
}

TEST(ParseFlagsTest, ANegativeNumberIsAValue) {
  auto parsed = Parse({"--offset", "-3"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->offset, -3);
}

TEST(ParseFlagsTest, HelpStopsReadingAndHasAShortForm) {
  for (const Args& args : {Args{"--help", "--bogus"}, Args{"-h"}, Args{"--json", "--help", "x"}}) {
    auto parsed = Parse(args);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_TRUE(parsed->help);
  }
}

TEST(ParseFlagsTest, PositionalWordsGoToTheCommand) {
  auto parsed = Parse({"first", "--json"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->words, Args{"first"});
}

TEST(ParseFlagsTest, InlineEmptyValueIsAValue) {
  auto parsed = Parse({"--file="});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->file, "");
}

struct ErrorCase {
  const char* name;
  Args args;
  std::string error;
};

class ParseFlagsErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParseFlagsErrorTest, IsOneLineNamingTheFlag) {
  auto parsed = Parse(GetParam().args);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseFlagsErrorTest,
    testing::Values(
        ErrorCase{"Unknown", {"--colour"}, "unknown flag --colour (see tool run --help)"},
        ErrorCase{"UnknownWithHint",
                  {"--thread", "2"},
                  "unknown flag --thread (did you mean --threads? see tool run --help)"},
        ErrorCase{"OtherCommandsFlag",
                  {"--purge"},
                  "--purge does not apply to run (see tool run --help)"},
        ErrorCase{"MissingValue", {"--threads"}, "--threads needs a value (see tool run --help)"},
        ErrorCase{"FlagAsValue",
                  {"--threads", "--json"},
                  "--threads needs a value (see tool run --help)"},
        ErrorCase{"FlagAsValueEvenHelp",
                  {"--file", "--help"},
                  "--file needs a value (see tool run --help)"},
        ErrorCase{"SwitchWithValue", {"--json=yes"}, "--json takes no value (see tool run --help)"},
        ErrorCase{"Unexpected", {"a", "b"}, "unexpected argument \"b\" (see tool run --help)"},
        ErrorCase{"UnexpectedDashes", {"--"}, "unexpected argument \"--\" (see tool run --help)"},
        ErrorCase{"UnknownShort", {"-x"}, "unexpected argument \"-x\" (see tool run --help)"},
        ErrorCase{"PositionalRefused", {"bad"}, "\"bad\" is not a word"},
        ErrorCase{"NotANumber",
                  {"--threads", "many"},
                  "--threads: expected a number from 1 to 256, got \"many\""},
        ErrorCase{"NumberOutOfRange",
                  {"--threads", "0"},
                  "--threads: expected a number from 1 to 256, got \"0\""},
        ErrorCase{"NegativeOutOfRange",
                  {"--offset=-11"},
                  "--offset: expected a number from -10 to 10, got \"-11\""},
        ErrorCase{"SizeTooSmall",
                  {"--buffer", "10"},
                  "--buffer: expected a size of at least 1kb (e.g. 64mb), got \"10\""},
        ErrorCase{"NotASize",
                  {"--buffer", "lots"},
                  "--buffer: expected a size of at least 1kb (e.g. 64mb), got \"lots\""},
        ErrorCase{"ZeroDuration",
                  {"--timeout", "0"},
                  "--timeout: must be more than 0 (e.g. 5s), got \"0\""}),
    [](const testing::TestParamInfo<ErrorCase>& case_info) { return case_info.param.name; });

TEST(ParseFlagsTest, DurationAndFileErrorsNameTheFlag) {
  auto duration = Parse({"--timeout", "soon"});
  ASSERT_FALSE(duration.ok());
  EXPECT_TRUE(duration.error().message().starts_with("--timeout: ")) << duration.error().message();
  EXPECT_EQ(ParseFileFlag("file", "").error().message(), "--file: give a file name");
  EXPECT_EQ(*ParseFileFlag("file", "a"), "a");
}

TEST(FlagHelpTest, OptionsListIsGroupedAlignedAndWrapped) {
  Options unused;
  std::vector<Flag> rows = Rows(unused);
  rows.push_back({.name = "long-explained",
                  .type = FlagType::kText,
                  .value_name = "A-VERY-LONG-VALUE",
                  .help = std::string(60, 'x') + " " + std::string(20, 'y') + "\n  indented line"});
  const std::string main = FormatOptions(rows);
  EXPECT_EQ(main,
            "  --json                   print JSON\n"
            "  --threads N              event-loop threads (default: 1)\n"
            "  --offset N               a signed number\n"
            "  --file FILE              where to write\n"
            "  --seed HOST:PORT         a node to start from; repeatable\n"
            "  -h, --help               this help\n"
            "  --long-explained A-VERY-LONG-VALUE\n"
            "                           " +
                std::string(60, 'x') + "\n" + "                           " + std::string(20, 'y') +
                "\n" + "                             indented line\n");
  EXPECT_EQ(FormatOptions(rows, "Limits"),
            "  --buffer SIZE            bytes held per client\n"
            "  --timeout TIME           how long to wait\n");
}

TEST(FlagHelpTest, FillOptionsReplacesOnlyThePlaceholderLines) {
  Options unused;
  const std::string help = FillOptions(
      "Usage: tool run\n\nLimits:\n{options Limits}\nKeep {options} inline.\n", Rows(unused));
  EXPECT_EQ(help,
            "Usage: tool run\n\nLimits:\n"
            "  --buffer SIZE            bytes held per client\n"
            "  --timeout TIME           how long to wait\n"
            "Keep {options} inline.\n");
}

TEST(FlagCompletionTest, RowsBecomeCompletionFlagsHiddenOnesLeftOut) {
  Options unused;
  const auto flags = CompletionFlags(Rows(unused));
  std::vector<std::pair<std::string, FlagValue>> got;
  for (const auto& flag : flags) got.emplace_back(flag.name, flag.value);
  const std::vector<std::pair<std::string, FlagValue>> expected = {
      {"json", FlagValue::kNone},  {"threads", FlagValue::kAny}, {"offset", FlagValue::kAny},
      {"buffer", FlagValue::kAny}, {"timeout", FlagValue::kAny}, {"file", FlagValue::kFile},
      {"seed", FlagValue::kAny},   {"help", FlagValue::kNone}};
  EXPECT_EQ(got, expected);
}

TEST(FlagCompletionTest, DirectoriesAndDynamicValues) {
  const std::vector<Flag> rows = {{.name = "dir", .type = FlagType::kDirectory},
                                  {.name = "name", .type = FlagType::kDynamic}};
  const auto flags = CompletionFlags(rows);
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0].value, FlagValue::kDirectory);
  EXPECT_EQ(flags[1].value, FlagValue::kDynamic);
}

TEST(FlagTableTest, FindFlagByName) {
  Options unused;
  const FlagTable table = TableFor(unused);
  ASSERT_NE(FindFlag(table, "seed"), nullptr);
  EXPECT_EQ(FindFlag(table, "seed")->value_name, "HOST:PORT");
  EXPECT_EQ(FindFlag(table, "nope"), nullptr);
}

}  // namespace
}  // namespace shardctl::common
