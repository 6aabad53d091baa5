#include "common/cpu_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::common {
namespace {

struct ParseCase {
  std::string_view text;
  std::vector<int> cpus;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseCpuListTest : public testing::TestWithParam<ParseCase> {};

TEST_P(ParseCpuListTest, Parses) {
  const Result<std::vector<int>> cpus = ParseCpuList(GetParam().text);
  ASSERT_TRUE(cpus.ok()) << cpus.error().message();
  EXPECT_EQ(*cpus, GetParam().cpus);
}

INSTANTIATE_TEST_SUITE_P(Valid, ParseCpuListTest,
                         testing::Values(ParseCase{"", {}}, ParseCase{"\n", {}},
                                         ParseCase{"0", {0}}, ParseCase{"0-3", {0, 1, 2, 3}},
                                         ParseCase{"0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}},
                                         ParseCase{"0-3,8,10-11\n", {0, 1, 2, 3, 8, 10, 11}},
                                         ParseCase{" 0-1 , 4 \n", {0, 1, 4}},
                                         ParseCase{"5,1,3", {1, 3, 5}},
                                         ParseCase{"0-2,1-3,2", {0, 1, 2, 3}},
                                         ParseCase{"7-7", {7}}, ParseCase{"8191", {8191}}));

struct ErrorCase {
  std::string_view text;
  std::string_view message_part;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseCpuListErrorTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ParseCpuListErrorTest, Rejects) {
  const Result<std::vector<int>> cpus = ParseCpuList(GetParam().text);
  ASSERT_FALSE(cpus.ok()) << "parsed \"" << GetParam().text << "\"";
  EXPECT_NE(cpus.error().message().find(GetParam().message_part), std::string::npos)
      << cpus.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Invalid, ParseCpuListErrorTest,
    testing::Values(ErrorCase{"3-1",
                              "bad CPU list \"3-1\": range 3-1 runs backwards (write it as 1-3)"},
                    ErrorCase{"a", "\"a\" is not a CPU id"}, ErrorCase{"1,,2", "empty entry"},
                    ErrorCase{"1,2,", "empty entry"}, ErrorCase{",1", "empty entry"},
                    ErrorCase{"-1", "\"-1\" is not a CPU id"},
                    ErrorCase{"1-", "\"1-\" is not a CPU id"}, ErrorCase{"+1", "\"+1\" is not"},
                    ErrorCase{"1-2-3", "\"1-2-3\" is not"}, ErrorCase{"0 - 3", "\"0 - 3\" is not"},
                    ErrorCase{"8192", "\"8192\" is not"},
                    ErrorCase{"0-4000000000", "\"0-4000000000\" is not"},
                    ErrorCase{"99999999999999999999", "is not a CPU id"}));

struct FormatCase {
  std::vector<int> cpus;
  std::string_view text;
};

void PrintTo(const FormatCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class FormatCpuListTest : public testing::TestWithParam<FormatCase> {};

TEST_P(FormatCpuListTest, FormatsAndParsesBack) {
  EXPECT_EQ(FormatCpuList(GetParam().cpus), GetParam().text);
  const Result<std::vector<int>> parsed = ParseCpuList(GetParam().text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  std::vector<int> expected = GetParam().cpus;
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  EXPECT_EQ(*parsed, expected);
}

INSTANTIATE_TEST_SUITE_P(RoundTrip, FormatCpuListTest,
                         testing::Values(FormatCase{{}, ""}, FormatCase{{5}, "5"},
                                         FormatCase{{0, 1}, "0-1"},
                                         FormatCase{{0, 1, 2, 3, 8}, "0-3,8"},
                                         FormatCase{{11, 8, 3, 2, 1, 0, 10}, "0-3,8,10-11"},
                                         FormatCase{{2, 2, 1, 1}, "1-2"},
                                         FormatCase{{0, 2, 4, 6}, "0,2,4,6"}));

TEST(CpuListTest, TextRoundTripsThroughParseAndFormat) {
  for (std::string_view text : {"0-3,8,10-11", "0", "1,3,5-7", "0-63", "8191"}) {
    const Result<std::vector<int>> cpus = ParseCpuList(text);
    ASSERT_TRUE(cpus.ok()) << cpus.error().message();
    EXPECT_EQ(FormatCpuList(*cpus), text);
  }
}

}  // namespace
}  // namespace shardctl::common
