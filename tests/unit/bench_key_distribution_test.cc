// --key-distribution: parsing, the rank -> key permutation, and the frequencies each distribution
// produces over a million draws (against the exact zipf weights, not against itself).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "launcher/bench/key_distribution.h"

namespace shardctl::launcher {
namespace {

using Kind = KeyDistribution::Kind;

TEST(KeyDistributionTest, ParsesTheThreeFormsAndPrintsThemBack) {
  struct Case {
    const char* text;
    KeyDistribution expected;
  };
  const std::vector<Case> cases = {
      {"uniform", {}},
      {"zipf:0.99", {.kind = Kind::kZipf, .exponent = 0.99}},
      {"zipf:1", {.kind = Kind::kZipf, .exponent = 1}},
      {"hotkeys:8:40", {.kind = Kind::kHotKeys, .hot_keys = 8, .hot_percent = 40}},
      {"hotkeys:1:100", {.kind = Kind::kHotKeys, .hot_keys = 1, .hot_percent = 100}},
      {"hotkeys:100:2.5", {.kind = Kind::kHotKeys, .hot_keys = 100, .hot_percent = 2.5}},
  };
  for (const auto& c : cases) {
    auto parsed = ParseKeyDistribution(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.error().message();
    EXPECT_EQ(*parsed, c.expected) << c.text;
    EXPECT_EQ(parsed->ToString(), c.text);
  }
}

TEST(KeyDistributionTest, RefusesWhatIsNotOneOfThemNamingTheForms) {
  for (const char* text :
       {"", "zipf", "zipf:", "zipf:0", "zipf:-1", "zipf:x", "zipf:11", "hotkeys", "hotkeys:8",
        "hotkeys:0:40", "hotkeys:8:0", "hotkeys:8:101", "hotkeys:x:40", "normal", "Uniform"}) {
    auto parsed = ParseKeyDistribution(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message().find("hotkeys:N:P"), std::string::npos)
        << parsed.error().message();
  }
}

TEST(KeyDistributionTest, RanksMapToEveryKeyOnceAndFollowTheSeed) {
  const KeyDistribution zipf{.kind = Kind::kZipf, .exponent = 0.99};
  for (uint64_t keyspace : {1ull, 2ull, 7ull, 1000ull, 1024ull, 100000ull}) {
    const KeyPicker picker(zipf, keyspace, 1);
    std::set<uint64_t> keys;
    for (uint64_t rank = 0; rank < keyspace; ++rank) keys.insert(picker.KeyOfRank(rank));
    EXPECT_EQ(keys.size(), keyspace);
    EXPECT_LT(*keys.rbegin(), keyspace);
  }
  const KeyPicker one(zipf, 100000, 1);
  const KeyPicker same(zipf, 100000, 1);
  const KeyPicker other(zipf, 100000, 2);
  EXPECT_EQ(one.KeyOfRank(0), same.KeyOfRank(0));
  EXPECT_NE(std::vector<uint64_t>({one.KeyOfRank(0), one.KeyOfRank(1), one.KeyOfRank(2)}),
            std::vector<uint64_t>({other.KeyOfRank(0), other.KeyOfRank(1), other.KeyOfRank(2)}));
  // The hottest keys are not simply the first key numbers.
  EXPECT_FALSE(one.KeyOfRank(0) == 0 && one.KeyOfRank(1) == 1);
}

// Draws `draws` keys and counts them by key number.
std::vector<uint64_t> Histogram(const KeyPicker& picker, uint64_t keyspace, int draws) {
  std::vector<uint64_t> counts(keyspace, 0);
  SplitMix64 random(42);
  for (int i = 0; i < draws; ++i) ++counts[picker.Pick(random)];
  return counts;
}

TEST(KeyDistributionTest, ZipfFrequenciesMatchTheExactWeights) {
  constexpr uint64_t kKeys = 1000;
  constexpr int kDraws = 1000000;
  for (double s : {0.5, 0.99, 1.0, 1.5}) {
    const KeyPicker picker({.kind = Kind::kZipf, .exponent = s}, kKeys, 3);
    const auto counts = Histogram(picker, kKeys, kDraws);
    double total_weight = 0;
    for (uint64_t r = 1; r <= kKeys; ++r) total_weight += std::pow(static_cast<double>(r), -s);
    for (uint64_t rank : {0, 1, 2, 9, 99, 999}) {
      const double expected = kDraws * std::pow(static_cast<double>(rank + 1), -s) / total_weight;
      const double seen = static_cast<double>(counts[picker.KeyOfRank(rank)]);
      // Five standard deviations of a binomial count, plus 1% for the sampler's own rounding.
      EXPECT_NEAR(seen, expected, 5 * std::sqrt(expected) + 0.01 * expected)
          << "s " << s << " rank " << rank;
    }
  }
}

TEST(KeyDistributionTest, HotKeysTakeTheirShareAndTheRestIsUniform) {
  constexpr uint64_t kKeys = 100000;
  constexpr int kDraws = 1000000;
  const KeyPicker picker({.kind = Kind::kHotKeys, .hot_keys = 8, .hot_percent = 40}, kKeys, 5);
  const auto counts = Histogram(picker, kKeys, kDraws);
  uint64_t hot = 0;
  for (uint64_t rank = 0; rank < 8; ++rank) {
    const uint64_t count = counts[picker.KeyOfRank(rank)];
    EXPECT_NEAR(static_cast<double>(count), kDraws * 0.05, kDraws * 0.003) << rank;
    hot += count;
  }
  EXPECT_NEAR(static_cast<double>(hot) / kDraws, 0.40, 0.005);
  uint64_t busiest_cold = 0;
  for (uint64_t key = 0; key < kKeys; ++key) {
    bool is_hot = false;
    for (uint64_t rank = 0; rank < 8; ++rank) is_hot |= picker.KeyOfRank(rank) == key;
    if (!is_hot) busiest_cold = std::max(busiest_cold, counts[key]);
  }
  EXPECT_LT(busiest_cold, 30u);  // 6 expected per cold key
}

TEST(KeyDistributionTest, UniformSpreadsEvenlyAndASeedReplaysTheDraws) {
  constexpr uint64_t kKeys = 100;
  const KeyPicker picker({}, kKeys, 1);
  const auto counts = Histogram(picker, kKeys, 1000000);
  for (uint64_t count : counts) EXPECT_NEAR(static_cast<double>(count), 10000, 500);
  const KeyPicker zipf({.kind = Kind::kZipf, .exponent = 0.99}, 1000000, 9);
  SplitMix64 a(7);
  SplitMix64 b(7);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(zipf.Pick(a), zipf.Pick(b));
}

}  // namespace
}  // namespace shardctl::launcher
