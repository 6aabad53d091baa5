// common/repl_plan.h and repl_commands.h: what a cluster receives for each replicated command.
//
// Slots of the keys used here (CRC16 mod 16384, as common_slot_table_test checks): a 15495,
// b 3300, c 7365, dst 9394, src 13222, k1 12706, k2 449, d 11298; {t}* 15891, {u}* 11826.
#include "common/repl_plan.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "common/repl_commands.h"

namespace shardctl::common {
namespace {

constexpr int kSlotA = 15495;
constexpr int kSlotB = 3300;
constexpr int kSlotC = 7365;
constexpr int kSlotT = 15891;
constexpr int kSlotU = 11826;

std::vector<ReplAction> PlanOne(ReplArgs command) {
  ReplPlanner planner;
  return planner.Plan(std::move(command)).actions;
}

std::vector<ReplAction> ForwardTo(int slot, ReplArgs command) {
  return {Forward{.slot = slot, .command = std::move(command)}};
}

std::string LowerCaseForTest(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::vector<ReplAction> ProblemOf(std::string reason) { return {Problem{std::move(reason)}}; }

TEST(ReplPlannerTest, SkipsReplicationPlumbingAndMessages) {
  ReplPlanner planner;
  for (ReplArgs command : std::vector<ReplArgs>{{"PING"},
                                                {"REPLCONF", "GETACK", "*"},
                                                {"select", "0"},
                                                {"PUBLISH", "news", "hello"},
                                                {"SPUBLISH", "news", "hello"}}) {
    EXPECT_TRUE(planner.Plan(command).actions.empty()) << command[0];
  }
  EXPECT_EQ(planner.counts().commands, 5);
  EXPECT_EQ(planner.counts().skipped, 5);
  EXPECT_EQ(planner.counts().problems, 0);
}

struct RouteCase {
  ReplArgs command;
  std::vector<ReplAction> actions;
};

// One key, in the forms primaries replicate (rewritten: SET PXAT, PEXPIREAT, SREM for SPOP, ...).
TEST(ReplPlannerTest, ForwardsASingleKeyWriteToItsSlot) {
  const RouteCase cases[] = {
      {{"SET", "a", "1", "PXAT", "1700000000000"}, {}},
      {{"set", "a", "1", "KEEPTTL"}, {}},
      {{"PEXPIREAT", "a", "1700000000000"}, {}},
      {{"PERSIST", "a"}, {}},
      {{"HSET", "a", "f", "v"}, {}},
      {{"HPEXPIREAT", "a", "1700000000000", "FIELDS", "1", "f"}, {}},
      {{"RPUSH", "a", "x", "y"}, {}},
      {{"SREM", "a", "m"}, {}},
      {{"ZADD", "a", "1", "m"}, {}},
      {{"XADD", "a", "1-1", "f", "v"}, {}},
      {{"XCLAIM", "a", "g", "c", "0", "1-1", "TIME", "1", "RETRYCOUNT", "1", "FORCE", "JUSTID",
        "LASTID", "1-1"},
       {}},
      {{"XGROUP", "SETID", "a", "g", "1-1", "ENTRIESREAD", "3"}, {}},
      {{"PFADD", "a", "x"}, {}},
      {{"SETBIT", "a", "7", "1"}, {}},
      {{"GEOADD", "a", "13.36", "38.11", "palermo"}, {}},
      {{"RESTORE", "a", "0", "\x0e\x01payload", "REPLACE"}, {}},
      {{"PFCOUNT", "a"}, {}},
  };
  for (const RouteCase& c : cases) {
    EXPECT_EQ(PlanOne(c.command), ForwardTo(kSlotA, c.command)) << c.command[0];
  }
  // A hash tag decides the slot.
  EXPECT_EQ(PlanOne({"INCR", "{t}counter"}), ForwardTo(kSlotT, {"INCR", "{t}counter"}));
}

TEST(ReplPlannerTest, SplitsIndependentKeysByTheirSlots) {
  const RouteCase cases[] = {
      {{"MSET", "a", "1", "b", "2", "{a}x", "3"},
       {Forward{.slot = kSlotA, .command = {"MSET", "a", "1", "{a}x", "3"}},
        Forward{.slot = kSlotB, .command = {"MSET", "b", "2"}}}},
      {{"DEL", "b", "a", "c", "{b}y"},
       {Forward{.slot = kSlotB, .command = {"DEL", "b", "{b}y"}},
        Forward{.slot = kSlotA, .command = {"DEL", "a"}},
        Forward{.slot = kSlotC, .command = {"DEL", "c"}}}},
      {{"unlink", "a", "b"},
       {Forward{.slot = kSlotA, .command = {"unlink", "a"}},
        Forward{.slot = kSlotB, .command = {"unlink", "b"}}}},
      // One slot: the command as it came.
      {{"MSET", "{t}a", "1", "{t}b", "2"}, ForwardTo(kSlotT, {"MSET", "{t}a", "1", "{t}b", "2"})},
      {{"DEL", "a"}, ForwardTo(kSlotA, {"DEL", "a"})},
  };
  ReplPlanner planner;
  for (const RouteCase& c : cases) {
    EXPECT_EQ(planner.Plan(c.command).actions, c.actions) << c.command[0];
  }
  EXPECT_EQ(planner.counts().split, 3);
}

TEST(ReplPlannerTest, KeysThatMustStayTogetherGoToOneSlotOrAreCrossSlot) {
  const RouteCase cases[] = {
      {{"RENAME", "{t}a", "{t}b"}, ForwardTo(kSlotT, {"RENAME", "{t}a", "{t}b"})},
      {{"RENAME", "a", "b"}, {CrossSlot{.command = {"RENAME", "a", "b"}, .keys = {"a", "b"}}}},
      {{"SMOVE", "{t}a", "{t}b", "m"}, ForwardTo(kSlotT, {"SMOVE", "{t}a", "{t}b", "m"})},
      {{"LMOVE", "a", "b", "LEFT", "RIGHT"},
       {CrossSlot{.command = {"LMOVE", "a", "b", "LEFT", "RIGHT"}, .keys = {"a", "b"}}}},
      {{"COPY", "{t}a", "{t}b", "DB", "0", "REPLACE"},
       ForwardTo(kSlotT, {"COPY", "{t}a", "{t}b", "DB", "0", "REPLACE"})},
      {{"MSETNX", "a", "1", "{a}b", "2"}, ForwardTo(kSlotA, {"MSETNX", "a", "1", "{a}b", "2"})},
      // Replicated only when it set every key, none of which existed: MSET per slot is the same.
      {{"MSETNX", "a", "1", "b", "2", "{a}c", "3"},
       {Forward{.slot = kSlotA, .command = {"MSET", "a", "1", "{a}c", "3"}},
        Forward{.slot = kSlotB, .command = {"MSET", "b", "2"}}}},
      // Valkey 9.1's MSETEX, replicated with its TTL as PXAT: whole on one slot; across slots
      // one per slot with its share of the pairs and the options, NX and XX left out.
      {{"MSETEX", "2", "a", "1", "{a}b", "2", "NX", "PXAT", "1795898139104"},
       ForwardTo(kSlotA, {"MSETEX", "2", "a", "1", "{a}b", "2", "NX", "PXAT", "1795898139104"})},
      {{"MSETEX", "3", "a", "1", "b", "2", "{a}c", "3", "NX", "PXAT", "1795898139104"},
       {Forward{.slot = kSlotA,
                .command = {"MSETEX", "2", "a", "1", "{a}c", "3", "PXAT", "1795898139104"}},
        Forward{.slot = kSlotB, .command = {"MSETEX", "1", "b", "2", "PXAT", "1795898139104"}}}},
      {{"MSETEX", "2", "a", "1", "b", "2"},
       {Forward{.slot = kSlotA, .command = {"MSETEX", "1", "a", "1"}},
        Forward{.slot = kSlotB, .command = {"MSETEX", "1", "b", "2"}}}},
      {{"SUNIONSTORE", "dst", "a", "b"},
       {CrossSlot{.command = {"SUNIONSTORE", "dst", "a", "b"}, .keys = {"dst", "a", "b"}}}},
      {{"PFMERGE", "{t}d", "{t}a", "{t}b"}, ForwardTo(kSlotT, {"PFMERGE", "{t}d", "{t}a", "{t}b"})},
      {{"BITOP", "AND", "dst", "a"},
       {CrossSlot{.command = {"BITOP", "AND", "dst", "a"}, .keys = {"dst", "a"}}}},
      {{"BITOP", "NOT", "{t}d", "{t}a"}, ForwardTo(kSlotT, {"BITOP", "NOT", "{t}d", "{t}a"})},
      // numkeys: the keys are counted, WEIGHTS and AGGREGATE are not keys.
      {{"ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b", "WEIGHTS", "1", "2"},
       ForwardTo(kSlotT, {"ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b", "WEIGHTS", "1", "2"})},
      {{"ZINTERSTORE", "dst", "1", "a", "AGGREGATE", "MAX"},
       {CrossSlot{.command = {"ZINTERSTORE", "dst", "1", "a", "AGGREGATE", "MAX"},
                  .keys = {"dst", "a"}}}},
      {{"LMPOP", "2", "{t}a", "{t}b", "LEFT"},
       ForwardTo(kSlotT, {"LMPOP", "2", "{t}a", "{t}b", "LEFT"})},
      {{"ZMPOP", "1", "a", "MIN", "COUNT", "2"},
       ForwardTo(kSlotA, {"ZMPOP", "1", "a", "MIN", "COUNT", "2"})},
      {{"EVAL", "return 1", "2", "{t}a", "{t}b", "arg"},
       ForwardTo(kSlotT, {"EVAL", "return 1", "2", "{t}a", "{t}b", "arg"})},
      // STORE names a key; a GET pattern spelled "store" does not.
      {{"SORT", "a", "GET", "store", "STORE", "dst"},
       {CrossSlot{.command = {"SORT", "a", "GET", "store", "STORE", "dst"}, .keys = {"a", "dst"}}}},
      {{"GEORADIUS", "{t}a", "15", "37", "200", "km", "COUNT", "5", "STOREDIST", "{t}d"},
       ForwardTo(kSlotT, {"GEORADIUS", "{t}a", "15", "37", "200", "km", "COUNT", "5", "STOREDIST",
                          "{t}d"})},
      {{"GEOSEARCHSTORE", "dst", "a", "FROMMEMBER", "m", "BYRADIUS", "1", "km"},
       {CrossSlot{
           .command = {"GEOSEARCHSTORE", "dst", "a", "FROMMEMBER", "m", "BYRADIUS", "1", "km"},
           .keys = {"dst", "a"}}}},
  };
  ReplPlanner planner;
  for (const RouteCase& c : cases) {
    EXPECT_EQ(planner.Plan(c.command).actions, c.actions) << c.command[0];
  }
  EXPECT_EQ(planner.counts().cross_slot, 7);
  EXPECT_EQ(planner.counts().split, 3);  // MSETNX and two MSETEX
}

// Across slots, what cannot be co-located on one primary is a problem naming the fix.
TEST(ReplPlannerTest, KeysAcrossSlotsThatCannotBeColocatedAreProblems) {
  const RouteCase cases[] = {
      {{"EVAL", "return 1", "2", "a", "b"},
       ProblemOf("EVAL: keys in different slots (a, b), and a script may touch keys it does not "
                 "declare; give such keys one hash tag on the source")},
      {{"LMPOP", "2", "a", "b", "LEFT"},
       ProblemOf("LMPOP: keys in different slots (a, b), and Redis 7+ and Valkey replicate it in "
                 "other forms; give such keys one hash tag on the source")},
      {{"BLMOVE", "a", "b", "LEFT", "RIGHT", "0"},
       ProblemOf("BLMOVE: keys in different slots (a, b), and Redis 7+ and Valkey replicate it in "
                 "other forms; give such keys one hash tag on the source")},
      {{"SORT", "a", "BY", "w_*", "STORE", "dst"},
       ProblemOf("SORT: keys in different slots (a, dst), and its BY/GET pattern names keys the "
                 "cluster holds elsewhere; give such keys one hash tag on the source")},
  };
  ReplPlanner planner;
  for (const RouteCase& c : cases) {
    EXPECT_EQ(planner.Plan(c.command).actions, c.actions) << c.command[0];
  }
  EXPECT_EQ(planner.counts().problems, std::ssize(cases));
  EXPECT_EQ(planner.counts().cross_slot, 0);
}

TEST(ReplPlannerTest, ServerWideWritesFanOutOrAreProblems) {
  const RouteCase cases[] = {
      {{"FLUSHALL", "ASYNC"}, {FanOut{.command = {"FLUSHALL", "ASYNC"}}}},
      {{"FLUSHDB"}, {FanOut{.command = {"FLUSHDB"}}}},
      {{"FUNCTION", "LOAD", "#!lua name=lib\n..."},
       {FanOut{.command = {"FUNCTION", "LOAD", "#!lua name=lib\n..."}}}},
      {{"function", "delete", "lib"}, {FanOut{.command = {"function", "delete", "lib"}}}},
      {{"SCRIPT", "LOAD", "return 1"}, {FanOut{.command = {"SCRIPT", "LOAD", "return 1"}}}},
      {{"FUNCTION", "STATS"},
       ProblemOf("FUNCTION: subcommand 'STATS' is not one shardctl mirrors (only LOAD DELETE "
                 "FLUSH RESTORE)")},
      {{"SCRIPT"},
       ProblemOf("SCRIPT: subcommand '' is not one shardctl mirrors (only LOAD FLUSH)")},
      {{"SWAPDB", "0", "1"}, ProblemOf("SWAPDB: swaps two dbs; a cluster has only db 0")},
      {{"MOVE", "a", "1"}, ProblemOf("MOVE: moves a key to another db; a cluster has only db 0")},
      {{"COPY", "a", "b", "DB", "2"},
       ProblemOf("COPY: copies to another db; a cluster has only db 0")},
  };
  for (const RouteCase& c : cases) EXPECT_EQ(PlanOne(c.command), c.actions) << c.command[0];
}

TEST(ReplPlannerTest, WritesOutsideDbZeroAreProblems) {
  ReplPlanner planner;
  EXPECT_TRUE(planner.Plan({"SELECT", "3"}).actions.empty());
  EXPECT_EQ(planner.db(), 3);
  EXPECT_EQ(planner.Plan({"SET", "a", "1"}).actions,
            ProblemOf("SET: the source writes to db 3; a cluster has only db 0"));
  EXPECT_EQ(planner.Plan({"DEL", "a", "b"}).actions,
            ProblemOf("DEL: the source writes to db 3; a cluster has only db 0"));
  EXPECT_EQ(planner.Plan({"FLUSHDB"}).actions,
            ProblemOf("FLUSHDB: the source writes to db 3; a cluster has only db 0"));
  // FLUSHALL empties db 0 as well, from whatever db.
  EXPECT_EQ(planner.Plan({"FLUSHALL"}).actions, (std::vector<ReplAction>{FanOut{{"FLUSHALL"}}}));
  EXPECT_TRUE(planner.Plan({"PING"}).actions.empty());
  EXPECT_TRUE(planner.Plan({"SELECT", "0"}).actions.empty());
  EXPECT_EQ(planner.Plan({"SET", "a", "1"}).actions, ForwardTo(kSlotA, {"SET", "a", "1"}));
  EXPECT_EQ(planner.Plan({"SELECT", "x"}).actions, ProblemOf("SELECT: expected one db number"));
  EXPECT_EQ(planner.db(), 0);
  EXPECT_EQ(planner.counts().problems, 4);
}

TEST(ReplPlannerTest, UnknownCommandsAndBadArgumentsAreProblems) {
  const RouteCase cases[] = {
      {{"json.set", "a", "$", "1"},
       ProblemOf("JSON.SET: unknown command; shardctl does not know where its keys are")},
      {{"BLPOP", "a", "0"},
       ProblemOf("BLPOP: unknown command; shardctl does not know where its keys are")},
      {{"\x01\xff"},
       ProblemOf("\\x01\\xff: unknown command; shardctl does not know where its "
                 "keys are")},
      {{"SET"}, ProblemOf("SET: wrong number of arguments (0) for its keys")},
      {{"MSET", "a", "1", "b"}, ProblemOf("MSET: wrong number of arguments (3) for its keys")},
      {{"RENAME", "a"}, ProblemOf("RENAME: wrong number of arguments (1) for its keys")},
      {{"ZUNIONSTORE", "d", "3", "a", "b"},
       ProblemOf("ZUNIONSTORE: numkeys '3' is not a count of the keys that follow it")},
      {{"LMPOP", "-1", "a"},
       ProblemOf("LMPOP: numkeys '-1' is not a count of the keys that "
                 "follow it")},
      {{"MSETEX", "2", "a", "1", "b"},
       ProblemOf("MSETEX: numkeys '2' is not a count of the keys that follow it")},
      {{"EVAL", "return 1"}, ProblemOf("EVAL: numkeys is missing")},
      {{"EVAL", "return 1", "0"}, ProblemOf("EVAL: no keys, so no slot to send it to")},
      {{"SORT", "a", "STORE"}, ProblemOf("SORT: STORE is not followed by a key")},
  };
  ReplPlanner planner;
  for (const RouteCase& c : cases) {
    EXPECT_EQ(planner.Plan(c.command).actions, c.actions) << c.command[0];
  }
  EXPECT_EQ(planner.counts().problems, std::ssize(cases));
}

TEST(ReplPlannerTest, TransactionInOneSlotIsForwardedWhole) {
  ReplPlanner planner;
  EXPECT_TRUE(planner.Plan({"MULTI"}).actions.empty());
  EXPECT_TRUE(planner.in_transaction());
  EXPECT_TRUE(planner.Plan({"SET", "{u}a", "1"}).actions.empty());
  EXPECT_TRUE(planner.Plan({"MSET", "{u}b", "2", "u", "3"}).actions.empty());
  EXPECT_TRUE(planner.Plan({"PING"}).actions.empty());
  const ReplPlan plan = planner.Plan({"EXEC"});
  EXPECT_FALSE(planner.in_transaction());
  EXPECT_FALSE(plan.non_atomic);
  EXPECT_EQ(
      plan.actions,
      (std::vector<ReplAction>{ForwardTransaction{
          .slot = kSlotU, .commands = {{"SET", "{u}a", "1"}, {"MSET", "{u}b", "2", "u", "3"}}}}));
  EXPECT_EQ(planner.counts().transactions, 1);
  EXPECT_EQ(planner.counts().non_atomic_transactions, 0);
}

TEST(ReplPlannerTest, TransactionAcrossSlotsIsAppliedCommandByCommand) {
  ReplPlanner planner;
  for (ReplArgs command : std::vector<ReplArgs>{
           {"MULTI"}, {"SET", "a", "1"}, {"DEL", "b", "c"}, {"RENAME", "a", "dst"}, {"FLUSHALL"}}) {
    EXPECT_TRUE(planner.Plan(command).actions.empty()) << command[0];
  }
  const ReplPlan plan = planner.Plan({"EXEC"});
  EXPECT_TRUE(plan.non_atomic);
  EXPECT_EQ(plan.actions, (std::vector<ReplAction>{
                              Forward{.slot = kSlotA, .command = {"SET", "a", "1"}},
                              Forward{.slot = kSlotB, .command = {"DEL", "b"}},
                              Forward{.slot = kSlotC, .command = {"DEL", "c"}},
                              CrossSlot{.command = {"RENAME", "a", "dst"}, .keys = {"a", "dst"}},
                              FanOut{.command = {"FLUSHALL"}},
                          }));
  EXPECT_EQ(planner.counts().non_atomic_transactions, 1);
  EXPECT_EQ(planner.counts().cross_slot, 1);
  EXPECT_EQ(planner.counts().split, 1);
}

// A script's effects may switch db inside its transaction: each command is judged in its own db.
TEST(ReplPlannerTest, SelectInsideATransactionAppliesToTheCommandsAfterIt) {
  ReplPlanner planner;
  for (ReplArgs command : std::vector<ReplArgs>{
           {"MULTI"}, {"SET", "a", "1"}, {"SELECT", "1"}, {"SET", "a", "2"}, {"SELECT", "0"}}) {
    EXPECT_TRUE(planner.Plan(command).actions.empty()) << command[0];
  }
  const ReplPlan plan = planner.Plan({"EXEC"});
  EXPECT_TRUE(plan.non_atomic);
  EXPECT_EQ(plan.actions, (std::vector<ReplAction>{
                              Forward{.slot = kSlotA, .command = {"SET", "a", "1"}},
                              Problem{"SET: the source writes to db 1; a cluster has only db 0"},
                          }));
  EXPECT_EQ(planner.db(), 0);
}

TEST(ReplPlannerTest, TransactionMarkersOutOfPlaceAreProblemsAndDiscardDropsTheQueue) {
  ReplPlanner planner;
  EXPECT_EQ(planner.Plan({"EXEC"}).actions, ProblemOf("EXEC: without MULTI"));
  planner.Plan({"MULTI"});
  EXPECT_EQ(planner.Plan({"MULTI"}).actions, ProblemOf("MULTI: inside a transaction already"));
  planner.Plan({"SET", "a", "1"});
  EXPECT_TRUE(planner.Plan({"DISCARD"}).actions.empty());
  EXPECT_FALSE(planner.in_transaction());
  EXPECT_EQ(planner.Plan({"SET", "b", "1"}).actions, ForwardTo(kSlotB, {"SET", "b", "1"}));
  // An empty transaction sends nothing.
  planner.Plan({"MULTI"});
  EXPECT_TRUE(planner.Plan({"EXEC"}).actions.empty());
}

// The write commands of Redis 7.0, Valkey 9 and Redis 8.2 that reach a replica, as replicated.
TEST(ReplCommandTableTest, KnowsTheWritesPrimariesReplicate) {
  for (const char* name : {"SET",         "SETRANGE",
                           "APPEND",      "INCRBY",
                           "DECR",        "GETDEL",
                           "GETEX",       "SETBIT",
                           "BITFIELD",    "BITOP",
                           "MSET",        "MSETNX",
                           "MSETEX",      "DEL",
                           "UNLINK",      "PEXPIREAT",
                           "PERSIST",     "RESTORE",
                           "RENAME",      "RENAMENX",
                           "COPY",        "HSET",
                           "HDEL",        "HINCRBYFLOAT",
                           "HSETEX",      "HGETDEL",
                           "HPEXPIREAT",  "HPERSIST",
                           "LPUSH",       "LPOP",
                           "LSET",        "LTRIM",
                           "LREM",        "LINSERT",
                           "LMOVE",       "RPOPLPUSH",
                           "SADD",        "SREM",
                           "SMOVE",       "SINTERSTORE",
                           "SDIFFSTORE",  "ZADD",
                           "ZINCRBY",     "ZREM",
                           "ZPOPMIN",     "ZREMRANGEBYSCORE",
                           "ZUNIONSTORE", "ZRANGESTORE",
                           "XADD",        "XTRIM",
                           "XDEL",        "XGROUP",
                           "XCLAIM",      "XAUTOCLAIM",
                           "XACK",        "XSETID",
                           "PFADD",       "PFMERGE",
                           "GEOADD",      "GEOSEARCHSTORE",
                           "DELIFEQ",     "VADD",
                           "FLUSHALL",    "FUNCTION"}) {
    const ReplCommandInfo* info = FindReplCommand(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->name, name);
  }
  EXPECT_EQ(FindReplCommand("xgroup")->keys.first, 2);
  EXPECT_EQ(FindReplCommand("GET"), nullptr);  // a read is never replicated
}

// Each entry can be found and routed: a keyed route says where its keys are, a refusal says why.
TEST(ReplCommandTableTest, EveryEntryIsFoundAndComplete) {
  for (const ReplCommandInfo& info : AllReplCommands()) {
    EXPECT_EQ(info.name, UpperCase(info.name));
    const std::string lower = LowerCaseForTest(info.name);
    EXPECT_EQ(FindReplCommand(lower), &info) << info.name << ": missing, or in the table twice";
    const bool keyed = info.route == ReplRoute::kSingleKey ||
                       info.route == ReplRoute::kIndependentKeys ||
                       info.route == ReplRoute::kKeysTogether;
    EXPECT_EQ(keyed, info.keys.first > 0 || info.keys.numkeys_at > 0) << info.name;
    EXPECT_EQ(info.route == ReplRoute::kRefused, !info.refusal.empty()) << info.name;
    if (info.route == ReplRoute::kSingleKey) {
      EXPECT_EQ(info.keys.last, info.keys.first) << info.name;
    }
  }
}

TEST(ReplCommandTableTest, KeyPositionsFollowEachRule) {
  const std::vector<std::string> zunion = {"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"};
  EXPECT_EQ(*ReplKeyPositions(*FindReplCommand("ZUNIONSTORE"), zunion),
            (std::vector<size_t>{1, 3, 4}));
  const std::vector<std::string> mset = {"MSET", "a", "1", "b", "2"};
  EXPECT_EQ(*ReplKeyPositions(*FindReplCommand("MSET"), mset), (std::vector<size_t>{1, 3}));
  const std::vector<std::string> sort = {"SORT", "a", "LIMIT", "0", "5", "BY", "w_*", "STORE", "d"};
  EXPECT_EQ(*ReplKeyPositions(*FindReplCommand("SORT"), sort), (std::vector<size_t>{1, 8}));
  const std::vector<std::string> bitop = {"BITOP", "OR", "d", "a", "b"};
  EXPECT_EQ(*ReplKeyPositions(*FindReplCommand("BITOP"), bitop), (std::vector<size_t>{2, 3, 4}));
}

}  // namespace
}  // namespace shardctl::common
