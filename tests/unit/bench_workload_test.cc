#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "launcher/bench/workload.h"

namespace shardctl::launcher {
namespace {

struct PresetCase {
  std::string name;
  double scale;
  uint64_t get_keyspace;
  uint64_t set_keyspace;
  ValueSize value_size;
  int pipeline;
  bool populate;
  bool set_then_get;
  double get_fraction;
};

void PrintTo(const PresetCase& preset, std::ostream* out) {
  *out << preset.name << " x" << preset.scale;
}

class BenchPresetTest : public testing::TestWithParam<PresetCase> {};

TEST_P(BenchPresetTest, ResolvesAndScales) {
  const auto& want = GetParam();
  auto workload = ResolveWorkload(want.name, want.scale, {});
  ASSERT_TRUE(workload.ok()) << workload.error().message();
  EXPECT_EQ(workload->name, want.name);
  EXPECT_EQ(workload->get_keyspace, want.get_keyspace);
  EXPECT_EQ(workload->set_keyspace, want.set_keyspace);
  EXPECT_EQ(workload->value_size, want.value_size);
  EXPECT_EQ(workload->pipeline, want.pipeline);
  EXPECT_EQ(workload->populate, want.populate);
  EXPECT_EQ(workload->set_then_get, want.set_then_get);
  if (!want.set_then_get) {
    EXPECT_DOUBLE_EQ(workload->get_fraction, want.get_fraction);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Presets, BenchPresetTest,
    testing::Values(
        PresetCase{"set-then-get", 1, 3000000, 3000000, {1024, 0, 1024, 1024}, 1, false, true, 0},
        PresetCase{"set-then-get", 0.01, 30000, 30000, {1024, 0, 1024, 1024}, 1, false, true, 0},
        PresetCase{
            "redis-vs-dragonfly", 1, 1000000, 1000000, {256, 0, 256, 256}, 30, false, true, 0},
        PresetCase{"mixed-80-20", 1, 3750000, 3000000, {1024, 340, 4, 2048}, 1, true, false, 0.8},
        PresetCase{"mixed-80-20", 0.001, 3750, 3000, {1024, 340, 4, 2048}, 1, true, false, 0.8},
        PresetCase{"custom", 1, 100000, 100000, {256, 0, 256, 256}, 1, false, false, 0.5},
        PresetCase{"custom", 1e-9, 1, 1, {256, 0, 256, 256}, 1, false, false, 0.5}));

TEST(BenchWorkloadTest, FlagsOverrideThePreset) {
  WorkloadOverrides overrides{
      .get_fraction = 0.2, .value_size = 100, .keyspace = 500, .pipeline = 1, .populate = true};
  auto workload = ResolveWorkload("redis-vs-dragonfly", 1, overrides);
  ASSERT_TRUE(workload.ok());
  EXPECT_DOUBLE_EQ(workload->get_fraction, 0.2);
  EXPECT_FALSE(workload->set_then_get) << "--ratio replaces the SET-then-GET phases";
  EXPECT_EQ(workload->value_size, (ValueSize{100, 0, 100, 100}));
  EXPECT_EQ(workload->get_keyspace, 500u);
  EXPECT_EQ(workload->set_keyspace, 500u);
  EXPECT_EQ(workload->pipeline, 1);
  EXPECT_TRUE(workload->populate);
}

TEST(BenchWorkloadTest, UnknownPresetAndBadScaleAreRefused) {
  auto unknown = ResolveWorkload("mixed-50-50", 1, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message().find("mixed-80-20"), std::string::npos)
      << "lists the known presets: " << unknown.error().message();
  for (double scale : {0.0, -1.0, std::nan(""), 1e6}) {
    EXPECT_FALSE(ResolveWorkload("custom", scale, {}).ok()) << scale;
  }
}

struct RatioCase {
  std::string text;
  double get_fraction;  // < 0: refused
};

class BenchRatioTest : public testing::TestWithParam<RatioCase> {};

TEST_P(BenchRatioTest, Parses) {
  auto ratio = ParseRatio(GetParam().text);
  if (GetParam().get_fraction < 0) {
    ASSERT_FALSE(ratio.ok()) << GetParam().text;
    EXPECT_NE(ratio.error().message().find("GET:SET"), std::string::npos);
  } else {
    ASSERT_TRUE(ratio.ok()) << ratio.error().message();
    EXPECT_DOUBLE_EQ(*ratio, GetParam().get_fraction);
  }
}

INSTANTIATE_TEST_SUITE_P(Ratios, BenchRatioTest,
                         testing::Values(RatioCase{"1:4", 0.2}, RatioCase{"4:1", 0.8},
                                         RatioCase{"0:1", 0}, RatioCase{"1:0", 1},
                                         RatioCase{"80:20", 0.8}, RatioCase{"0:0", -1},
                                         RatioCase{"1", -1}, RatioCase{"a:b", -1},
                                         RatioCase{"1:-1", -1}, RatioCase{":1", -1},
                                         RatioCase{"1.5:1", -1}));

TEST(BenchWorkloadTest, Phases) {
  auto set_then_get = ResolveWorkload("set-then-get", 0.001, {});
  ASSERT_TRUE(set_then_get.ok());
  std::vector<Phase> expected = {
      {.name = "set", .get_fraction = 0, .sequential = true, .keys = 3000},
      {.name = "get", .get_fraction = 1}};
  EXPECT_EQ(PhasesOf(*set_then_get), expected);

  auto mixed = ResolveWorkload("mixed-80-20", 0.001, {});
  ASSERT_TRUE(mixed.ok());
  expected = {{.name = "populate", .sequential = true, .keys = 3000, .measured = false},
              {.name = "mixed", .get_fraction = 0.8}};
  EXPECT_EQ(PhasesOf(*mixed), expected);
}

TEST(BenchWorkloadTest, KeyNamesAreFixedWidth) {
  KeyBuffer buffer;
  EXPECT_EQ(KeyName(0, buffer), "key:000000000000");
  EXPECT_EQ(KeyName(123456, buffer), "key:000000123456");
  EXPECT_EQ(KeyName(999999999999ull, buffer), "key:999999999999");
}

// Sequential phases split the keys among threads: each key exactly once.
TEST(BenchWorkloadTest, SequentialSharesCoverEveryKeyOnce) {
  auto workload = ResolveWorkload("set-then-get", 1, {.keyspace = 1003});
  ASSERT_TRUE(workload.ok());
  Phase phase = PhasesOf(*workload)[0];
  std::multiset<uint64_t> keys;
  for (int thread = 0; thread < 4; ++thread) {
    OpSource source(*workload, phase, thread, 4, 7);
    for (int i = 0; i < 2000; ++i) {
      auto op = source.Next();
      if (!op) break;
      EXPECT_FALSE(op->get);
      EXPECT_EQ(op->value_size, 1024u);
      keys.insert(op->key);
    }
  }
  ASSERT_EQ(keys.size(), 1003u);
  EXPECT_EQ(std::set<uint64_t>(keys.begin(), keys.end()).size(), 1003u) << "a key twice";
  EXPECT_EQ(*keys.rbegin(), 1002u);
}

// The 80/20 mix: the GET share, key ranges and the clipped normal value sizes.
TEST(BenchWorkloadTest, MixedOpsFollowThePreset) {
  auto workload = ResolveWorkload("mixed-80-20", 0.01, {});
  ASSERT_TRUE(workload.ok());
  Phase phase = PhasesOf(*workload)[1];
  OpSource source(*workload, phase, 0, 1, 42);
  int gets = 0;
  double size_sum = 0;
  int sets = 0;
  const int total = 200000;
  for (int i = 0; i < total; ++i) {
    auto op = source.Next();
    ASSERT_TRUE(op.has_value());
    if (op->get) {
      ++gets;
      EXPECT_LT(op->key, 37500u);
    } else {
      ++sets;
      EXPECT_LT(op->key, 30000u);
      EXPECT_GE(op->value_size, 4u);
      EXPECT_LE(op->value_size, 2048u);
      size_sum += op->value_size;
    }
  }
  EXPECT_NEAR(gets / double(total), 0.8, 0.01);
  EXPECT_NEAR(size_sum / sets, 1024, 10);
}

TEST(BenchWorkloadTest, SameSeedSameOps) {
  auto workload = ResolveWorkload("custom", 1, {});
  ASSERT_TRUE(workload.ok());
  Phase phase = PhasesOf(*workload)[0];
  OpSource first(*workload, phase, 0, 1, 9);
  OpSource second(*workload, phase, 0, 1, 9);
  OpSource other(*workload, phase, 0, 1, 10);
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    auto a = first.Next();
    auto b = second.Next();
    auto c = other.Next();
    EXPECT_EQ(a->key, b->key);
    EXPECT_EQ(a->get, b->get);
    differ += a->key != c->key;
  }
  EXPECT_GT(differ, 90);
}

TEST(BenchWorkloadTest, SplitMixBelowStaysInRangeAndSpreads) {
  SplitMix64 random(1);
  std::vector<int> counts(10);
  for (int i = 0; i < 100000; ++i) {
    uint64_t value = random.Below(10);
    ASSERT_LT(value, 10u);
    ++counts[value];
  }
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
}

}  // namespace
}  // namespace shardctl::launcher
