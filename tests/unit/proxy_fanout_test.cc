#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "proxy/commands/command_table.h"
#include "proxy/merge/fanout.h"

namespace shardctl::proxy {
namespace {

using Args = std::vector<std::string_view>;
using Replies = std::vector<std::string_view>;

FanOutPlan MustPlan(const Args& args) {
  auto plan = PlanFanOut(args);
  EXPECT_TRUE(plan) << plan.error().message();
  return plan ? *plan : FanOutPlan{};
}

TEST(FanOutTest, TheTableSendsKeyspaceCommandsToEveryShard) {
  for (std::string_view name : {"dbsize", "KEYS", "flushall", "FLUSHDB", "randomkey", "script",
                                "function", "config", "slowlog", "LATENCY", "save", "TIME"}) {
    EXPECT_EQ(LookupCommand(name).kind, RouteKind::kFanOut) << name;
  }
  EXPECT_EQ(LookupCommand("scan").kind, RouteKind::kScan);
}

TEST(FanOutTest, PlansByCommandAndSubcommand) {
  EXPECT_EQ(MustPlan({"DBSIZE"}).merge, FanOutMerge::kSumIntegers);
  EXPECT_EQ(MustPlan({"keys", "*"}).merge, FanOutMerge::kConcatArrays);
  EXPECT_EQ(MustPlan({"FLUSHALL", "ASYNC"}).merge, FanOutMerge::kAllOk);
  EXPECT_EQ(MustPlan({"script", "load", "return 1"}).merge, FanOutMerge::kSameReply);
  EXPECT_EQ(MustPlan({"SCRIPT", "EXISTS", "a", "b"}).merge, FanOutMerge::kAndIntegerArrays);
  EXPECT_EQ(MustPlan({"RANDOMKEY"}).merge, FanOutMerge::kAnyNonNull);
  const FanOutPlan config = MustPlan({"config", "get", "maxmemory"});
  EXPECT_FALSE(config.every_shard);
  EXPECT_TRUE(MustPlan({"FUNCTION", "FLUSH"}).every_shard);
  EXPECT_FALSE(MustPlan({"FUNCTION", "LIST"}).every_shard);
}

TEST(FanOutTest, ServerWideChangesGoToEveryShardAndFailAsAWhole) {
  for (const Args& args : {Args{"CONFIG", "SET", "maxmemory", "1"}, Args{"config", "resetstat"},
                           Args{"CONFIG", "REWRITE"}, Args{"FUNCTION", "RESTORE", "x"},
                           Args{"save"}, Args{"SLOWLOG", "RESET"}}) {
    const FanOutPlan plan = MustPlan(args);
    EXPECT_TRUE(plan.every_shard) << args[0] << " " << (args.size() > 1 ? args[1] : "");
    EXPECT_EQ(plan.merge, FanOutMerge::kAllOk) << args[0];
  }
  // One shard refusing is the client's answer, as one Redis refusing the setting.
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAllOk,
                        Replies{"+OK\r\n",
                                "-ERR CONFIG SET failed (possibly related to argument "
                                "'maxmemory') - argument couldn't be parsed\r\n"}),
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument "
            "couldn't be parsed\r\n");
  for (const Args& args : {Args{"FUNCTION", "DUMP"}, Args{"TIME"}, Args{"LASTSAVE"},
                           Args{"CONFIG", "GET", "x"}, Args{"SLOWLOG", "HELP"}}) {
    EXPECT_FALSE(MustPlan(args).every_shard) << args[0];
  }
  // Not a subcommand of Redis 7: one shard answers with Redis' own error text.
  for (const Args& args : {Args{"CONFIG", "NOSUCH"}, Args{"CONFIG"}, Args{"SLOWLOG", "X"},
                           Args{"LATENCY", "HELP", "xxx"}}) {
    EXPECT_FALSE(MustPlan(args).every_shard) << args[0];
  }
  EXPECT_EQ(PlanFanOut(Args{"SCRIPT", "DEBUG", "YES"}).error().message().substr(0, 66),
            "ERR command 'script|debug' is not supported by shardproxy: it woul");
}

// LATENCY HISTOGRAM in Redis' RESP2 shape: [name, [calls, n, histogram_usec, [bucket, count]]].
std::string Histogram(std::string_view name, int calls, std::vector<std::pair<int, int>> buckets) {
  std::string out = "$" + std::to_string(name.size()) + "\r\n" + std::string(name) + "\r\n" +
                    "*4\r\n$5\r\ncalls\r\n:" + std::to_string(calls) +
                    "\r\n$14\r\nhistogram_usec\r\n*" + std::to_string(buckets.size() * 2) + "\r\n";
  for (auto [bucket, count] : buckets) {
    out += ":" + std::to_string(bucket) + "\r\n:" + std::to_string(count) + "\r\n";
  }
  return out;
}

TEST(FanOutTest, LatencyHistogramsAddKeyedCallsAndCountFanOutOnce) {
  EXPECT_EQ(MustPlan({"LATENCY", "HISTOGRAM", "set"}).merge, FanOutMerge::kHistograms);
  const std::string shard0 =
      "*4\r\n" + Histogram("set", 2, {{1, 1}, {4, 1}}) + Histogram("config|resetstat", 1, {{8, 1}});
  const std::string shard1 =
      "*4\r\n" + Histogram("config|resetstat", 1, {{16, 1}}) + Histogram("set", 1, {{4, 1}});
  const std::string shard2 = "*0\r\n";
  const std::string merged =
      "*4\r\n" + Histogram("set", 3, {{1, 1}, {4, 2}}) + Histogram("config|resetstat", 1, {{8, 1}});
  EXPECT_EQ(MergeFanOut(FanOutMerge::kHistograms, Replies{shard0, shard1, shard2}), merged);
  // RESP3: maps in, maps out.
  const std::string map0 =
      "%1\r\n$3\r\nget\r\n%2\r\n$5\r\ncalls\r\n:1\r\n$14\r\nhistogram_usec\r\n%1\r\n:2\r\n:1\r\n";
  const std::string map1 =
      "%1\r\n$3\r\nget\r\n%2\r\n$5\r\ncalls\r\n:2\r\n$14\r\nhistogram_usec\r\n%1\r\n:2\r\n:2\r\n";
  EXPECT_EQ(
      MergeFanOut(FanOutMerge::kHistograms, Replies{map0, map1}),
      "%1\r\n$3\r\nget\r\n%2\r\n$5\r\ncalls\r\n:3\r\n$14\r\nhistogram_usec\r\n%1\r\n:2\r\n:3\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kHistograms, Replies{"*0\r\n", "*0\r\n"}), "*0\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kHistograms, Replies{"*1\r\n:1\r\n"}).substr(0, 19),
            "-ERR shardproxy: ex");
}

TEST(FanOutTest, KillStopsTheOneScriptThatRuns) {
  EXPECT_EQ(MustPlan({"SCRIPT", "KILL"}).merge, FanOutMerge::kAnyOk);
  EXPECT_EQ(MustPlan({"FUNCTION", "KILL"}).merge, FanOutMerge::kAnyOk);
  const std::string_view notbusy = "-NOTBUSY No scripts in execution right now.\r\n";
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyOk, Replies{notbusy, "+OK\r\n", notbusy}), "+OK\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyOk, Replies{notbusy, notbusy}), notbusy);
  // SCRIPT KILL while a function runs: the busy shard's refusal, not the others' NOTBUSY.
  const std::string_view busy =
      "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
      "NOSAVE.\r\n";
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyOk, Replies{notbusy, busy, notbusy}), busy);
  const std::string_view unkillable = "-UNKILLABLE Sorry the script already executed\r\n";
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyOk, Replies{unkillable, notbusy}), unkillable);
}

TEST(FanOutTest, FunctionStatsIsTheRunningShards) {
  EXPECT_EQ(MustPlan({"FUNCTION", "STATS"}).merge, FanOutMerge::kRunningScript);
  EXPECT_TRUE(MustPlan({"FUNCTION", "STATS"}).every_shard);
  const std::string engines = "$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*0\r\n";
  const std::string idle = "*4\r\n$14\r\nrunning_script\r\n*-1\r\n" + engines;
  const std::string running =
      "*4\r\n$14\r\nrunning_script\r\n*2\r\n$4\r\nname\r\n$4\r\nspin\r\n" + engines;
  EXPECT_EQ(MergeFanOut(FanOutMerge::kRunningScript, Replies{idle, running, idle}), running);
  EXPECT_EQ(MergeFanOut(FanOutMerge::kRunningScript, Replies{idle, idle}), idle);
  // RESP3: a map, null as "_".
  const std::string idle3 = "%2\r\n$14\r\nrunning_script\r\n_\r\n" + engines;
  const std::string running3 =
      "%2\r\n$14\r\nrunning_script\r\n%1\r\n$4\r\nname\r\n$4\r\nspin\r\n" + engines;
  EXPECT_EQ(MergeFanOut(FanOutMerge::kRunningScript, Replies{idle3, running3}), running3);
  EXPECT_EQ(MergeFanOut(FanOutMerge::kRunningScript, Replies{idle3, idle3}), idle3);
  const std::string_view error = "-ERR nope\r\n";
  EXPECT_EQ(MergeFanOut(FanOutMerge::kRunningScript, Replies{idle, error}), error);
}

TEST(FanOutTest, WrongScriptingSubcommandsGetAShardsOwnAnswer) {
  for (const Args& args : {Args{"FUNCTION", "BAD"}, Args{"SCRIPT", "BAD"}, Args{"FUNCTION"},
                           Args{"FUNCTION", "LIST"}, Args{"FUNCTION", "DUMP"}}) {
    EXPECT_FALSE(MustPlan(args).every_shard) << args.size();
  }
  EXPECT_FALSE(PlanFanOut(Args{"SCRIPT", "DEBUG", "YES"}));
}

// Two entries in Redis' SLOWLOG GET shape: [id, unix time, microseconds, args, client, name].
std::string SlowlogEntry(int id, int time, std::string_view command) {
  return "*6\r\n:" + std::to_string(id) + "\r\n:" + std::to_string(time) + "\r\n:15\r\n*1\r\n$" +
         std::to_string(command.size()) + "\r\n" + std::string(command) +
         "\r\n$15\r\n127.0.0.1:50000\r\n$0\r\n\r\n";
}

TEST(FanOutTest, SlowlogMergesEveryShardsEntriesNewestFirst) {
  EXPECT_EQ(MustPlan({"SLOWLOG", "GET"}).limit, 10);
  EXPECT_EQ(MustPlan({"slowlog", "get", "-1"}).limit, -1);
  EXPECT_EQ(MustPlan({"SLOWLOG", "GET", "2"}).limit, 2);
  EXPECT_EQ(MustPlan({"SLOWLOG", "LEN"}).merge, FanOutMerge::kSumIntegers);
  const std::string a1 = SlowlogEntry(1, 100, "a1"), a0 = SlowlogEntry(0, 90, "a0");
  const std::string b0 = SlowlogEntry(0, 95, "b0");
  const std::string shard_a = "*2\r\n" + a1 + a0, shard_b = "*1\r\n" + b0;
  EXPECT_EQ(MergeNewestEntries(Replies{shard_a, shard_b}, -1), "*3\r\n" + a1 + b0 + a0);
  EXPECT_EQ(MergeNewestEntries(Replies{shard_a, shard_b}, 2), "*2\r\n" + a1 + b0);
  EXPECT_EQ(MergeNewestEntries(Replies{"*0\r\n", "*0\r\n"}, 10), "*0\r\n");
  EXPECT_EQ(MergeNewestEntries(Replies{"*1\r\n:1\r\n"}, 10).rfind("-ERR shardproxy", 0), 0u);
}

TEST(FanOutTest, MergesEachShape) {
  EXPECT_EQ(MergeFanOut(FanOutMerge::kUniqueArrays,
                        Replies{"*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*0\r\n", "*1\r\n$1\r\na\r\n"}),
            "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
  EXPECT_EQ(
      MergeFanOut(FanOutMerge::kSumPairs, Replies{"*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:0\r\n",
                                                  "*4\r\n$1\r\na\r\n:2\r\n$1\r\nb\r\n:3\r\n"}),
      "*4\r\n$1\r\na\r\n:3\r\n$1\r\nb\r\n:3\r\n");
  EXPECT_NE(MergeFanOut(FanOutMerge::kSumPairs, Replies{"*1\r\n$1\r\na\r\n"}).find("-ERR"),
            std::string::npos);
  EXPECT_EQ(MustPlan({"PUBSUB", "numsub", "a"}).merge, FanOutMerge::kSumPairs);
  EXPECT_EQ(MustPlan({"pubsub", "CHANNELS"}).merge, FanOutMerge::kUniqueArrays);
  EXPECT_EQ(MustPlan({"PUBSUB", "NUMPAT"}).merge, FanOutMerge::kSumIntegers);
  EXPECT_EQ(MergeFanOut(FanOutMerge::kMinInteger, Replies{":2\r\n", ":0\r\n", ":1\r\n"}), ":0\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kMinInteger, Replies{":2\r\n"}), ":2\r\n");
  EXPECT_NE(MergeFanOut(FanOutMerge::kMinInteger, Replies{":2\r\n", "+OK\r\n"}).find("-ERR"),
            std::string::npos);
  EXPECT_EQ(MergeFanOut(FanOutMerge::kSumIntegers, Replies{":3\r\n", ":0\r\n", ":5\r\n"}),
            ":8\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kConcatArrays,
                        Replies{"*1\r\n$1\r\na\r\n", "*0\r\n", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"}),
            "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAllOk, Replies{"+OK\r\n", "+OK\r\n"}), "+OK\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kSameReply, Replies{"$2\r\nab\r\n", "$2\r\nab\r\n"}),
            "$2\r\nab\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAndIntegerArrays,
                        Replies{"*2\r\n:1\r\n:1\r\n", "*2\r\n:1\r\n:0\r\n"}),
            "*2\r\n:1\r\n:0\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyNonNull, Replies{"$-1\r\n", "_\r\n", "$1\r\nk\r\n"}),
            "$1\r\nk\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyNonNull, Replies{"$1\r\na\r\n", "$1\r\nb\r\n"}, 1),
            "$1\r\nb\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAnyNonNull, Replies{"$-1\r\n", "$-1\r\n"}), "$-1\r\n");
}

TEST(FanOutTest, TheFirstErrorWinsAndBadShapesAreNamed) {
  EXPECT_EQ(MergeFanOut(FanOutMerge::kSumIntegers, Replies{":1\r\n", "-ERR x\r\n", "-ERR y\r\n"}),
            "-ERR x\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kAllOk, Replies{"+OK\r\n", "+QUEUED\r\n"}),
            "-ERR shardproxy: expected +OK from every shard\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kSameReply, Replies{"$1\r\na\r\n", "$1\r\nb\r\n"}),
            "-ERR shardproxy: shards answered differently\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kSumIntegers, Replies{"+1\r\n"}),
            "-ERR shardproxy: expected an integer reply\r\n");
  EXPECT_EQ(MergeFanOut(FanOutMerge::kConcatArrays, Replies{}),
            "-ERR shardproxy: no shard to ask\r\n");
}

TEST(ScanCursorTest, EncodesShardAndShardCursor) {
  EXPECT_EQ(EncodeScanCursor({0, 0}), "0");
  EXPECT_EQ(EncodeScanCursor({2, 17}), std::to_string((17u << 10) | 2));
  auto decoded = DecodeScanCursor(EncodeScanCursor({2, 17}), 3);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, (ScanPosition{2, 17}));
  EXPECT_FALSE(DecodeScanCursor("3", 3));  // no shard 3
  EXPECT_FALSE(DecodeScanCursor("x", 3));
  EXPECT_FALSE(DecodeScanCursor("-1", 3));
  EXPECT_EQ(DecodeScanCursor("", 3).error().message(), "ERR invalid cursor");
}

TEST(ScanCursorTest, ReplyCursorsWalkEveryShardOnceThenEnd) {
  const std::string keys = "*1\r\n$1\r\nk\r\n";
  // Shard 1 of 3 has more: the client gets shard 1's cursor.
  EXPECT_EQ(RewriteScanReply("*2\r\n$2\r\n40\r\n" + keys, 1, 3),
            "*2\r\n$5\r\n" + std::to_string((40u << 10) | 1) + "\r\n" + keys);
  // Shard 1 is done: the next call starts shard 2.
  EXPECT_EQ(RewriteScanReply("*2\r\n$1\r\n0\r\n" + keys, 1, 3), "*2\r\n$1\r\n2\r\n" + keys);
  // The last shard is done: the iteration ends.
  EXPECT_EQ(RewriteScanReply("*2\r\n$1\r\n0\r\n*0\r\n", 2, 3), "*2\r\n$1\r\n0\r\n*0\r\n");
  EXPECT_EQ(RewriteScanReply("-ERR x\r\n", 0, 3), "-ERR x\r\n");
  EXPECT_EQ(RewriteScanReply(":1\r\n", 0, 3), "-ERR shardproxy: unexpected SCAN reply\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
