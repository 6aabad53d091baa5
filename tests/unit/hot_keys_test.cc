// HotKeys (Space-Saving): exact while the keys fit, the heavy hitters always in the table with
// counts that are never low and at most `error` high, and several workers' tables merged.
#include "proxy/services/hot_keys.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace shardctl::proxy {
namespace {

TEST(HotKeysTest, CountsExactlyWhileEveryKeyFits) {
  HotKeys keys(4);
  for (const char* key : {"a", "b", "a", "c", "a", "b"}) keys.Offer(key);
  EXPECT_EQ(keys.total(), 6u);
  EXPECT_EQ(keys.Snapshot(), (std::vector<HotKey>{{"a", 3, 0}, {"b", 2, 0}, {"c", 1, 0}}));
}

TEST(HotKeysTest, ANewKeyTakesTheSmallestCounterOverWithItsCountAsError) {
  HotKeys keys(2);
  for (const char* key : {"a", "a", "a", "b", "c"}) keys.Offer(key);
  // "c" replaced "b" (count 1): it counts 2, of which 1 may be b's.
  EXPECT_EQ(keys.Snapshot(), (std::vector<HotKey>{{"a", 3, 0}, {"c", 2, 1}}));
  HotKeys one(1);
  for (const char* key : {"x", "y", "y"}) one.Offer(key);
  EXPECT_EQ(one.Snapshot(), (std::vector<HotKey>{{"y", 3, 1}}));
}

// A stream like the benchmark's hotkeys:8:40 and a zipf one, 200,000 requests each, into 64
// counters: the guarantees hold for every key in the table, and every key with more than
// total/64 requests is in it.
TEST(HotKeysTest, HeavyHittersAreAlwaysThereAndNoCountIsLow) {
  std::mt19937_64 random(11);
  std::uniform_int_distribution<int> cold(0, 99999);
  std::uniform_real_distribution<double> fraction(0, 1);
  for (bool zipf : {false, true}) {
    HotKeys keys(64);
    std::map<std::string, uint64_t> truth;
    for (int i = 0; i < 200000; ++i) {
      std::string key;
      if (zipf) {
        key = "z:" + std::to_string(static_cast<int>(std::pow(100000, fraction(random))));
      } else if (fraction(random) < 0.4) {
        key = "hot:" + std::to_string(i % 8);
      } else {
        key = "cold:" + std::to_string(cold(random));
      }
      ++truth[key];
      keys.Offer(key);
    }
    const auto table = keys.Snapshot();
    ASSERT_EQ(table.size(), 64u);
    for (const auto& entry : table) {
      EXPECT_GE(entry.count, truth[entry.key]) << entry.key;
      EXPECT_LE(entry.count - entry.error, truth[entry.key]) << entry.key;
    }
    for (const auto& [key, count] : truth) {
      if (count <= keys.total() / 64) continue;
      EXPECT_TRUE(std::any_of(table.begin(), table.end(),
                              [&](const HotKey& entry) { return entry.key == key; }))
          << key << " (" << count << " requests) is missing";
    }
    if (!zipf) {
      for (int hot = 0; hot < 8; ++hot) EXPECT_EQ(table[hot].key.rfind("hot:", 0), 0u);
    }
  }
}

TEST(HotKeysTest, WorkersTablesMergeIntoOne) {
  const std::vector<HotKey> first = {{"a", 10, 0}, {"b", 4, 1}};
  const std::vector<HotKey> second = {{"a", 5, 2}, {"c", 3, 0}};
  const auto merged = HotKeys::Merge({first, second}, 10);
  // "b" may have had up to 3 (the second table's smallest) on the second worker, "c" up to 4.
  EXPECT_EQ(merged, (std::vector<HotKey>{{"a", 15, 2}, {"b", 4, 4}, {"c", 3, 4}}));
  EXPECT_EQ(HotKeys::Merge({first, second}, 1), (std::vector<HotKey>{{"a", 15, 2}}));
  EXPECT_TRUE(HotKeys::Merge({}, 5).empty());
}

}  // namespace
}  // namespace shardctl::proxy
