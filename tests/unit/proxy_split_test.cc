#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/merge/split.h"

namespace shardctl::proxy {
namespace {

using Args = std::vector<std::string_view>;

std::string Command(Args args) {
  std::string out;
  common::AppendCommand(out, args);
  return out;
}

SplitRequest MustSplit(const Args& args) {
  auto split = SplitBySlot(LookupCommand(args[0]), args);
  EXPECT_TRUE(split) << split.error().message();
  return split ? *split : SplitRequest{};
}

// Slots: bar 5061, {u}x and {u}y both 11826 (the slot of "u"), foo 12182.
TEST(SplitBySlotTest, KeysOfOneSlotStayOneSubCommand) {
  const SplitRequest split = MustSplit({"MGET", "foo", "{u}x", "bar", "{u}y"});
  EXPECT_EQ(split.merge, MergeKind::kArrayByKey);
  EXPECT_EQ(split.key_count, 4u);
  ASSERT_EQ(split.parts.size(), 3u);
  ASSERT_EQ(common::KeySlot("u"), 11826);
  EXPECT_EQ(split.parts[0].slot, 5061);  // parts come ordered by slot
  EXPECT_EQ(split.parts[0].request, Command({"MGET", "bar"}));
  EXPECT_EQ(split.parts[0].key_order, (std::vector<size_t>{2}));
  EXPECT_EQ(split.parts[1].slot, 11826);
  EXPECT_EQ(split.parts[1].request, Command({"MGET", "{u}x", "{u}y"}));
  EXPECT_EQ(split.parts[1].key_order, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(split.parts[2].slot, 12182);
  EXPECT_EQ(split.parts[2].request, Command({"MGET", "foo"}));
  EXPECT_EQ(split.parts[2].key_order, (std::vector<size_t>{0}));
}

TEST(SplitBySlotTest, MsetKeepsValuesWithTheirKeys) {
  const SplitRequest split = MustSplit({"mset", "foo", "1", "bar", "2", "{bar}z", "3"});
  ASSERT_EQ(split.parts.size(), 2u);
  EXPECT_EQ(split.parts[0].request, Command({"mset", "bar", "2", "{bar}z", "3"}));
  EXPECT_EQ(split.parts[1].request, Command({"mset", "foo", "1"}));
}

TEST(SplitBySlotTest, AllKeysInOneSlotGiveOnePart) {
  const SplitRequest split = MustSplit({"del", "{t}1", "{t}2", "{t}3"});
  ASSERT_EQ(split.parts.size(), 1u);
  EXPECT_EQ(split.parts[0].request, Command({"del", "{t}1", "{t}2", "{t}3"}));
}

TEST(SplitBySlotTest, BadArgumentCountsAreRedisErrors) {
  const Args uneven = {"mset", "a", "1", "b"};
  auto split = SplitBySlot(LookupCommand("mset"), uneven);
  ASSERT_FALSE(split);
  EXPECT_EQ(split.error().message(), "ERR wrong number of arguments for 'mset' command");
  const Args none = {"mget"};
  EXPECT_FALSE(SplitBySlot(LookupCommand("mget"), none));
}

TEST(MergeRepliesTest, MgetRestoresKeyOrder) {
  const SplitRequest split = MustSplit({"MGET", "foo", "{u}x", "bar", "{u}y"});
  const std::vector<std::string_view> replies = {"*1\r\n$3\r\nBAR\r\n",        // bar
                                                 "*2\r\n$2\r\nux\r\n$-1\r\n",  // {u}x {u}y
                                                 "*1\r\n$3\r\nFOO\r\n"};       // foo
  EXPECT_EQ(MergeReplies(split, replies), "*4\r\n$3\r\nFOO\r\n$2\r\nux\r\n$3\r\nBAR\r\n$-1\r\n");
}

TEST(MergeRepliesTest, MgetForwardsResp3NullsAsSent) {
  const SplitRequest split = MustSplit({"MGET", "foo", "bar"});
  const std::vector<std::string_view> replies = {"*1\r\n_\r\n", "*1\r\n$1\r\nf\r\n"};
  EXPECT_EQ(MergeReplies(split, replies), "*2\r\n$1\r\nf\r\n_\r\n");
}

TEST(MergeRepliesTest, MgetWithWrongElementCountIsAnErrorNotACrash) {
  const SplitRequest split = MustSplit({"MGET", "foo", "bar"});
  const std::vector<std::string_view> replies = {"*2\r\n$1\r\na\r\n$1\r\nb\r\n",
                                                 "*1\r\n$1\r\nf\r\n"};
  EXPECT_EQ(MergeReplies(split, replies),
            "-ERR shardproxy: a shard answered 2 values for 1 keys\r\n");
  const std::vector<std::string_view> truncated = {"*1\r\n", "*1\r\n$1\r\nf\r\n"};
  EXPECT_EQ(MergeReplies(split, truncated).substr(0, 16), "-ERR shardproxy:");
}

TEST(MergeRepliesTest, CountsAreSummed) {
  const SplitRequest split = MustSplit({"DEL", "foo", "bar", "{bar}2"});
  ASSERT_EQ(split.parts.size(), 2u);
  const std::vector<std::string_view> replies = {":2\r\n", ":1\r\n"};
  EXPECT_EQ(MergeReplies(split, replies), ":3\r\n");
}

TEST(MergeRepliesTest, MsetIsOkOnlyWhenEveryPartIs) {
  const SplitRequest split = MustSplit({"MSET", "foo", "1", "bar", "2"});
  const std::vector<std::string_view> ok = {"+OK\r\n", "+OK\r\n"};
  EXPECT_EQ(MergeReplies(split, ok), "+OK\r\n");
  const std::vector<std::string_view> one_failed = {"+OK\r\n", "-OOM command not allowed\r\n"};
  EXPECT_EQ(MergeReplies(split, one_failed), "-OOM command not allowed\r\n");
}

TEST(MergeRepliesTest, FirstPartErrorIsForwarded) {
  const SplitRequest split = MustSplit({"EXISTS", "foo", "bar"});
  const std::vector<std::string_view> replies = {"-CLUSTERDOWN The cluster is down\r\n", ":1\r\n"};
  EXPECT_EQ(MergeReplies(split, replies), "-CLUSTERDOWN The cluster is down\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
