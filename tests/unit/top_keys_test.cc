// `shardctl top --keys` and rebalance's read-mostly keys (launcher/ops/top_keys.h): the proxy's
// reply parsed, rows with rates and shares between two refreshes, the table, the read-mostly pick.
#include "launcher/ops/top_keys.h"

#include <gtest/gtest.h>

#include "common/slots.h"

namespace shardctl::launcher {
namespace {

using namespace std::chrono_literals;

TEST(ProxyHotKeysTest, ParsesFlattenedEntriesAndRefusesOtherShapes) {
  const std::vector<std::string> flat = {"user:1", "10", "7", "2", "x", "3", "0", "0"};
  auto keys = ParseProxyHotKeys(flat);
  ASSERT_TRUE(keys.ok()) << keys.error().message();
  EXPECT_EQ(*keys, (std::vector<ProxyHotKey>{{"user:1", 10, 7, 2}, {"x", 3, 0, 0}}));
  EXPECT_TRUE(ParseProxyHotKeys(std::vector<std::string>{}).ok());
  EXPECT_FALSE(ParseProxyHotKeys(std::vector<std::string>{"a", "1", "2"}).ok());
  EXPECT_FALSE(ParseProxyHotKeys(std::vector<std::string>{"a", "1", "x", "0"}).ok());
}

TEST(TopKeyRowsTest, FirstRefreshSinceStartThenRatesOverTheInterval) {
  TopKeysSample first{.keys = {{"a", 100, 50, 0}, {"b", 60, 60, 0}}, .requests = 200};
  first.owner_of_slot.assign(common::kSlotCount, 2);
  auto rows = TopKeyRows(nullptr, first);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "a");
  EXPECT_FALSE(rows[0].requests_per_second);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.5);
  EXPECT_DOUBLE_EQ(*rows[0].reads_share, 0.5);
  EXPECT_EQ(rows[0].slot, common::KeySlot("a"));
  EXPECT_EQ(rows[0].shard, 2);

  // Two seconds later: b took 100 more (all reads), a 20, a new key c 30, of 200 in all.
  TopKeysSample second{.at = first.at + 2s,
                       .keys = {{"b", 160, 160, 0}, {"a", 120, 55, 0}, {"c", 30, 0, 5}},
                       .requests = 400};
  rows = TopKeyRows(&first, second);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].key, "b");
  EXPECT_DOUBLE_EQ(*rows[0].requests_per_second, 50);
  EXPECT_DOUBLE_EQ(rows[0].share, 0.5);
  EXPECT_DOUBLE_EQ(*rows[0].reads_share, 1.0);
  EXPECT_EQ(rows[1].key, "c");  // 15/s, counted from zero
  EXPECT_DOUBLE_EQ(*rows[1].requests_per_second, 15);
  EXPECT_EQ(rows[2].key, "a");
  EXPECT_DOUBLE_EQ(*rows[2].reads_share, 0.25);
  EXPECT_EQ(rows[2].shard, -1);  // no shard answered this time
}

TEST(TopKeysTableTest, HeaderThenOneLinePerKeyWithUnprintableBytesShown) {
  const std::vector<TopKeyRow> rows = {
      {.key = "hot\n",
       .requests = 9,
       .requests_per_second = 12.4,
       .share = 0.25,
       .slot = 7,
       .shard = 1},
      {.key = std::string(50, 'k'), .requests = 1, .share = 0, .slot = 16383}};
  const auto lines = TopKeysTable(rows);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].substr(0, 3), "KEY");
  EXPECT_NE(lines[0].find("REQ/S"), std::string::npos);
  EXPECT_EQ(lines[1].substr(0, 7), "hot\\x0a");
  EXPECT_NE(lines[1].find("  12 "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("25.0%"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[2].substr(37, 3), "...");
  EXPECT_NE(lines[2].find(" ?"), std::string::npos) << lines[2];  // unknown shard, no reads
}

TEST(ReadMostlyKeysTest, KeepsKeysReadAtLeastNinetyPercent) {
  const std::vector<ProxyHotKey> keys = {
      {"r", 100, 95, 0}, {"w", 100, 10, 0}, {"edge", 10, 9, 0}, {"none", 0, 0, 0}};
  EXPECT_EQ(ReadMostlyKeys(keys),
            (std::vector<ProxyHotKey>{{"r", 100, 95, 0}, {"edge", 10, 9, 0}}));
  EXPECT_TRUE(ReadMostlyKeys(keys, 0.99).empty());
  // A key that entered the table late inherited a count (error) its reads were never counted
  // for: the share is of what it was asked since it entered.
  const std::vector<ProxyHotKey> late = {{"late", 1000, 380, 600}, {"mixed", 1000, 300, 600}};
  EXPECT_EQ(ReadMostlyKeys(late), (std::vector<ProxyHotKey>{{"late", 1000, 380, 600}}));
  EXPECT_TRUE(ReadMostlyKeys(std::vector<ProxyHotKey>{{"all-error", 50, 0, 50}}).empty());
}

}  // namespace
}  // namespace shardctl::launcher
