#include "common/size.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>

namespace shardctl::common {
namespace {

constexpr uint64_t kKib = uint64_t{1} << 10;
constexpr uint64_t kMib = uint64_t{1} << 20;
constexpr uint64_t kGib = uint64_t{1} << 30;
constexpr uint64_t kTib = uint64_t{1} << 40;

struct ParseCase {
  std::string_view text;
  uint64_t bytes;
};

void PrintTo(const ParseCase& c, std::ostream* os) { *os << '"' << c.text << '"'; }

class ParseSizeTest : public testing::TestWithParam<ParseCase> {};

TEST_P(ParseSizeTest, Parses) {
  const Result<uint64_t> bytes = ParseSize(GetParam().text);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  EXPECT_EQ(*bytes, GetParam().bytes) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Valid, ParseSizeTest,
    testing::Values(ParseCase{"0", 0}, ParseCase{"100", 100}, ParseCase{"100b", 100},
                    ParseCase{"1k", 1000}, ParseCase{"1kb", kKib}, ParseCase{"1m", 1000000},
                    ParseCase{"1mb", kMib}, ParseCase{"1g", 1000000000}, ParseCase{"1gb", kGib},
                    ParseCase{"1t", 1000000000000}, ParseCase{"1tb", kTib},
                    ParseCase{"1.5gb", kGib + kGib / 2}, ParseCase{"25GB", 25 * kGib},
                    ParseCase{"512Mb", 512 * kMib}, ParseCase{"2K", 2000},
                    ParseCase{"4KB", 4 * kKib}, ParseCase{"0.5kb", 512},
                    ParseCase{"0.1kb", 102},  // floor(102.4)
                    ParseCase{"1.25m", 1250000}, ParseCase{"007kb", 7 * kKib},
                    ParseCase{"0.333333333333333333333333gb", kGib / 3},
                    ParseCase{"18446744073709551615", std::numeric_limits<uint64_t>::max()},
                    ParseCase{"16777215tb", 16777215 * kTib}));

class ParseSizeErrorTest : public testing::TestWithParam<std::string_view> {};

TEST_P(ParseSizeErrorTest, RejectsWithExample) {
  const Result<uint64_t> bytes = ParseSize(GetParam());
  ASSERT_FALSE(bytes.ok()) << "parsed \"" << GetParam() << "\" as " << *bytes;
  const std::string& message = bytes.error().message();
  EXPECT_NE(message.find("bad size \"" + std::string(GetParam()) + "\""), std::string::npos)
      << message;
  EXPECT_NE(message.find("e.g. "), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Invalid, ParseSizeErrorTest,
                         testing::Values("abc", "", "-1gb", "1zb", "gb", "99999999999999999999tb",
                                         "99999999999999999999", "18446744073709551616",
                                         "16777216tb", "1.5", "1.5b", "1.gb", ".5gb", " 1gb",
                                         "1 gb", "1gb ", "1e3", "1gbb", "1,5gb"));

TEST(ParseSizeTest, ErrorsExplainTheProblem) {
  EXPECT_NE(ParseSize("1zb").error().message().find("unknown unit \"zb\""), std::string::npos);
  EXPECT_NE(ParseSize("").error().message().find("empty"), std::string::npos);
  EXPECT_NE(ParseSize("99999999999999999999tb").error().message().find("larger than"),
            std::string::npos);
}

struct FormatCase {
  uint64_t bytes;
  std::string_view text;
};

void PrintTo(const FormatCase& c, std::ostream* os) { *os << c.bytes; }

class FormatSizeTest : public testing::TestWithParam<FormatCase> {};

TEST_P(FormatSizeTest, Formats) { EXPECT_EQ(FormatSize(GetParam().bytes), GetParam().text); }

INSTANTIATE_TEST_SUITE_P(
    Examples, FormatSizeTest,
    testing::Values(FormatCase{0, "0b"}, FormatCase{1000, "1000b"}, FormatCase{1023, "1023b"},
                    FormatCase{kKib, "1kb"}, FormatCase{1536, "1.5kb"}, FormatCase{kMib, "1mb"},
                    FormatCase{kGib, "1gb"}, FormatCase{1610612736, "1.5gb"},
                    FormatCase{25 * kGib, "25gb"}, FormatCase{kTib, "1tb"},
                    FormatCase{kMib - 1, "1024kb"},
                    FormatCase{std::numeric_limits<uint64_t>::max(), "16777215.9tb"}));

TEST(FormatSizeTest, ParsesBackWithinFivePercent) {
  const uint64_t samples[] = {1,
                              999,
                              1025,
                              1075,
                              1100,
                              3 * kMib + 12345,
                              7 * kGib - 1,
                              123456789012345,
                              std::numeric_limits<uint64_t>::max() - kTib,
                              std::numeric_limits<uint64_t>::max()};
  for (uint64_t bytes : samples) {
    const std::string text = FormatSize(bytes);
    const Result<uint64_t> parsed = ParseSize(text);
    ASSERT_TRUE(parsed.ok()) << text << ": " << parsed.error().message();
    const double ratio = static_cast<double>(*parsed) / static_cast<double>(bytes);
    EXPECT_NEAR(ratio, 1.0, 0.05) << bytes << " -> " << text;
  }
}

}  // namespace
}  // namespace shardctl::common
