// Pub/sub through shardproxy: real 3-shard cluster, real proxy with one thread (so every client
// shares the thread's subscriber connections), hiredis, raw sockets, redis-cli and redis-py.
#include <signal.h>

#include "common/slots.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using Clock = std::chrono::steady_clock;

class ProxyPubSubTest : public ProxyTest {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    flags.insert(flags.end(), {"--threads", "1"});
    UpWithProxy(flags);
  }

  std::unique_ptr<RedisConnection> Connect() {
    std::string error;
    auto connection = RedisConnection::Open(proxy_port(), &error);
    EXPECT_TRUE(connection) << error;
    return connection;
  }

  // Subscribers of `channel` over every shard (PUBSUB NUMSUB asked of each primary).
  long long NumSubOnShards(const std::string& channel, const std::string& kind = "NUMSUB") {
    long long total = 0;
    for (int shard = 0; shard < 3; ++shard) {
      auto reply = QueryRedis(shard_port(shard), {"PUBSUB", kind, channel});
      if (reply && reply->elements.size() == 2) total += reply->elements[1].integer;
    }
    return total;
  }
};

// The next push on `connection`, flattened: {"message", channel, payload}.
std::vector<std::string> NextPush(RedisConnection& connection) {
  std::vector<std::string> out;
  auto reply = connection.GetReply();
  if (reply) {
    for (const auto& element : reply->elements) out.push_back(element.text);
  }
  return out;
}

using Push = std::vector<std::string>;

// The next push that is not a "probe" (published while waiting for a re-subscription); empty
// when a read brings no message. Bounded: at most `limit` probes are skipped.
Push NextPushSkippingProbes(RedisConnection& connection, int limit = 400) {
  for (int i = 0; i < limit; ++i) {
    Push push = NextPush(connection);
    if (push.size() != 3 || push[2] != "probe") return push;
  }
  return {};
}

TEST_F(ProxyPubSubTest, ChannelsFanInFromEveryNodeOverOneSharedSubscription) {
  Start();
  auto first = Connect();
  auto second = Connect();
  ASSERT_TRUE(first && second);
  auto confirmed = first->Command({"SUBSCRIBE", "news", "sport"});
  ASSERT_TRUE(confirmed);
  EXPECT_EQ(confirmed->elements.size(), 3u);
  EXPECT_EQ(NextPush(*first), (Push{"subscribe", "sport", "2"}));
  ASSERT_TRUE(second->Command({"SUBSCRIBE", "news"}));
  ASSERT_TRUE(WaitUntil([&] { return NumSubOnShards("news") == 1; }, 5s))
      << "two clients of one proxy thread should share one subscription";

  auto publisher = Connect();
  ASSERT_TRUE(publisher);
  // (PUBLISH's count is the receiving node's own subscribers in Redis Cluster: not checked.)
  ASSERT_TRUE(publisher->Command({"PUBLISH", "news", "through-proxy"}));
  EXPECT_EQ(NextPush(*first), (Push{"message", "news", "through-proxy"}));
  EXPECT_EQ(NextPush(*second), (Push{"message", "news", "through-proxy"}));
  // Published straight at another node: the cluster bus brings it to the subscribed node.
  ASSERT_TRUE(QueryRedis(shard_port(2), {"PUBLISH", "news", "direct"}));
  EXPECT_EQ(NextPush(*first), (Push{"message", "news", "direct"}));
  EXPECT_EQ(NextPush(*second), (Push{"message", "news", "direct"}));

  // One leaves: the other still receives, and the shared subscription stays.
  auto left = first->Command({"UNSUBSCRIBE", "news"});
  ASSERT_TRUE(left);
  EXPECT_EQ(left->elements[2].integer, 1);  // "sport" is left
  ASSERT_TRUE(publisher->Command({"PUBLISH", "news", "after"}));
  EXPECT_EQ(NextPush(*second), (Push{"message", "news", "after"}));
  EXPECT_EQ(NumSubOnShards("news"), 1);
  second.reset();  // the last subscriber goes: the proxy unsubscribes at the cluster
  EXPECT_TRUE(WaitUntil([&] { return NumSubOnShards("news") == 0; }, 5s));
  EXPECT_EQ(NumSubOnShards("sport"), 1);
}

TEST_F(ProxyPubSubTest, PatternsAndResp2SubscribedMode) {
  Start();
  auto subscriber = Connect();
  ASSERT_TRUE(subscriber);
  ASSERT_TRUE(subscriber->Command({"PSUBSCRIBE", "alert:*"}));
  // Redis' RESP2 subscribed mode: only (un)subscribe, PING, QUIT, RESET.
  EXPECT_EQ(TextOf(subscriber->Command({"GET", "k"})),
            "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context");
  auto pong = subscriber->Command({"PING"});
  ASSERT_TRUE(pong);
  ASSERT_EQ(pong->elements.size(), 2u);
  EXPECT_EQ(pong->elements[0].text, "pong");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return IntegerOf(QueryRedis(proxy_port(), {"PUBSUB", "NUMPAT"})) == 1;
      },
      5s));
  ASSERT_TRUE(QueryRedis(proxy_port(), {"PUBLISH", "alert:disk", "full"}));
  EXPECT_EQ(NextPush(*subscriber), (Push{"pmessage", "alert:*", "alert:disk", "full"}));
  auto reset = subscriber->Command({"RESET"});
  ASSERT_TRUE(reset);
  EXPECT_EQ(reset->text, "RESET");
  EXPECT_EQ(TextOf(subscriber->Command({"SET", "k", "v"})), "OK") << "RESET left subscribed mode";
  EXPECT_TRUE(WaitUntil(
      [&] {
        return IntegerOf(QueryRedis(proxy_port(), {"PUBSUB", "NUMPAT"})) == 0;
      },
      5s));
}

// Every PUBLISH of one client leaves from the same primary: a message published on the node the
// subscriber link listens on can no longer overtake the one before it, still crossing the cluster
// bus from another node (the suite's "PUBLISH/PSUBSCRIBE basics" saw that).
TEST_F(ProxyPubSubTest, OneClientsMessagesArriveInTheOrderItPublishedThem) {
  Start();
  auto subscriber = Connect();
  auto publisher = Connect();
  ASSERT_TRUE(subscriber && publisher);
  ASSERT_TRUE(subscriber->Command({"PSUBSCRIBE", "order.*"}));
  constexpr int kMessages = 60;  // channels of every slot range: sent round robin, some overtook
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(IntegerOf(publisher->Command({"PUBLISH", "order." + std::to_string(i), "m"})), 1);
  }
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(NextPush(*subscriber),
              (Push{"pmessage", "order.*", "order." + std::to_string(i), "m"}));
  }
}

// Each node publishes the events of its own keys to its own subscribers only: the proxy hears
// them on every primary and hands each to the client's pattern or channel once.
TEST_F(ProxyPubSubTest, KeyspaceNotificationsReachSubscribersFromEveryShard) {
  Start();
  ASSERT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
  ASSERT_EQ(TextOf(QueryRedis(proxy_port(), {"CONFIG", "SET", "notify-keyspace-events", "KEA"})),
            "OK");
  auto patterns = Connect();
  auto channel = Connect();
  ASSERT_TRUE(patterns && channel);
  ASSERT_TRUE(patterns->Command({"PSUBSCRIBE", "__keyspace@0__:*"}));
  ASSERT_TRUE(channel->Command({"SUBSCRIBE", "__keyevent@0__:set"}));
  // PSUBSCRIBE was answered once the subscription was in place on every primary (as Redis
  // answers once it is), so an event right after it is not lost.
  for (int shard = 0; shard < 3; ++shard) {
    EXPECT_GE(IntegerOf(QueryRedis(shard_port(shard), {"PUBSUB", "NUMPAT"})), 2)
        << "shard " << shard << " has no event subscription yet";
  }
  std::vector<std::string> keys;
  for (int shard = 0; shard < 3; ++shard) keys.push_back(KeyOn(shard_port(shard), "event"));
  keys.push_back(keys[0]);  // again: a duplicate of an earlier event would come first
  for (const std::string& key : keys) {
    ASSERT_EQ(TextOf(QueryRedis(proxy_port(), {"SET", key, "v"})), "OK");
    EXPECT_EQ(NextPush(*patterns),
              (Push{"pmessage", "__keyspace@0__:*", "__keyspace@0__:" + key, "set"}));
    EXPECT_EQ(NextPush(*channel), (Push{"message", "__keyevent@0__:set", key}));
  }
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DEL", keys[0], keys[1], keys[2]})), 3);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"DBSIZE"})), 0);
  EXPECT_EQ(TextOf(QueryRedis(proxy_port(), {"CONFIG", "SET", "notify-keyspace-events", ""})),
            "OK");
}

// PUBLISH answers how many clients receive the message, as one Redis does, whichever proxy
// thread they are on (the nodes count only the proxy's shared connections).
TEST_F(ProxyPubSubTest, PublishCountsEveryReceivingClient) {
  UpWithProxy({"--threads", "2"});
  std::vector<std::unique_ptr<RedisConnection>> subscribers;
  for (int i = 0; i < 3; ++i) subscribers.push_back(Connect());
  ASSERT_TRUE(subscribers[0]->Command({"SUBSCRIBE", "count:chan"}));
  ASSERT_TRUE(subscribers[1]->Command({"SUBSCRIBE", "count:chan"}));
  ASSERT_TRUE(subscribers[2]->Command({"PSUBSCRIBE", "count:*"}));
  ASSERT_TRUE(subscribers[0]->Command({"PSUBSCRIBE", "count:*"}));
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"PUBLISH", "count:chan", "hello"})), 4);
  EXPECT_EQ(IntegerOf(QueryRedis(proxy_port(), {"PUBLISH", "count:other", "hello"})), 2);
  EXPECT_EQ(NextPush(*subscribers[1]), (Push{"message", "count:chan", "hello"}));
  subscribers.clear();  // their subscriptions go with them
  EXPECT_TRUE(WaitUntil(
      [&] {
        return IntegerOf(QueryRedis(proxy_port(), {"PUBLISH", "count:chan", "bye"})) == 0;
      },
      5s));
}

TEST_F(ProxyPubSubTest, ShardChannelsFollowTheirSlotToItsNewOwner) {
  Start();
  const std::string channel = KeyOn(shard_port(0), "orders:");
  const std::string other = KeyOn(shard_port(1), "orders:");
  auto subscriber = Connect();
  ASSERT_TRUE(subscriber);
  ASSERT_TRUE(subscriber->Command({"SSUBSCRIBE", channel}));
  auto second = subscriber->Command({"SSUBSCRIBE", other});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->elements[2].integer, 2);
  EXPECT_EQ(TextOf(subscriber->Command({"SSUBSCRIBE", channel, other})).rfind("CROSSSLOT", 0), 0u);
  ASSERT_TRUE(WaitUntil([&] { return NumSubOnShards(channel, "SHARDNUMSUB") == 1; }, 5s));
  ASSERT_TRUE(QueryRedis(shard_port(0), {"SPUBLISH", channel, "one"}));
  EXPECT_EQ(NextPush(*subscriber), (Push{"smessage", channel, "one"}));
  ASSERT_TRUE(QueryRedis(proxy_port(), {"SPUBLISH", other, "two"}));
  EXPECT_EQ(NextPush(*subscriber), (Push{"smessage", other, "two"}));

  // Move the channel's (empty) slot from shard 0 to shard 2.
  const int slot = common::KeySlot(channel);
  auto target_id = QueryRedis(shard_port(2), {"CLUSTER", "MYID"});
  ASSERT_TRUE(target_id);
  for (int shard : {2, 0, 1}) {
    auto moved = QueryRedis(shard_port(shard),
                            {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", target_id->text});
    ASSERT_TRUE(moved && moved->text == "OK") << (moved ? moved->text : "no reply");
  }
  // The old owner drops the subscription; the proxy subscribes again at the new one.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return NumSubOnShards(channel, "SHARDNUMSUB") == 1 &&
               IntegerOf(QueryRedis(shard_port(2), {"SPUBLISH", channel, "probe"})) == 1;
      },
      10s, 100ms))
      << "the shard channel was not subscribed again at its new owner";
  // Drain probes, then a real message from the new owner arrives, and nothing was lost in order.
  ASSERT_TRUE(QueryRedis(shard_port(2), {"SPUBLISH", channel, "three"}));
  EXPECT_EQ(NextPushSkippingProbes(*subscriber), (Push{"smessage", channel, "three"}));
}

// The node holding the thread's subscriptions is killed: the proxy subscribes again (classic
// channels on another primary, the shard channel at its owner once it is back), and the same
// client connection receives again without doing anything.
TEST_F(ProxyPubSubTest, SubscriptionsComeBackAfterTheirNodeIsKilled) {
  Start();
  const std::string shard_channel = KeyOn(shard_port(0), "events:");
  auto subscriber = Connect();
  ASSERT_TRUE(subscriber);
  ASSERT_TRUE(subscriber->Command({"SUBSCRIBE", "news"}));
  ASSERT_TRUE(subscriber->Command({"SSUBSCRIBE", shard_channel}));
  ASSERT_TRUE(WaitUntil([&] { return NumSubOnShards("news") == 1; }, 5s));
  const pid_t victim = ShardPid(0);  // the first primary: where the classic link is
  ASSERT_GT(victim, 0);
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  // Classic channels: published from a live node until the proxy has subscribed elsewhere.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return IntegerOf(QueryRedis(shard_port(1), {"PUBLISH", "news", "probe"})) >= 0 &&
               NumSubOnShards("news") == 1;
      },
      10s, 100ms));
  ASSERT_TRUE(QueryRedis(shard_port(2), {"PUBLISH", "news", "after-kill"}));
  EXPECT_EQ(NextPushSkippingProbes(*subscriber), (Push{"message", "news", "after-kill"}))
      << "no message after the kill";
  // The shard channel: its owner is restarted by the supervisor and the proxy subscribes again.
  ASSERT_TRUE(WaitUntil(
      [&] {
        return IntegerOf(QueryRedis(shard_port(0), {"SPUBLISH", shard_channel, "probe"})) == 1;
      },
      20s, 200ms))
      << "the shard channel was not subscribed again on the restarted primary";
  ASSERT_TRUE(QueryRedis(shard_port(0), {"SPUBLISH", shard_channel, "back"}));
  EXPECT_EQ(NextPushSkippingProbes(*subscriber), (Push{"smessage", shard_channel, "back"}))
      << "no shard message after the restart";
}

TEST_F(ProxyPubSubTest, ASubscriberThatNeverReadsIsDisconnectedAtTheLimit) {
  Start({"--pubsub-buffer-limit", "64kb"});
  RawConnection stuck(proxy_port());
  ASSERT_TRUE(stuck.connected());
  ASSERT_TRUE(stuck.Send("*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nfeed\r\n"));  // and never reads again
  auto reader = Connect();
  ASSERT_TRUE(reader);
  ASSERT_TRUE(reader->Command({"SUBSCRIBE", "feed"}));
  ASSERT_TRUE(WaitUntil([&] { return NumSubOnShards("feed") == 1; }, 5s));
  auto publisher = Connect();
  ASSERT_TRUE(publisher);
  const std::string payload(16 * 1024, 'x');
  // Enough to fill the stuck client's socket buffers many times over; bounded in count.
  int published = 0;
  for (; published < 4000 && ProxyCounter("pubsub_slow_disconnects") == 0; ++published) {
    ASSERT_TRUE(publisher->Command({"PUBLISH", "feed", payload}));
    Push push = NextPush(*reader);  // the reading subscriber keeps up
    ASSERT_EQ(push.size(), 3u);
  }
  EXPECT_EQ(ProxyCounter("pubsub_slow_disconnects"), 1) << "after " << published << " messages";
  ASSERT_TRUE(publisher->Command({"PUBLISH", "feed", "last"}));
  EXPECT_EQ(NextPush(*reader), (Push{"message", "feed", "last"}));
}

TEST_F(ProxyPubSubTest, RedisCliSubscribeReceives) {
  Start();
  BackgroundCommand cli({"redis-cli", "-p", std::to_string(proxy_port()), "SUBSCRIBE", "cli:ch"},
                        scratch_dir() / "cli.out", scratch_dir() / "cli.err");
  ASSERT_TRUE(WaitUntil([&] { return NumSubOnShards("cli:ch") == 1; }, 5s));
  ASSERT_TRUE(QueryRedis(proxy_port(), {"PUBLISH", "cli:ch", "hello-cli"}));
  const bool received = WaitUntil(
      [&] {
        return ReadFileText(scratch_dir() / "cli.out").find("hello-cli") != std::string::npos;
      },
      5s);
  kill(cli.pid(), SIGTERM);
  cli.WaitForExit(5s);
  EXPECT_TRUE(received) << ReadFileText(scratch_dir() / "cli.out");
}

TEST_F(ProxyPubSubTest, RedisPyPubSub) {
  Start();
  for (int protocol : {3, 2}) {
    auto run = RunPythonScenario("pubsub", protocol);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
  }
}

}  // namespace
}  // namespace shardctl::integration
