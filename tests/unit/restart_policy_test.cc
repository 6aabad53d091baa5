#include "launcher/supervisor/restart_policy.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/duration.h"

namespace shardctl::launcher {
namespace {

using std::chrono::milliseconds;

TEST(RestartPolicy, FirstExitAfterLongRunRestartsAtOnce) {
  RestartPolicy policy;
  EXPECT_EQ(policy.OnExit(milliseconds(3'600'000)), milliseconds(0));
  EXPECT_FALSE(policy.InCrashLoop());
}

TEST(RestartPolicy, QuickExitsBackOffExponentiallyUpToTheCap) {
  RestartPolicy policy;
  std::vector<long long> delays;
  for (int i = 0; i < 12; ++i) delays.push_back(policy.OnExit(milliseconds(50)).count());
  std::vector<long long> expected = {0,    250,   500,   1000,  2000,  4000,
                                     8000, 16000, 30000, 30000, 30000, 30000};
  EXPECT_EQ(delays, expected);
}

TEST(RestartPolicy, ThirdQuickExitIsACrashLoop) {
  RestartPolicy policy;
  policy.OnExit(milliseconds(10));
  EXPECT_FALSE(policy.InCrashLoop());
  policy.OnExit(milliseconds(10));
  EXPECT_FALSE(policy.InCrashLoop());
  policy.OnExit(milliseconds(10));
  EXPECT_TRUE(policy.InCrashLoop());
}

TEST(RestartPolicy, AStableRunEndsTheCrashLoop) {
  RestartPolicy policy;
  for (int i = 0; i < 5; ++i) policy.OnExit(milliseconds(10));
  ASSERT_TRUE(policy.InCrashLoop());
  EXPECT_EQ(policy.OnExit(RestartPolicy::kStableAfter), milliseconds(0));
  EXPECT_FALSE(policy.InCrashLoop());
}

TEST(RestartPolicy, ResetForgetsHistory) {
  RestartPolicy policy;
  for (int i = 0; i < 5; ++i) policy.OnExit(milliseconds(10));
  policy.Reset();
  EXPECT_FALSE(policy.InCrashLoop());
  EXPECT_EQ(policy.OnExit(milliseconds(10)), milliseconds(0));
}

TEST(RestartPolicy, ThousandsOfExitsNeverOverflow) {
  RestartPolicy policy;
  for (int i = 0; i < 10'000; ++i) {
    auto delay = policy.OnExit(milliseconds(1));
    ASSERT_LE(delay, RestartPolicy::kMaxDelay);
    ASSERT_GE(delay.count(), 0);
  }
}

struct DurationCase {
  const char* text;
  long long ms;
};

TEST(Duration, ParsesUnits) {
  for (auto [text, ms] : std::vector<DurationCase>{{"500", 500},
                                                   {"500ms", 500},
                                                   {"3s", 3000},
                                                   {"1.5s", 1500},
                                                   {"2m", 120'000},
                                                   {"1h", 3'600'000},
                                                   {"0", 0}}) {
    auto parsed = common::ParseDuration(text);
    ASSERT_TRUE(parsed.ok()) << text;
    EXPECT_EQ(parsed->count(), ms) << text;
  }
}

TEST(Duration, RejectsGarbageWithAnExample) {
  for (const char* text : {"", "s", "3x", "-1s", "1..5s", "3 s", "1.", "99999999999999999999s"}) {
    auto parsed = common::ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message().find("500ms"), std::string::npos) << text;
  }
}

TEST(Duration, FormatsAndRoundTrips) {
  EXPECT_EQ(common::FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(common::FormatDuration(milliseconds(3000)), "3s");
  EXPECT_EQ(common::FormatDuration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(common::FormatDuration(milliseconds(120'000)), "2m");
  for (long long ms : {0LL, 1LL, 999LL, 1000LL, 1234LL, 60'000LL, 90'500LL}) {
    auto back = common::ParseDuration(common::FormatDuration(milliseconds(ms)));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->count(), ms);
  }
}

TEST(DiskFullThresholdTest, LessThanFourMebibytesFreeIsFull) {
  EXPECT_TRUE(IsDiskFull(0));
  EXPECT_TRUE(IsDiskFull(4096));
  EXPECT_TRUE(IsDiskFull((uint64_t{4} << 20) - 1));
  EXPECT_FALSE(IsDiskFull(uint64_t{4} << 20));
  EXPECT_FALSE(IsDiskFull(uint64_t{1} << 40));
}

}  // namespace
}  // namespace shardctl::launcher
