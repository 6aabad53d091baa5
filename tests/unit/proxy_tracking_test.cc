// CLIENT TRACKING's own logic (proxy/session/tracking.h): the request as Redis parses it, the
// client's state as Redis keeps it, what a shard connection is sent, the frames invalidations
// become. The routing and the shards' part: tests/integration/proxy_tracking_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "proxy/session/tracking.h"

namespace shardctl::proxy {
namespace {

// Clients 1, 2, 7 and 9 are connected.
common::Result<TrackingRequest> Parse(std::vector<std::string_view> args) {
  return ParseTracking(args, [](uint64_t id) { return id == 1 || id == 2 || id == 7 || id == 9; });
}

std::string Resp(std::vector<std::string_view> args) {
  std::string out;
  common::AppendCommand(out, args);
  return out;
}

TEST(TrackingTest, ParsesEveryOptionAndRefusesAsRedisDoes) {
  auto on = Parse({"CLIENT", "TRACKING", "on", "REDIRECT", "7", "bcast", "PREFIX", "a:", "prefix",
                   "b:", "NOLOOP"});
  ASSERT_TRUE(on) << on.error().message();
  EXPECT_TRUE(on->on);
  EXPECT_EQ(on->redirect, 7u);
  EXPECT_TRUE(on->bcast && on->noloop && !on->optin && !on->optout);
  EXPECT_EQ(on->prefixes, (std::vector<std::string>{"a:", "b:"}));
  auto off = Parse({"CLIENT", "TRACKING", "OFF"});
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->on);
  const std::vector<std::pair<std::vector<std::string_view>, std::string>> refused = {
      {{"CLIENT", "TRACKING", "maybe"}, "ERR syntax error"},
      {{"CLIENT", "TRACKING", "on", "REDIRECT"}, "ERR syntax error"},
      {{"CLIENT", "TRACKING", "on", "PREFIX"}, "ERR syntax error"},
      {{"CLIENT", "TRACKING", "on", "sometimes"}, "ERR syntax error"},
      {{"CLIENT", "TRACKING", "on", "REDIRECT", "x"},
       "ERR value is not an integer or out of range"},
      {{"CLIENT", "TRACKING", "on", "REDIRECT", "1", "REDIRECT", "2"},
       "ERR A client can only redirect to a single other client"},
      // Redis looks the client up as it parses: before later options, for OFF too, and 0.
      {{"CLIENT", "TRACKING", "on", "REDIRECT", "3", "sometimes"},
       "ERR The client ID you want redirect to does not exist"},
      {{"CLIENT", "TRACKING", "off", "REDIRECT", "3"},
       "ERR The client ID you want redirect to does not exist"},
      {{"CLIENT", "TRACKING", "on", "REDIRECT", "0"},
       "ERR The client ID you want redirect to does not exist"},
  };
  for (const auto& [args, error] : refused) {
    auto parsed = Parse(args);
    ASSERT_FALSE(parsed) << args.back();
    EXPECT_EQ(parsed.error().message(), error);
  }
}

TEST(TrackingTest, StateFollowsRedisEnableAndDisable) {
  ClientTracking tracking;
  EXPECT_EQ(tracking.GetRedir(), -1);
  tracking.Enable(*Parse({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "foo"}));
  EXPECT_EQ(tracking.GetRedir(), 0);
  // Options are replaced, prefixes add up.
  tracking.Enable(*Parse({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "bar", "REDIRECT", "9"}));
  EXPECT_EQ(tracking.redirect(), 9u);
  EXPECT_EQ(tracking.ShardCommand(42), Resp({"CLIENT", "TRACKING", "ON", "REDIRECT", "42", "BCAST",
                                             "PREFIX", "bar", "PREFIX", "foo"}));
  tracking.MarkBroken();
  EXPECT_EQ(tracking.InfoReply(2),
            "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\nbcast\r\n$15\r\nbroken_redirect\r\n"
            "$8\r\nredirect\r\n:9\r\n$8\r\nprefixes\r\n*2\r\n$3\r\nbar\r\n$3\r\nfoo\r\n");
  tracking.Disable();
  EXPECT_EQ(tracking.InfoReply(3),
            "%3\r\n$5\r\nflags\r\n~1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n"
            "*0\r\n");
  // BCAST without a prefix tracks every key: the empty prefix, listed, never sent as PREFIX.
  tracking.Enable(*Parse({"CLIENT", "TRACKING", "ON", "BCAST"}));
  EXPECT_EQ(tracking.ShardCommand(0), Resp({"CLIENT", "TRACKING", "ON", "BCAST"}));
  EXPECT_NE(tracking.InfoReply(2).find("$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n"), std::string::npos);
}

TEST(TrackingTest, CachingNeedsTheMatchingMode) {
  ClientTracking tracking;
  EXPECT_EQ(tracking.ArmCaching("yes").error().message(),
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
            "or OPTOUT mode enabled");
  tracking.Enable(*Parse({"CLIENT", "TRACKING", "ON", "OPTIN"}));
  EXPECT_EQ(tracking.ArmCaching("no").error().message(),
            "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
  EXPECT_EQ(tracking.ArmCaching("perhaps").error().message(), "ERR syntax error");
  EXPECT_FALSE(tracking.caching_armed());
  ASSERT_TRUE(tracking.ArmCaching("YES"));
  EXPECT_TRUE(tracking.caching_armed());
  EXPECT_EQ(tracking.CachingCommand(), Resp({"CLIENT", "CACHING", "yes"}));
  EXPECT_NE(tracking.InfoReply(2).find("$11\r\ncaching-yes\r\n"), std::string::npos);
  tracking.DisarmCaching();
  EXPECT_EQ(tracking.InfoReply(2).find("caching-yes"), std::string::npos);
}

TEST(TrackingTest, InvalidationsAreFramedForTheClientsProtocol) {
  const std::string keys = "*2\r\n$1\r\na\r\n$1\r\nb\r\n";
  const std::string push = ">2\r\n$10\r\ninvalidate\r\n" + keys;
  ASSERT_EQ(InvalidationKeys(push), keys);
  EXPECT_FALSE(InvalidationKeys(">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"));
  EXPECT_EQ(InvalidationFrame(keys, 3), push);
  EXPECT_EQ(InvalidationFrame(keys, 2),
            "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n" + keys);
  // A flush: a null in the protocol's own form.
  EXPECT_TRUE(InvalidatesEverything("_\r\n"));
  EXPECT_FALSE(InvalidatesEverything(keys));
  EXPECT_EQ(InvalidationFrame("_\r\n", 3), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  EXPECT_EQ(InvalidationFrame("_\r\n", 2),
            "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n");
  EXPECT_EQ(RedirectBrokenFrame(12), ">2\r\n$21\r\ntracking-redir-broken\r\n:12\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
