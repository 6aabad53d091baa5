#include "common/slots.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::common {
namespace {

// The definition, a bit at a time: what the table-driven Crc16 must agree with.
uint16_t BitwiseCrc16(std::string_view data) {
  uint16_t crc = 0;
  for (char c : data) {
    crc = static_cast<uint16_t>(crc ^ (static_cast<uint8_t>(c) << 8));
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

TEST(Crc16Test, TwoBytesAStepAgreesWithTheBitwiseDefinitionAtEveryLength) {
  std::string data;
  for (int i = 0; i < 70; ++i) {
    EXPECT_EQ(Crc16(data), BitwiseCrc16(data)) << "length " << data.size();
    data += static_cast<char>((i * 167 + 13) & 0xff);  // every byte value's high bit shows up
  }
}

TEST(Crc16Test, MatchesXmodemCheckValue) {
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

// Expected slots come from `redis-cli CLUSTER KEYSLOT <key>` against redis-server 7.0.15.
struct KeySlotCase {
  std::string_view key;
  int slot;
  std::string_view why;
};

void PrintTo(const KeySlotCase& key_slot, std::ostream* os) { *os << '"' << key_slot.key << '"'; }

class KeySlotTest : public testing::TestWithParam<KeySlotCase> {};

TEST_P(KeySlotTest, MatchesRedis) {
  EXPECT_EQ(KeySlot(GetParam().key), GetParam().slot) << GetParam().why;
}

INSTANTIATE_TEST_SUITE_P(
    Keys, KeySlotTest,
    testing::Values(KeySlotCase{"foo", 12182, "plain key"}, KeySlotCase{"bar", 5061, "plain key"},
                    KeySlotCase{"", 0, "empty key"},
                    KeySlotCase{"123456789", 12739, "0x31C3 mod 16384"},
                    KeySlotCase{"{user1000}.following", 3443, "tag user1000"},
                    KeySlotCase{"{user1000}.followers", 3443, "tag user1000"},
                    KeySlotCase{"user1000", 3443, "the tag alone"},
                    KeySlotCase{"foo{}{bar}", 8363, "empty tag: whole key hashed"},
                    KeySlotCase{"foo{{bar}}zap", 4015, "tag is \"{bar\""},
                    KeySlotCase{"foo{bar}{zap}", 5061, "first tag \"bar\" wins"},
                    KeySlotCase{"key:{tag}:x", 8338, "tag in the middle"},
                    KeySlotCase{"{}", 15257, "empty tag: whole key hashed"},
                    KeySlotCase{"{", 4092, "no closing brace"},
                    KeySlotCase{"}", 12090, "no opening brace"},
                    KeySlotCase{"}{a}", 15495, "'}' before '{' is ignored"},
                    KeySlotCase{"{a", 10276, "unclosed tag: whole key hashed"}));

TEST(KeySlotTest, TagRulesAgreeWithHashingTheTag) {
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), Crc16("foo{}{bar}") % kSlotCount);
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), Crc16("{bar") % kSlotCount);
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
}

// Ground truth for 3, 7, 40 and 78 primaries: the "Master[i] -> Slots a - b" lines printed by
// `redis-cli --cluster create 127.0.0.1:P1 ... --cluster-yes` (redis-cli 7.0.15) against that
// many throwaway `redis-server --cluster-enabled yes` processes on 127.0.0.1. 78 is the smallest
// count where double arithmetic would differ (Master[67] would end at 14282, not 14283).
// redis-cli refuses fewer than 3 primaries, so 1 and 2 follow from the same arithmetic.
struct SplitCase {
  int primaries;
  std::vector<SlotRange> ranges;
};

// "0-5460 5461-10922 ...", so a mismatch shows which boundary moved.
std::string Describe(const std::vector<SlotRange>& ranges) {
  std::string out;
  for (const SlotRange& range : ranges) {
    out += std::to_string(range.first) + "-" + std::to_string(range.last) + " ";
  }
  return out;
}

void PrintTo(const SplitCase& split, std::ostream* os) { *os << split.primaries << " primaries"; }

class SplitSlotsEvenlyTest : public testing::TestWithParam<SplitCase> {};

TEST_P(SplitSlotsEvenlyTest, MatchesRedisCli) {
  EXPECT_EQ(Describe(SplitSlotsEvenly(GetParam().primaries)), Describe(GetParam().ranges));
}

INSTANTIATE_TEST_SUITE_P(
    RedisCli, SplitSlotsEvenlyTest,
    testing::Values(
        SplitCase{1, {{0, 16383}}}, SplitCase{2, {{0, 8191}, {8192, 16383}}},
        SplitCase{3, {{0, 5460}, {5461, 10922}, {10923, 16383}}},
        SplitCase{7,
                  {
                      {0, 2340},
                      {2341, 4680},
                      {4681, 7021},
                      {7022, 9361},
                      {9362, 11702},
                      {11703, 14042},
                      {14043, 16383},
                  }},
        SplitCase{
            40,
            {
                {0, 409},       {410, 818},     {819, 1228},    {1229, 1637},   {1638, 2047},
                {2048, 2457},   {2458, 2866},   {2867, 3276},   {3277, 3685},   {3686, 4095},
                {4096, 4505},   {4506, 4914},   {4915, 5324},   {5325, 5733},   {5734, 6143},
                {6144, 6553},   {6554, 6962},   {6963, 7372},   {7373, 7781},   {7782, 8191},
                {8192, 8601},   {8602, 9010},   {9011, 9420},   {9421, 9829},   {9830, 10239},
                {10240, 10649}, {10650, 11058}, {11059, 11468}, {11469, 11877}, {11878, 12287},
                {12288, 12697}, {12698, 13106}, {13107, 13516}, {13517, 13925}, {13926, 14335},
                {14336, 14745}, {14746, 15154}, {15155, 15564}, {15565, 15973}, {15974, 16383},
            }},
        SplitCase{
            78,
            {
                {0, 209},       {210, 419},     {420, 629},     {630, 839},     {840, 1049},
                {1050, 1259},   {1260, 1469},   {1470, 1679},   {1680, 1889},   {1890, 2100},
                {2101, 2310},   {2311, 2520},   {2521, 2730},   {2731, 2940},   {2941, 3150},
                {3151, 3360},   {3361, 3570},   {3571, 3780},   {3781, 3990},   {3991, 4200},
                {4201, 4410},   {4411, 4620},   {4621, 4830},   {4831, 5040},   {5041, 5250},
                {5251, 5460},   {5461, 5670},   {5671, 5880},   {5881, 6090},   {6091, 6301},
                {6302, 6511},   {6512, 6721},   {6722, 6931},   {6932, 7141},   {7142, 7351},
                {7352, 7561},   {7562, 7771},   {7772, 7981},   {7982, 8191},   {8192, 8401},
                {8402, 8611},   {8612, 8821},   {8822, 9031},   {9032, 9241},   {9242, 9451},
                {9452, 9661},   {9662, 9871},   {9872, 10081},  {10082, 10292}, {10293, 10502},
                {10503, 10712}, {10713, 10922}, {10923, 11132}, {11133, 11342}, {11343, 11552},
                {11553, 11762}, {11763, 11972}, {11973, 12182}, {12183, 12392}, {12393, 12602},
                {12603, 12812}, {12813, 13022}, {13023, 13232}, {13233, 13442}, {13443, 13652},
                {13653, 13862}, {13863, 14072}, {14073, 14283}, {14284, 14493}, {14494, 14703},
                {14704, 14913}, {14914, 15123}, {15124, 15333}, {15334, 15543}, {15544, 15753},
                {15754, 15963}, {15964, 16173}, {16174, 16383},
            }}),
    [](const testing::TestParamInfo<SplitCase>& case_info) {
      return std::to_string(case_info.param.primaries) + "Primaries";
    });

TEST(SplitSlotsEvenlyTest, EveryCountUpTo1000CoversAllSlotsContiguously) {
  for (int primaries = 1; primaries <= 1000; ++primaries) {
    const std::vector<SlotRange> ranges = SplitSlotsEvenly(primaries);
    ASSERT_EQ(ranges.size(), static_cast<size_t>(primaries));
    int next = 0;
    for (const SlotRange& range : ranges) {
      ASSERT_EQ(range.first, next) << primaries << " primaries";
      ASSERT_GE(range.size(), 1) << primaries << " primaries";
      next = range.last + 1;
    }
    ASSERT_EQ(next, kSlotCount) << primaries << " primaries";
  }
}

TEST(SplitSlotsEvenlyTest, CountsWithoutASplitGiveNothing) {
  EXPECT_TRUE(SplitSlotsEvenly(0).empty());
  EXPECT_TRUE(SplitSlotsEvenly(-1).empty());
  EXPECT_TRUE(SplitSlotsEvenly(kSlotCount + 1).empty());
  // Float drift hands the last of 7542 primaries slot 16384, which does not exist.
  EXPECT_TRUE(SplitSlotsEvenly(7542).empty());
  EXPECT_EQ(SplitSlotsEvenly(7541).back(), (SlotRange{16383, 16383}));
  EXPECT_EQ(SplitSlotsEvenly(kSlotCount).size(), static_cast<size_t>(kSlotCount));
}

}  // namespace
}  // namespace shardctl::common

namespace shardctl::common {
namespace {

TEST(TagForSlotTest, EverySlotHasAShortTagOfItsOwn) {
  for (int slot = 0; slot < kSlotCount; ++slot) {
    const std::string_view tag = TagForSlot(slot);
    ASSERT_FALSE(tag.empty()) << slot;
    ASSERT_LE(tag.size(), 4u) << slot;
    ASSERT_EQ(KeySlot(tag), slot) << tag;
    ASSERT_EQ(KeySlot("__shardproxy:{" + std::string(tag) + "}"), slot) << tag;
  }
}

}  // namespace
}  // namespace shardctl::common
