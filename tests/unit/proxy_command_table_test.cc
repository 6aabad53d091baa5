#include <gtest/gtest.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "common/slots.h"
#include "proxy/commands/command_table.h"

namespace shardctl::proxy {
namespace {

using Args = std::vector<std::string_view>;

TEST(CommandTableTest, LooksUpNamesIgnoringCase) {
  EXPECT_EQ(LookupCommand("get").kind, RouteKind::kSingleKey);
  EXPECT_EQ(LookupCommand("GeT").kind, RouteKind::kSingleKey);
  EXPECT_EQ(LookupCommand("GET").name, "GET");
}

struct KindCase {
  std::string_view name;
  RouteKind kind;
  MergeKind merge;
};

class CommandKindTest : public testing::TestWithParam<KindCase> {};

TEST_P(CommandKindTest, HasItsRoutingKind) {
  const CommandInfo& info = LookupCommand(GetParam().name);
  EXPECT_EQ(info.kind, GetParam().kind) << GetParam().name;
  EXPECT_EQ(info.merge, GetParam().merge) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Commands, CommandKindTest,
    testing::Values(KindCase{"set", RouteKind::kSingleKey, MergeKind::kNone},
                    KindCase{"hgetall", RouteKind::kSingleKey, MergeKind::kNone},
                    KindCase{"mget", RouteKind::kSplitBySlot, MergeKind::kArrayByKey},
                    KindCase{"mset", RouteKind::kSplitBySlot, MergeKind::kAllOk},
                    KindCase{"del", RouteKind::kSplitBySlot, MergeKind::kSumIntegers},
                    KindCase{"unlink", RouteKind::kSplitBySlot, MergeKind::kSumIntegers},
                    KindCase{"exists", RouteKind::kSplitBySlot, MergeKind::kSumIntegers},
                    KindCase{"touch", RouteKind::kSplitBySlot, MergeKind::kSumIntegers},
                    KindCase{"msetnx", RouteKind::kOneSlot, MergeKind::kNone},
                    KindCase{"rename", RouteKind::kOneSlot, MergeKind::kNone},
                    KindCase{"eval", RouteKind::kOneSlot, MergeKind::kNone},
                    KindCase{"ping", RouteKind::kLocal, MergeKind::kNone},
                    KindCase{"hello", RouteKind::kLocal, MergeKind::kNone},
                    KindCase{"select", RouteKind::kLocal, MergeKind::kNone},
                    KindCase{"multi", RouteKind::kLocal, MergeKind::kNone},
                    KindCase{"watch", RouteKind::kLocal, MergeKind::kNone},
                    KindCase{"blpop", RouteKind::kBlocking, MergeKind::kNone},
                    KindCase{"xread", RouteKind::kOneSlot, MergeKind::kNone},
                    KindCase{"wait", RouteKind::kBlocking, MergeKind::kNone},
                    KindCase{"subscribe", RouteKind::kPubSub, MergeKind::kNone},
                    KindCase{"ssubscribe", RouteKind::kPubSub, MergeKind::kNone},
                    KindCase{"publish", RouteKind::kOneSlot, MergeKind::kNone},
                    KindCase{"spublish", RouteKind::kSingleKey, MergeKind::kNone},
                    KindCase{"pubsub", RouteKind::kFanOut, MergeKind::kNone},
                    KindCase{"nosuchcommand", RouteKind::kUnsupported, MergeKind::kNone}));

TEST(CommandTableTest, UnsupportedErrorsNameTheCommand) {
  const CommandInfo& monitor = LookupCommand("MoNiToR");
  ASSERT_EQ(monitor.kind, RouteKind::kUnsupported);
  EXPECT_EQ(monitor.UnsupportedError("MoNiToR"),
            "ERR command 'monitor' is not supported by shardproxy: " +
                std::string(monitor.unsupported_reason));
  EXPECT_FALSE(monitor.unsupported_reason.empty());
  const CommandInfo& unknown = LookupCommand("frobnicate");
  EXPECT_EQ(unknown.kind, RouteKind::kUnsupported);
  EXPECT_EQ(unknown.name, "frobnicate");
  EXPECT_EQ(unknown.UnsupportedError("frobnicate"), "ERR unknown command 'frobnicate'");
}

TEST(CommandTableTest, VeryLongNamesAreUnknown) {
  const std::string name(1000, 'x');
  EXPECT_EQ(LookupCommand(name).kind, RouteKind::kUnsupported);
}

TEST(ResolveKeysTest, SingleKey) {
  const Args args = {"get", "foo"};
  auto keys = ResolveKeys(LookupCommand("get"), args);
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->first, 1u);
  EXPECT_EQ(keys->count(), 1u);
}

TEST(ResolveKeysTest, MissingKeyIsWrongArgCount) {
  const Args args = {"GET"};
  auto keys = ResolveKeys(LookupCommand("GET"), args);
  ASSERT_FALSE(keys);
  EXPECT_EQ(keys.error().message(), "ERR wrong number of arguments for 'get' command");
}

TEST(ResolveKeysTest, MsetStepsOverValues) {
  const Args args = {"mset", "a", "1", "b", "2", "c", "3"};
  auto keys = ResolveKeys(LookupCommand("mset"), args);
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->first, 1u);
  EXPECT_EQ(keys->last, 5u);
  EXPECT_EQ(keys->step, 2u);
  EXPECT_EQ(keys->count(), 3u);
}

TEST(ResolveKeysTest, MsetWithoutLastValueIsWrongArgCount) {
  const Args args = {"mset", "a", "1", "b"};
  EXPECT_FALSE(ResolveKeys(LookupCommand("mset"), args));
}

TEST(ResolveKeysTest, EvalReadsNumkeys) {
  const Args args = {"eval", "return 1", "2", "k1", "k2", "arg"};
  auto keys = ResolveKeys(LookupCommand("eval"), args);
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->first, 3u);
  EXPECT_EQ(keys->last, 4u);
  const Args no_keys = {"eval", "return 1", "0"};
  ASSERT_TRUE(ResolveKeys(LookupCommand("eval"), no_keys));
  EXPECT_EQ(ResolveKeys(LookupCommand("eval"), no_keys)->count(), 0u);
  EXPECT_FALSE(ResolveKeys(LookupCommand("eval"), no_keys)->numkeys_refused);
}

// Valkey 9.1's MSETEX numkeys key value ... [options]: the keys are every other argument after
// numkeys, all in one slot (it is atomic), and a numkeys beyond the pairs is the engine's to
// refuse.
TEST(ResolveKeysTest, MsetexReadsNumkeysPairs) {
  const Args args = {"msetex", "2", "{u}a", "1", "{u}b", "2", "EX", "100"};
  auto keys = ResolveKeys(LookupCommand("msetex"), args);
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->first, 2u);
  EXPECT_EQ(keys->last, 4u);
  EXPECT_EQ(keys->step, 2u);
  EXPECT_EQ(keys->count(), 2u);
  EXPECT_EQ(RequestSlot(LookupCommand("msetex"), args).value(), common::KeySlot("u"));
  const Args across = {"msetex", "2", "foo", "1", "bar", "2"};
  EXPECT_FALSE(RequestSlot(LookupCommand("msetex"), across));
  const Args too_many = {"msetex", "3", "a", "1", "b", "2"};
  EXPECT_TRUE(ResolveKeys(LookupCommand("msetex"), too_many)->numkeys_refused);
}

// The commands Redis 8.2 and Valkey 9.1 added on one key route by it (they were "unknown").
TEST(CommandTableTest, NewerEnginesKeyedCommandsRouteByTheirKey) {
  for (std::string_view name : {"hexpire", "httl", "hpersist", "hgetex", "hsetex", "hgetdel",
                                "delifeq", "vadd", "vsim", "xackdel", "xdelex"}) {
    const CommandInfo& info = LookupCommand(name);
    EXPECT_EQ(info.kind, RouteKind::kSingleKey) << name;
    const Args args = {name, "{h}key", "x", "y"};
    EXPECT_EQ(RequestSlot(info, args).value(), common::KeySlot("h")) << name;
  }
  EXPECT_TRUE(LookupCommand("httl").read_only);
  EXPECT_FALSE(LookupCommand("hexpire").read_only);
  EXPECT_EQ(LookupCommand("waitaof").kind, RouteKind::kUnsupported);
  EXPECT_NE(LookupCommand("waitaof").UnsupportedError("waitaof").find("not supported"),
            std::string::npos);
}

// What Redis refuses goes to any node, for its own error text: no keys, no error here.
TEST(ResolveKeysTest, RefusedNumkeysLeavesNoKeys) {
  const std::vector<Args> refused = {
      {"eval", "return 1", "3", "k1"}, {"eval", "return 1", "x", "k1"},
      {"eval", "return 1", "-1"},      {"lmpop", "1"},
      {"lmpop", "a", "l", "LEFT"},     {"sintercard", "2", "s"},
      {"zunionstore", "d", "-1", "z"}};
  for (const Args& args : refused) {
    const CommandInfo& info = LookupCommand(args[0]);
    auto keys = ResolveKeys(info, args);
    ASSERT_TRUE(keys) << args[0];
    EXPECT_TRUE(keys->numkeys_refused) << args[0];
    EXPECT_EQ(keys->count(), 0u) << args[0];
    EXPECT_FALSE(KeyArgumentPositions(args)) << args[0];
  }
  // ZUNIONSTORE still goes where its destination lives.
  const Args store = {"zunionstore", "{d}x", "-1", "z"};
  EXPECT_EQ(RequestSlot(LookupCommand("zunionstore"), store).value(), common::KeySlot("d"));
  const Args lmpop = {"lmpop", "a", "l", "LEFT"};
  EXPECT_EQ(RequestSlot(LookupCommand("lmpop"), lmpop).value(), -1);
}

TEST(KeyArgumentPositionsTest, SortStoreIsAKeyTheLastOneCounts) {
  auto keys = [](const Args& args) {
    auto positions = KeyArgumentPositions(args);
    std::vector<std::string_view> names;
    if (!positions) return names;
    for (size_t at : *positions) names.push_back(args[at]);
    return names;
  };
  EXPECT_EQ(keys({"sort", "abc", "store", "def"}), (Args{"abc", "def"}));
  EXPECT_EQ(keys({"sort", "abc", "store", "invalid", "store", "stillbad", "STORE", "def"}),
            (Args{"abc", "def"}));
  EXPECT_EQ(keys({"sort", "abc", "get", "store", "limit", "0", "1"}), (Args{"abc"}));
  EXPECT_EQ(keys({"sort_ro", "abc"}), (Args{"abc"}));
  EXPECT_EQ(keys({"pfdebug", "getreg", "hll"}), (Args{"hll"}));
  EXPECT_NE(LookupCommand("PFSELFTEST").kind, RouteKind::kUnsupported);
}

// Redis' own texts (eval.c, functions.c) for a numkeys the proxy refuses before any shard.
// The numkeys Redis refuses in its own words (the suite's "illegal argument" tests): no keys
// here, so a primary answers; too few arguments after a valid numkeys still route by the key,
// and its primary answers "wrong number of arguments".
TEST(ResolveKeysTest, NumkeysRedisRefusesIsLeftToAPrimary) {
  auto refused = [](const Args& args) {
    auto keys = ResolveKeys(LookupCommand(args[0]), args);
    return keys && keys->numkeys_refused && keys->count() == 0;
  };
  EXPECT_TRUE(refused({"eval", "return 1", "-12"}));
  EXPECT_TRUE(refused({"evalsha_ro", "abc", "-1", "k"}));
  EXPECT_TRUE(refused({"fcall", "f", "-1", "k"}));
  EXPECT_TRUE(refused({"fcall_ro", "f", "bad_arg"}));
  EXPECT_TRUE(refused({"zunion", "-1", "k"}));
  for (std::string_view name : {"lmpop", "zmpop", "sintercard"}) {
    EXPECT_TRUE(refused({name, "-1", "k", "LEFT"})) << name;
    EXPECT_TRUE(refused({name, "a", "k", "LEFT"})) << name;
  }
  EXPECT_TRUE(refused({"blmpop", "0", "a", "k", "LEFT"}));
  EXPECT_TRUE(refused({"fcall", "f", "10", "k"}));
  const Args short_lmpop = {"lmpop", "1", "k"};
  EXPECT_EQ(RequestSlot(LookupCommand("lmpop"), short_lmpop).value(), common::KeySlot("k"));
  const Args short_bzmpop = {"bzmpop", "0", "1", "k"};
  EXPECT_EQ(RequestSlot(LookupCommand("bzmpop"), short_bzmpop).value(), common::KeySlot("k"));
}

TEST(RequestSlotTest, SingleKeyUsesHashTags) {
  const Args args = {"set", "{user1000}.following", "x"};
  auto slot = RequestSlot(LookupCommand("set"), args);
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, 3443);
}

// RequestKeyedSlot() answers one-key commands without resolving their keys: for every command
// and argument count, the slot or the error must be what resolving the keys gives.
TEST(RequestSlotTest, EveryCommandAgreesWithItsResolvedKeys) {
  const std::vector<std::string_view> words = {"{t}a", "b{t}", "5", "c", "d", "STREAMS", "e", "f"};
  size_t checked = 0;
  for (const CommandInfo& info : AllCommands()) {
    for (size_t extra = 0; extra <= words.size(); ++extra) {
      Args args = {info.name};
      args.insert(args.end(), words.begin(), words.begin() + static_cast<std::ptrdiff_t>(extra));
      const auto keyed = RequestKeyedSlot(info, args);
      const auto keys = ResolveKeys(info, args);
      if (!keys.ok()) {
        ASSERT_FALSE(keyed.ok()) << info.name << " with " << extra << " arguments";
        EXPECT_EQ(keyed.error().message(), keys.error().message()) << info.name;
        continue;
      }
      if (!keyed.ok()) continue;  // CROSSSLOT among resolved keys
      if (keys->count() == 0 && !info.keys.dest_first) {
        EXPECT_EQ(keyed->slot, -1) << info.name << " with " << extra << " arguments";
        continue;
      }
      if (info.keys.dest_first) continue;  // its destination key counts too: tested above
      EXPECT_EQ(keyed->slot, common::KeySlot(args[keys->first]))
          << info.name << " with " << extra << " arguments";
      EXPECT_EQ(keyed->first_key, keys->first) << info.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 200u);  // the table's keyed commands, at several argument counts each
}

TEST(RequestSlotTest, OneSlotCommandAcceptsKeysOfOneSlot) {
  const Args args = {"msetnx", "{u}a", "1", "{u}b", "2"};
  auto slot = RequestSlot(LookupCommand("msetnx"), args);
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, common::KeySlot("u"));
}

TEST(RequestSlotTest, OneSlotCommandAcrossSlotsIsCrossslot) {
  const Args args = {"msetnx", "foo", "1", "bar", "2"};
  auto slot = RequestSlot(LookupCommand("msetnx"), args);
  ASSERT_FALSE(slot);
  EXPECT_EQ(slot.error().message(), "CROSSSLOT Keys in request don't hash to the same slot");
  const Args rename = {"rename", "foo", "bar"};
  EXPECT_FALSE(RequestSlot(LookupCommand("rename"), rename));
}

TEST(RequestSlotTest, KeylessIsMinusOne) {
  const Args args = {"eval", "return 1", "0"};
  auto slot = RequestSlot(LookupCommand("eval"), args);
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, -1);
}

}  // namespace
}  // namespace shardctl::proxy

namespace shardctl::proxy {
namespace {

TEST(CommandTableTest, BlockingCommandsFindTheirKeysBeforeTheTimeout) {
  const Args blpop = {"BLPOP", "{q}a", "{q}b", "5"};
  auto slot = RequestSlot(LookupCommand("blpop"), blpop);
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, common::KeySlot("q"));
  const Args cross = {"BRPOP", "a", "b", "0"};
  EXPECT_FALSE(RequestSlot(LookupCommand("brpop"), cross));
  const Args blmpop = {"BLMPOP", "0", "2", "{q}a", "{q}b", "LEFT"};
  auto mpop = RequestSlot(LookupCommand("blmpop"), blmpop);
  ASSERT_TRUE(mpop) << mpop.error().message();
  EXPECT_EQ(*mpop, common::KeySlot("q"));
  const Args blmove = {"BLMOVE", "{q}src", "{q}dst", "LEFT", "RIGHT", "1"};
  EXPECT_TRUE(RequestSlot(LookupCommand("blmove"), blmove));
}

TEST(CommandTableTest, StreamReadsFindTheirKeysAfterStreams) {
  const Args xread = {"XREAD", "COUNT", "2", "STREAMS", "{s}a", "{s}b", "0", "$"};
  auto keys = ResolveKeys(LookupCommand("xread"), xread);
  ASSERT_TRUE(keys) << keys.error().message();
  EXPECT_EQ(keys->first, 4u);
  EXPECT_EQ(keys->last, 5u);
  auto slot = RequestSlot(LookupCommand("xread"), xread);
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, common::KeySlot("s"));
  // A key named like the keyword is a key: only the first STREAMS counts.
  const Args group = {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "streams", ">"};
  auto group_slot = RequestSlot(LookupCommand("xreadgroup"), group);
  ASSERT_TRUE(group_slot) << group_slot.error().message();
  EXPECT_EQ(*group_slot, common::KeySlot("streams"));
  const Args cross = {"XREAD", "STREAMS", "a", "b", "0", "0"};
  EXPECT_EQ(RequestSlot(LookupCommand("xread"), cross).error().message(),
            "CROSSSLOT Keys in request don't hash to the same slot");
  // The errors redis-server 7.0.15 gives.
  const Args odd = {"xread", "streams", "a", "b", "0"};
  EXPECT_EQ(ResolveKeys(LookupCommand("xread"), odd).error().message(),
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
  const Args none = {"XREAD", "COUNT", "1", "X"};
  EXPECT_EQ(ResolveKeys(LookupCommand("xread"), none).error().message(), "ERR syntax error");
  const Args short_group = {"xreadgroup", "GROUP", "g", "c", "STREAMS", "a"};
  EXPECT_EQ(ResolveKeys(LookupCommand("xreadgroup"), short_group).error().message(),
            "ERR wrong number of arguments for 'xreadgroup' command");
}

TEST(CommandTableTest, StreamReadsBlockOnlyWithBlockBeforeStreams) {
  const CommandInfo& xread = LookupCommand("XREAD");
  EXPECT_TRUE(BlocksWithOption(xread, Args{"XREAD", "block", "0", "STREAMS", "k", "$"}));
  EXPECT_FALSE(BlocksWithOption(xread, Args{"XREAD", "COUNT", "1", "STREAMS", "k", "$"}));
  // "block" after STREAMS is a key or an id, not the option.
  EXPECT_FALSE(BlocksWithOption(xread, Args{"XREAD", "STREAMS", "block", "0"}));
  EXPECT_TRUE(
      BlocksWithOption(LookupCommand("xreadgroup"),
                       Args{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "10", "STREAMS", "k", ">"}));
  EXPECT_FALSE(BlocksWithOption(LookupCommand("BLPOP"), Args{"BLPOP", "k", "0"}));
}

TEST(CommandTableTest, ReadOnlyCommandsAreTheOnesAReplicaServes) {
  for (std::string_view name : {"get", "MGET", "hgetall", "zrange", "EXISTS", "evalsha_ro"}) {
    EXPECT_TRUE(LookupCommand(name).read_only) << name;
  }
  for (std::string_view name : {"SET", "incr", "DEL", "EVAL", "BLPOP", "XREAD", "PING"}) {
    EXPECT_FALSE(LookupCommand(name).read_only) << name;
  }
}

TEST(CommandTableTest, WatchKeysMustShareOneSlot) {
  const CommandInfo& watch = LookupCommand("watch");
  EXPECT_EQ(watch.kind, RouteKind::kLocal);
  auto slot = RequestSlot(watch, Args{"WATCH", "{u}a", "{u}b"});
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, common::KeySlot("u"));
  EXPECT_FALSE(RequestSlot(watch, Args{"WATCH", "a", "b"}));
  EXPECT_FALSE(RequestSlot(watch, Args{"WATCH"}));
  EXPECT_EQ(LookupCommand("wait").kind, RouteKind::kBlocking);
}

TEST(CommandTableTest, SubcommandKeysAreTheSecondArgumentWhenGiven) {
  for (std::string_view name : {"OBJECT", "xinfo", "XGROUP", "memory"}) {
    const CommandInfo& info = LookupCommand(name);
    EXPECT_EQ(info.kind, RouteKind::kSingleKey) << name;
    auto slot = RequestSlot(info, Args{name, "ENCODING", "{k}x"});
    ASSERT_TRUE(slot) << name;
    EXPECT_EQ(*slot, common::KeySlot("k")) << name;
    // OBJECT HELP, MEMORY STATS: no key, any shard answers.
    auto help = RequestSlot(info, Args{name, "HELP"});
    ASSERT_TRUE(help) << name;
    EXPECT_EQ(*help, -1) << name;
  }
}

TEST(CommandTableTest, NumkeysCommandsMustShareOneSlot) {
  for (std::string_view name : {"SINTERCARD", "lmpop", "ZMPOP", "zunion", "ZINTER", "ZDIFF"}) {
    const CommandInfo& info = LookupCommand(name);
    EXPECT_EQ(info.kind, RouteKind::kOneSlot) << name;
    auto slot = RequestSlot(info, Args{name, "2", "{t}a", "{t}b", "LEFT"});
    ASSERT_TRUE(slot) << name;
    EXPECT_EQ(*slot, common::KeySlot("t")) << name;
    EXPECT_FALSE(RequestSlot(info, Args{name, "2", "a", "b"})) << name;
  }
  // The destination counts too.
  const CommandInfo& store = LookupCommand("ZUNIONSTORE");
  auto slot = RequestSlot(store, Args{"ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b"});
  ASSERT_TRUE(slot);
  EXPECT_EQ(*slot, common::KeySlot("t"));
  EXPECT_EQ(RequestSlot(store, Args{"ZINTERSTORE", "d", "1", "{t}a"}).error().message(),
            "CROSSSLOT Keys in request don't hash to the same slot");
  auto lcs = RequestSlot(LookupCommand("lcs"), Args{"LCS", "{t}a", "{t}b"});
  ASSERT_TRUE(lcs);
  EXPECT_EQ(*lcs, common::KeySlot("t"));
}

TEST(CommandTableTest, GetKeysNamesEveryKeyPosition) {
  auto zstore = KeyArgumentPositions(Args{"ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"});
  ASSERT_TRUE(zstore);
  EXPECT_EQ(*zstore, (std::vector<size_t>{1, 3, 4}));
  auto mset = KeyArgumentPositions(Args{"mset", "a", "1", "b", "2"});
  ASSERT_TRUE(mset);
  EXPECT_EQ(*mset, (std::vector<size_t>{1, 3}));
  EXPECT_EQ(KeyArgumentPositions(Args{"nosuch", "a"}).error().message(),
            "ERR Invalid command specified");
  EXPECT_EQ(KeyArgumentPositions(Args{"PING"}).error().message(),
            "ERR The command has no key arguments");
  auto eval = KeyArgumentPositions(Args{"EVAL", "return 1", "0"});
  ASSERT_TRUE(eval);
  EXPECT_TRUE(eval->empty());
  EXPECT_EQ(KeyArgumentPositions(Args{"GET"}).error().message(),
            "ERR Invalid arguments specified for command");
}

}  // namespace
}  // namespace shardctl::proxy
