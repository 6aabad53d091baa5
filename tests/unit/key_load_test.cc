// The proxy's key and slot counts (proxy/services/key_load.h): one worker's counters, the merge
// over workers, the PROXY replies, INFO hotkeys and /metrics shapes, and what a Session counts.
#include "proxy/services/key_load.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/services/metrics.h"
#include "proxy/session/session.h"
#include "tests/unit/proxy_fakes.h"

namespace shardctl::proxy {
namespace {

using namespace testing_fakes;

TEST(HotKeysReadsTest, ReadsCountSinceTheKeyEnteredTheTable) {
  HotKeys keys(1);
  keys.Offer("a", /*read=*/true);
  keys.Offer("a", /*read=*/false);
  keys.Offer("a", /*read=*/true);
  EXPECT_EQ(keys.Snapshot(), (std::vector<HotKey>{{"a", 3, 0, 2}}));
  // "b" takes the one counter over: its count inherits a's, its reads start from its own.
  keys.Offer("b", /*read=*/true);
  EXPECT_EQ(keys.Snapshot(), (std::vector<HotKey>{{"b", 4, 3, 1}}));
}

TEST(KeyLoadTest, CountsSlotsAndKeys) {
  KeyLoad load(4, 1);
  load.Count(3300, "b", true);
  load.Count(3300, "b", false);
  load.CountSlot(15495);
  load.CountKey("a", true);
  const KeyLoadSnapshot snapshot = load.Snapshot();
  ASSERT_EQ(snapshot.slots.size(), static_cast<size_t>(common::kSlotCount));
  EXPECT_EQ(snapshot.slots[3300], 2u);
  EXPECT_EQ(snapshot.slots[15495], 1u);
  EXPECT_EQ(snapshot.keys_counted, 3u);
  EXPECT_EQ(snapshot.keys, (std::vector<HotKey>{{"b", 2, 0, 1}, {"a", 1, 0, 1}}));
}

// Sampled one key in 8: every key is counted, the heavy hitters are still the top of the table,
// their counts scaled back near the truth.
TEST(KeyLoadTest, SampledKeysKeepTheHeavyHittersWithScaledCounts) {
  KeyLoad load(64, 8);
  uint64_t state = 7;
  const auto next = [&state] {
    state = state * 6364136223846793005u + 1442695040888963407u;
    return state >> 33;
  };
  constexpr int kRequests = 200000;
  for (int i = 0; i < kRequests; ++i) {
    // Ten hot keys take half of the requests, the rest spread over 100,000 keys.
    const std::string key = next() % 2 == 0 ? "hot" + std::to_string(next() % 10)
                                            : "cold" + std::to_string(next() % 100000);
    load.Count(0, key, true);
  }
  const KeyLoadSnapshot snapshot = load.Snapshot();
  EXPECT_EQ(snapshot.keys_counted, static_cast<uint64_t>(kRequests));
  EXPECT_EQ(snapshot.slots[0], static_cast<uint64_t>(kRequests));
  ASSERT_GE(snapshot.keys.size(), 10u);
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(snapshot.keys[i].key.substr(0, 3), "hot") << i;
    // 10,000 each; sampled, within a few percent (the count is at most `error` high).
    EXPECT_NEAR(static_cast<double>(snapshot.keys[i].count - snapshot.keys[i].error), 10000, 1500)
        << snapshot.keys[i].key;
    EXPECT_EQ(snapshot.keys[i].reads % 8, 0u);
  }
}

TEST(KeyLoadTest, SlotCountsCarryPastSixteenBits) {
  KeyLoad load(1, 1);
  for (int i = 0; i < 70000; ++i) load.CountSlot(42);
  load.CountSlot(43);
  const KeyLoadSnapshot snapshot = load.Snapshot();
  EXPECT_EQ(snapshot.slots[42], 70000u);
  EXPECT_EQ(snapshot.slots[43], 1u);
}

TEST(KeyLoadTest, MergeSumsSlotsOffersAndKeysOverWorkers) {
  KeyLoad one(4, 1), two(4, 1);
  for (int i = 0; i < 3; ++i) one.Count(7, "hot", true);
  one.Count(8, "cold", false);
  for (int i = 0; i < 2; ++i) two.Count(7, "hot", false);
  const KeyLoadSnapshot workers[] = {one.Snapshot(), two.Snapshot(), KeyLoadSnapshot{}};
  const KeyLoadSnapshot merged = MergeKeyLoad(workers, 1);
  EXPECT_EQ(merged.keys_counted, 6u);
  EXPECT_EQ(merged.slots[7], 5u);
  EXPECT_EQ(merged.slots[8], 1u);
  // "hot" is missing from no table; its error adds nothing but the tables' own.
  EXPECT_EQ(merged.keys, (std::vector<HotKey>{{"hot", 5, 0, 3}}));
  EXPECT_TRUE(MergeKeyLoad(workers, 0).keys.empty());
}

TEST(KeyLoadBoardTest, MergesWhatTheWorkersPublishedUpToItsCapacity) {
  KeyLoadBoard board(2, 2);
  EXPECT_TRUE(board.Merged(10).keys.empty());
  KeyLoad one(2, 1), two(2, 1);
  one.Count(1, "a", false);
  one.Count(1, "a", false);
  two.Count(2, "b", false);
  two.Count(3, "c", false);
  board.Publish(0, one.Snapshot());
  board.Publish(1, two.Snapshot());
  const KeyLoadSnapshot merged = board.Merged(10);
  EXPECT_EQ(merged.keys.size(), 2u);  // the capacity, though 10 were asked for
  EXPECT_EQ(merged.keys[0].key, "a");
  EXPECT_EQ(merged.slots[1] + merged.slots[2] + merged.slots[3], 4u);
}

TEST(KeyLoadRepliesTest, HotKeysAndSlotsInTheirRespShapes) {
  const std::vector<HotKey> keys = {{"user:1", 10, 2, 7}, {"x", 3, 0, 0}};
  EXPECT_EQ(HotKeysReply(keys),
            "*2\r\n*4\r\n$6\r\nuser:1\r\n:10\r\n:7\r\n:2\r\n*4\r\n$1\r\nx\r\n:3\r\n:0\r\n:0\r\n");
  std::vector<uint64_t> slots(common::kSlotCount, 0);
  slots[16383] = 4;
  slots[5] = 9;
  EXPECT_EQ(SlotsReply(slots), "*4\r\n:5\r\n:9\r\n:16383\r\n:4\r\n");
  EXPECT_EQ(SlotsReply(std::vector<uint64_t>(common::kSlotCount, 0)), "*0\r\n");
}

TEST(KeyLoadRepliesTest, BusiestSlotsMostFirstTiesByLowerSlot) {
  std::vector<uint64_t> slots(common::kSlotCount, 0);
  slots[9] = 5;
  slots[2] = 5;
  slots[100] = 8;
  slots[7] = 1;
  EXPECT_EQ(BusiestSlots(slots, 3),
            (std::vector<std::pair<int, uint64_t>>{{100, 8}, {2, 5}, {9, 5}}));
  EXPECT_EQ(BusiestSlots(slots, 10).size(), 4u);
}

TEST(KeyLoadInfoTest, EscapesWhatWouldBreakAnInfoLine) {
  EXPECT_EQ(EscapeInfoValue("user:1{a}"), "user:1{a}");
  EXPECT_EQ(EscapeInfoValue("a b,c=d\\e\"f\r\n\xff"),
            "a\\x20b\\x2cc\\x3dd\\x5ce\\x22f\\x0d\\x0a\\xff");
  KeyLoadSnapshot load;
  load.keys_counted = 12;
  load.keys = {{"k,1", 5, 1, 3}, {"k2", 2, 0, 0}};
  std::string out;
  AppendHotKeysInfo(out, load);
  EXPECT_EQ(out,
            "# Hotkeys\r\nhotkeys_tracked:2\r\nhotkeys_requests:12\r\n"
            "hotkey0:key=k\\x2c1,requests=5,reads=3,error=1\r\n"
            "hotkey1:key=k2,requests=2,reads=0,error=0\r\n");
}

TEST(KeyLoadMetricsTest, HotKeysAndSlotsAsPrometheusSamples) {
  ProxyMetricsSnapshot snapshot;
  snapshot.hot_keys = {{"we\"ird\nkey", 10, 0, 4}};
  snapshot.hot_slots = {{866, 10}};
  const std::string text = RenderProxyMetrics(snapshot);
  EXPECT_NE(text.find("shardproxy_hot_key_requests_total{key=\"we\\\"ird\\nkey\"} 10\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shardproxy_hot_key_reads_total{key=\"we\\\"ird\\nkey\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("shardproxy_slot_requests_total{slot=\"866\"} 10\n"), std::string::npos);
  EXPECT_EQ(RenderProxyMetrics({}).find("hot_key"), std::string::npos);
}

// A Session on a fake worker that counts: what it offers for each kind of keyed command, and the
// PROXY command over the fake server's board.
class SessionKeyLoadTest : public testing::Test {
 protected:
  SessionKeyLoadTest() {
    router_.load = std::make_unique<KeyLoad>(8, 1);
    services_.board = std::make_unique<KeyLoadBoard>(1, 8);
    // Made after the router counts: a session asks for its counters once.
    session_.emplace(router_, services_, link_, /*id=*/1, /*thread=*/0);
  }
  ~SessionKeyLoadTest() override {
    while (SubRequest* request = router_.Take()) session_->OnReply(request, "+OK\r\n");
    session_->Close();
  }
  void Send(std::initializer_list<std::string_view> args) {
    std::string frame;
    common::AppendCommand(frame, std::vector<std::string_view>(args));
    auto parsed = common::ParseCommandArgs(frame);
    ASSERT_TRUE(parsed.ok());
    session_->HandleCommand(frame, *parsed);
  }
  std::string Output() { return std::exchange(session_->output(), {}); }
  void Publish() { services_.board->Publish(0, router_.load->Snapshot()); }

  FakeRouter router_;
  FakeServices services_;
  FakeClientLink link_;
  std::optional<Session> session_;
};

TEST_F(SessionKeyLoadTest, CountsFirstKeysOfSlotCommandsAndEveryKeyOfSplitOnes) {
  Send({"GET", "a"});                // read, slot 15495
  Send({"SET", "a", "1"});           // write
  Send({"RENAME", "{a}x", "{a}y"});  // one slot: its first key only
  Send({"MGET", "a", "b", "{a}z"});  // split: two parts (15495, 3300), three keys
  Send({"BLPOP", "b", "0"});         // blocking
  Send({"PING"});                    // local: not counted
  Send({"MULTI"});                   // queued in a transaction: not counted
  Send({"SET", "b", "2"});
  Send({"DISCARD"});
  const KeyLoadSnapshot load = router_.load->Snapshot();
  EXPECT_EQ(load.keys_counted, 7u);
  EXPECT_EQ(load.slots[15495], 4u);  // GET, SET, RENAME, the MGET part of a and {a}z
  EXPECT_EQ(load.slots[3300], 2u);   // the MGET part of b, BLPOP
  std::map<std::string, HotKey> by_key;
  for (const HotKey& key : load.keys) by_key[key.key] = key;
  EXPECT_EQ(by_key["a"], (HotKey{"a", 3, 0, 2}));  // GET and MGET read, SET writes
  EXPECT_EQ(by_key["b"].count, 2u);
  EXPECT_EQ(by_key["{a}x"].count, 1u);
  EXPECT_FALSE(by_key.contains("{a}y"));
}

TEST_F(SessionKeyLoadTest, ProxyCommandServesTheBoard) {
  Send({"GET", "a"});
  Send({"GET", "a"});
  Send({"SET", "b", "1"});
  while (SubRequest* request = router_.Take()) session_->OnReply(request, "+OK\r\n");
  Output();
  Publish();
  Send({"PROXY", "HOTKEYS", "COUNT", "1"});
  EXPECT_EQ(Output(), "*1\r\n*4\r\n$1\r\na\r\n:2\r\n:2\r\n:0\r\n");
  Send({"proxy", "slots"});
  EXPECT_EQ(Output(), "*4\r\n:3300\r\n:1\r\n:15495\r\n:2\r\n");
  Send({"PROXY", "HOTKEYS"});
  EXPECT_EQ(Output().substr(0, 4), "*2\r\n");
  Send({"PROXY", "HELP"});
  EXPECT_EQ(Output().substr(0, 4), "*8\r\n");
  Send({"PROXY", "NOPE"});
  EXPECT_EQ(Output(), "-ERR unknown subcommand 'NOPE'. Try PROXY HELP.\r\n");
  Send({"PROXY", "HOTKEYS", "COUNT", "0"});
  EXPECT_EQ(Output(), "-ERR COUNT must be a positive integer\r\n");
  Send({"PROXY", "HOTKEYS", "LIMIT", "3"});
  EXPECT_EQ(Output(), "-ERR syntax error. Try PROXY HELP.\r\n");
  Send({"PROXY"});
  EXPECT_EQ(Output(), "-ERR wrong number of arguments for 'proxy' command\r\n");
}

TEST(SessionKeyLoadOffTest, NothingCountedAndProxyCommandSaysSo) {
  FakeRouter router;
  FakeServices services;
  FakeClientLink link;
  Session session(router, services, link, 1, 0);
  std::string frame;
  common::AppendCommand(frame, std::vector<std::string_view>{"PROXY", "HOTKEYS"});
  session.HandleCommand(frame, *common::ParseCommandArgs(frame));
  EXPECT_EQ(session.output(), "-ERR key and slot counting is off (shardproxy --hot-keys 0)\r\n");
  session.Close();
}

}  // namespace
}  // namespace shardctl::proxy
