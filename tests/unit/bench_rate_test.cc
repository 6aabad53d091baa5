#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "launcher/bench/rate.h"

namespace shardctl::launcher {
namespace {

using namespace std::chrono_literals;

struct RateCase {
  std::string text;
  double rate;  // < 0: an error mentioning `error`
  std::string error;
};

class BenchParseRateTest : public testing::TestWithParam<RateCase> {};

TEST_P(BenchParseRateTest, Parses) {
  const auto& param = GetParam();
  auto rate = ParseRate(param.text);
  if (param.rate < 0) {
    ASSERT_FALSE(rate.ok()) << param.text;
    EXPECT_NE(rate.error().message().find(param.error), std::string::npos)
        << rate.error().message();
    EXPECT_NE(rate.error().message().find("e.g."), std::string::npos) << "no example given";
  } else {
    ASSERT_TRUE(rate.ok()) << rate.error().message();
    EXPECT_DOUBLE_EQ(*rate, param.rate);
  }
}

INSTANTIATE_TEST_SUITE_P(Rates, BenchParseRateTest,
                         testing::Values(RateCase{"50000", 50000, ""}, RateCase{"50k", 50000, ""},
                                         RateCase{"50K", 50000, ""}, RateCase{"1.5m", 1500000, ""},
                                         RateCase{"0.5", 0.5, ""}, RateCase{"", -1, "empty"},
                                         RateCase{"fast", -1, "not a number"},
                                         RateCase{"10kk", -1, "not a number"},
                                         RateCase{"0", -1, "above 0"},
                                         RateCase{"-5", -1, "out of range"},
                                         RateCase{"5000m", -1, "out of range"}));

TEST(BenchRateProfileTest, ParsesSteps) {
  auto steps = ParseRateProfile("50k:10s,150k:5s,0:500ms,50k:10s");
  ASSERT_TRUE(steps.ok()) << steps.error().message();
  std::vector<RateStep> expected = {{50000, 10s}, {150000, 5s}, {0, 500ms}, {50000, 10s}};
  EXPECT_EQ(*steps, expected);
  EXPECT_EQ(ProfileDuration(*steps), 25500ms);
  EXPECT_EQ(FormatRateProfile(*steps), "50k:10s,150k:5s,0:500ms,50k:10s");
}

struct BadProfile {
  std::string text;
  std::string mention;
};

class BenchBadProfileTest : public testing::TestWithParam<BadProfile> {};

TEST_P(BenchBadProfileTest, IsRefusedWithAReason) {
  auto steps = ParseRateProfile(GetParam().text);
  ASSERT_FALSE(steps.ok()) << GetParam().text;
  EXPECT_NE(steps.error().message().find(GetParam().mention), std::string::npos)
      << steps.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, BenchBadProfileTest,
    testing::Values(BadProfile{"50k", "RATE:DURATION"}, BadProfile{"", "RATE:DURATION"},
                    BadProfile{"50k:10s,", "RATE:DURATION"}, BadProfile{"x:10s", "bad rate"},
                    BadProfile{"50k:soon", "soon"}, BadProfile{"50k:0s", "lasts no time"},
                    BadProfile{"0:1s,0:2s", "never sends"}));

TEST(BenchRateScheduleTest, ConstantRate) {
  RateSchedule schedule({{1000, 0ms}});
  EXPECT_EQ(schedule.DueBy(0ns), 0u);
  EXPECT_EQ(schedule.DueBy(999us), 0u);
  EXPECT_EQ(schedule.DueBy(1ms), 1u);
  EXPECT_EQ(schedule.DueBy(1s), 1000u);
  EXPECT_EQ(schedule.DueBy(10s), 10000u);  // the last rate holds after the profile
  EXPECT_EQ(schedule.SendTime(0), 1ms);
  EXPECT_EQ(schedule.SendTime(999), 1s);
  EXPECT_DOUBLE_EQ(schedule.RateAt(5s), 1000);
}

TEST(BenchRateScheduleTest, ShareSplitsTheRateAmongThreads) {
  RateSchedule schedule({{1000, 1s}}, 0.25);
  EXPECT_EQ(schedule.DueBy(1s), 250u);
  EXPECT_EQ(schedule.SendTime(0), 4ms);
}

// A spike: 1k/s for 1 s, 10k/s for 0.5 s, a 1 s pause, then 1k/s again.
TEST(BenchRateScheduleTest, StepsAndPauses) {
  RateSchedule schedule({{1000, 1s}, {10000, 500ms}, {0, 1s}, {1000, 1s}});
  struct Due {
    std::chrono::nanoseconds at;
    uint64_t count;
  };
  for (auto [at, count] : std::vector<Due>{{500ms, 500},
                                           {1s, 1000},
                                           {1100ms, 2000},
                                           {1500ms, 6000},
                                           {2s, 6000},
                                           {2500ms, 6000},
                                           {3s, 6500},
                                           {3500ms, 7000},
                                           {10s, 13500}}) {
    EXPECT_EQ(schedule.DueBy(at), count) << "at " << at.count() << " ns";
  }
  EXPECT_EQ(schedule.SendTime(999), 1s);
  EXPECT_EQ(schedule.SendTime(1000), 1000100us);
  EXPECT_EQ(schedule.SendTime(5999), 1500ms);
  EXPECT_EQ(schedule.SendTime(6000), 2501ms);  // after the pause
  EXPECT_DOUBLE_EQ(schedule.RateAt(2s), 0);
}

// SendTime and DueBy agree: request n is due from its send time on (to the microsecond).
TEST(BenchRateScheduleTest, SendTimeAndDueByAgree) {
  RateSchedule schedule({{3000, 700ms}, {77, 300ms}, {12345, 2s}});
  for (uint64_t n = 0; n < 20000; n += 37) {
    auto at = schedule.SendTime(n);
    EXPECT_GE(schedule.DueBy(at + 1us), n + 1) << n;
    EXPECT_LE(schedule.DueBy(at - 1us), n) << n;
  }
}

TEST(BenchRateScheduleTest, EndingInAPauseNeverSendsAgain) {
  RateSchedule schedule({{1000, 1s}, {0, 1s}});
  EXPECT_EQ(schedule.SendTime(999), 1s);
  EXPECT_EQ(schedule.SendTime(1000), std::chrono::nanoseconds::max());
  EXPECT_EQ(schedule.DueBy(100s), 1000u);
}

}  // namespace
}  // namespace shardctl::launcher
