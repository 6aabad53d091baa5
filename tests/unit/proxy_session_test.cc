// The proxy's Session without sockets: commands go in as frames, what the session routes is
// recorded by a fake router and answered by the test, and the client's output is compared byte
// for byte. Covers ordering across shards, split and fan-out merges, transactions, WATCH, WAIT,
// blocking commands, pub/sub, AUTH, QUIT and the session's lifetime.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "common/slots.h"
#include "proxy/merge/pubsub_frames.h"
#include "proxy/session/session.h"
#include "tests/unit/proxy_fakes.h"

namespace shardctl::proxy {
namespace {

using namespace testing_fakes;

std::string Bulk(std::string_view text) {
  std::string frame;
  common::AppendBulk(frame, text);
  return frame;
}

std::string Frame(std::initializer_list<std::string_view> args) {
  std::string frame;
  common::AppendCommand(frame, std::vector<std::string_view>(args));
  return frame;
}

class SessionTest : public testing::Test {
 protected:
  SessionTest() : session_(router_, services_, link_, /*id=*/7, /*thread=*/1) {
    session_.set_peer("127.0.0.1:50000");
  }
  ~SessionTest() override {
    // Requests not answered yet are, as the worker would, so none leaks.
    while (SubRequest* request = router_.Take()) taken_.push_back(request);
    for (SubRequest* request : std::vector<SubRequest*>(taken_)) Answer(request, "+OK\r\n");
    session_.Close();  // frees what it still holds
    EXPECT_EQ(router_.made, router_.freed) << "a request was not given back";
  }

  void Send(std::initializer_list<std::string_view> args) {
    const std::string frame = Frame(args);
    auto parsed = common::ParseCommandArgs(frame);
    ASSERT_TRUE(parsed.ok());
    session_.HandleCommand(frame, *parsed);
  }
  // Takes the client's output so far.
  std::string Output() {
    std::string out;
    out.swap(session_.output());
    return out;
  }
  SubRequest* Routed() {
    SubRequest* request = router_.Take();
    EXPECT_NE(request, nullptr) << "nothing was routed";
    if (request != nullptr) taken_.push_back(request);
    return request;
  }
  void Answer(SubRequest* request, std::string_view frame) {
    std::erase(taken_, request);
    session_.OnReply(request, frame);
  }

  FakeRouter router_;
  FakeServices services_;
  FakeClientLink link_;
  Session session_;
  std::vector<SubRequest*> taken_;  // routed, taken by the test, not answered yet
};

// "b" hashes to slot 3300 (127.0.0.1:7000), "a" to slot 15495 (127.0.0.1:7001).
TEST_F(SessionTest, KeysOfTheFixtureLiveOnDifferentPrimaries) {
  EXPECT_EQ(common::KeySlot("b"), 3300);
  EXPECT_EQ(common::KeySlot("a"), 15495);
}

TEST_F(SessionTest, RepliesComeBackInTheClientsOrderWhateverOrderShardsAnswer) {
  Send({"GET", "a"});
  Send({"GET", "b"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_EQ(first->slot, 15495);
  EXPECT_EQ(second->slot, 3300);
  EXPECT_EQ(first->request, Frame({"GET", "a"}));  // forwarded as the client sent it
  Answer(second, "$1\r\nB\r\n");
  EXPECT_EQ(Output(), "");  // the older reply is still missing
  Answer(first, "$1\r\nA\r\n");
  EXPECT_EQ(Output(), "$1\r\nA\r\n$1\r\nB\r\n");
  EXPECT_EQ(session_.inflight(), 0u);
}

TEST_F(SessionTest, LocalCommandsAreAnsweredInLineBehindPendingReplies) {
  Send({"GET", "a"});
  Send({"PING"});
  EXPECT_EQ(Output(), "");
  Answer(Routed(), "$-1\r\n");
  EXPECT_EQ(Output(), "$-1\r\n+PONG\r\n");
  Send({"ECHO", "hi"});
  EXPECT_EQ(Output(), "$2\r\nhi\r\n");
}

TEST_F(SessionTest, HelloThreeSwitchesTheProtocolOfLaterRequests) {
  Send({"HELLO", "3"});
  const std::string hello = Output();
  EXPECT_TRUE(hello.starts_with("%8\r\n")) << hello;
  EXPECT_NE(hello.find("7.0.15"), std::string::npos);
  EXPECT_EQ(session_.protocol(), 3);
  Send({"GET", "a"});
  EXPECT_EQ(Routed()->protocol, 3);
}

TEST_F(SessionTest, MgetAcrossSlotsIsSplitAndMergedInKeyOrder) {
  Send({"MGET", "a", "b", "a"});
  SubRequest* one = Routed();
  SubRequest* two = Routed();
  EXPECT_EQ(router_.Take(), nullptr);  // one part per slot, not per key
  SubRequest* for_a = one->slot == 15495 ? one : two;
  SubRequest* for_b = one->slot == 15495 ? two : one;
  EXPECT_EQ(for_a->request, Frame({"MGET", "a", "a"}));
  Answer(for_b, "*1\r\n$2\r\nvb\r\n");
  Answer(for_a, "*2\r\n$2\r\nva\r\n$2\r\nva\r\n");
  EXPECT_EQ(Output(), "*3\r\n$2\r\nva\r\n$2\r\nvb\r\n$2\r\nva\r\n");
}

TEST_F(SessionTest, DbsizeIsSummedOverEveryPrimary) {
  Send({"DBSIZE"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_EQ(first->port, 7000);
  EXPECT_EQ(second->port, 7001);
  Answer(second, ":5\r\n");
  Answer(first, ":3\r\n");
  EXPECT_EQ(Output(), ":8\r\n");
}

TEST_F(SessionTest, ScriptLoadIsRememberedOnceEveryShardHasIt) {
  const std::string sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
  const std::string reply = "$40\r\n" + sha + "\r\n";
  Send({"SCRIPT", "LOAD", "return 1"});
  Answer(Routed(), reply);
  Answer(Routed(), reply);
  EXPECT_EQ(Output(), reply);
  ASSERT_EQ(services_.scripts.count(sha), 1u);
  EXPECT_EQ(services_.scripts[sha], "return 1");
}

TEST_F(SessionTest, ScanCursorEncodesTheShard) {
  Send({"SCAN", "0"});
  SubRequest* scan = Routed();
  EXPECT_EQ(scan->port, 7000);
  Answer(scan, "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nb\r\n");
  // Shard 0 is done: the next cursor starts shard 1.
  EXPECT_EQ(Output(), "*2\r\n$1\r\n1\r\n*1\r\n$1\r\nb\r\n");
  Send({"SCAN", "1"});
  EXPECT_EQ(Routed()->port, 7001);
}

TEST_F(SessionTest, MultiExecIsQueuedAndSentAsOneBatch) {
  Send({"MULTI"});
  Send({"SET", "a", "1"});
  Send({"INCR", "a"});
  // Each write is first shown to its shard (a queue probe): +QUEUED is the shard's verdict.
  SubRequest* set_probe = Routed();
  EXPECT_TRUE(set_probe->mode.queue_probe);
  EXPECT_EQ(set_probe->request, Frame({"MULTI"}) + Frame({"SET", "a", "1"}) + Frame({"DISCARD"}));
  EXPECT_EQ(set_probe->skip_replies(), 2u);
  EXPECT_EQ(set_probe->slot, 15495);
  SubRequest* incr_probe = Routed();
  Answer(set_probe, "+OK\r\n");
  Answer(incr_probe, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n+QUEUED\r\n+QUEUED\r\n");
  EXPECT_EQ(router_.Take(), nullptr);
  Send({"EXEC"});
  SubRequest* batch = Routed();
  EXPECT_EQ(batch->request,
            Frame({"MULTI"}) + Frame({"SET", "a", "1"}) + Frame({"INCR", "a"}) + Frame({"EXEC"}));
  EXPECT_EQ(batch->slot, 15495);
  EXPECT_EQ(batch->skip_replies(), 3u);  // MULTI's +OK and two +QUEUED are dropped
  Answer(batch, "*2\r\n+OK\r\n:2\r\n");
  EXPECT_EQ(Output(), "*2\r\n+OK\r\n:2\r\n");
}

TEST_F(SessionTest, ATransactionAcrossSlotsIsAbortedAsRedisWould) {
  Send({"MULTI"});
  Send({"SET", "a", "1"});
  Send({"SET", "b", "1"});
  Send({"EXEC"});
  Answer(Routed(), "+OK\r\n");  // the first SET's queue probe
  EXPECT_EQ(Output(),
            "+OK\r\n+QUEUED\r\n-CROSSSLOT Keys in request don't hash to the same slot\r\n"
            "-EXECABORT Transaction discarded because of previous errors.\r\n");
  EXPECT_EQ(router_.Take(), nullptr);
}

// Redis answers a nested MULTI or a WATCH inside MULTI with an error and the transaction goes on;
// Valkey 8 and later refuse them as commands not allowed in a transaction, and EXEC aborts.
TEST_F(SessionTest, ANestedMultiAbortsTheTransactionOnValkeyOnly) {
  Send({"MULTI"});
  Send({"MULTI"});
  Send({"WATCH", "a"});
  EXPECT_EQ(Output(),
            "+OK\r\n-ERR MULTI calls can not be nested\r\n"
            "-ERR WATCH inside MULTI is not allowed\r\n");
  Send({"DISCARD"});
  EXPECT_EQ(Output(), "+OK\r\n");

  services_.engine = {.name = "valkey", .version = "9.1.2"};
  Send({"MULTI"});
  Send({"MULTI"});
  Send({"WATCH", "a"});
  Send({"EXEC"});
  EXPECT_EQ(Output(),
            "+OK\r\n-ERR Command 'multi' not allowed inside a transaction\r\n"
            "-ERR Command 'watch' not allowed inside a transaction\r\n"
            "-EXECABORT Transaction discarded because of previous errors.\r\n");
  EXPECT_EQ(router_.Take(), nullptr);

  services_.engine = {.name = "valkey", .version = "8.1.1"};  // the rule, in 8's words
  Send({"MULTI"});
  Send({"MULTI"});
  Send({"EXEC"});
  EXPECT_EQ(Output(),
            "+OK\r\n-ERR Command not allowed inside a transaction\r\n"
            "-EXECABORT Transaction discarded because of previous errors.\r\n");
}

TEST_F(SessionTest, HelloNamesTheEngineBehindTheProxy) {
  services_.engine = {.name = "valkey", .version = "9.1.2"};
  Send({"HELLO", "2"});
  const std::string hello = Output();
  EXPECT_NE(hello.find("$6\r\nserver\r\n$6\r\nvalkey\r\n$7\r\nversion\r\n$5\r\n9.1.2\r\n"),
            std::string::npos)
      << hello;
}

// Redis refuses a write at queue time when it is out of memory: the probe's refusal is the
// client's answer, EXEC waits for it (reading nothing more meanwhile) and aborts.
TEST_F(SessionTest, AQueueProbesRefusalIsTheClientsAnswerAndExecWaitsForIt) {
  Send({"MULTI"});
  Send({"SET", "a", "1"});
  Send({"GET", "a"});  // a read is not probed
  Send({"EXEC"});
  EXPECT_TRUE(session_.OverLimits()) << "nothing more is read while EXEC waits";
  SubRequest* probe = Routed();
  EXPECT_EQ(router_.Take(), nullptr) << "EXEC went out before the probe's answer";
  const std::string oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
  probe->Extras().hint = oom;
  Answer(probe, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n" + oom +
                          "+QUEUED\r\n-EXECABORT Transaction discarded because of previous "
                          "errors.\r\n");
  EXPECT_FALSE(session_.OverLimits());
  EXPECT_EQ(router_.Take(), nullptr);
  // A redirect says nothing about the command: queued, and EXEC goes out once it is in.
  Send({"MULTI"});
  Send({"SET", "a", "2"});
  Send({"EXEC"});
  probe = Routed();
  probe->Extras().hint = "-MOVED 15495 127.0.0.1:7002\r\n";
  Answer(probe, "+OK\r\n");
  SubRequest* batch = Routed();
  ASSERT_NE(batch, nullptr);
  EXPECT_FALSE(batch->mode.queue_probe);
  Answer(batch, "*1\r\n+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n");
}

TEST_F(SessionTest, WatchPinsItsSlotAndABrokenWatchMakesExecAnswerNull) {
  Send({"WATCH", "a"});
  SubRequest* watch = Routed();
  EXPECT_TRUE(watch->mode.pinned);
  EXPECT_TRUE(watch->mode.watched);
  PinnedLink* link = session_.PinnedLinkFor(*watch, "127.0.0.1", 7001);
  EXPECT_TRUE(router_.links.back()->watched);
  Answer(watch, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n");
  EXPECT_TRUE(router_.released.empty()) << "the connection holding the WATCH was given back";
  Send({"MULTI"});
  Send({"INCR", "a"});
  session_.ForgetPinned(link);  // the watch connection failed
  Send({"EXEC"});
  EXPECT_EQ(Output(), "+OK\r\n+QUEUED\r\n*-1\r\n");
  EXPECT_EQ(router_.Take(), nullptr);
}

TEST_F(SessionTest, ExecUnderWatchGoesOverTheWatchConnectionAndIsMarked) {
  Send({"WATCH", "a"});
  SubRequest* watch = Routed();
  session_.PinnedLinkFor(*watch, "127.0.0.1", 7001);
  Answer(watch, "+OK\r\n");
  Send({"MULTI"});
  Send({"GET", "a"});
  Send({"EXEC"});
  SubRequest* exec = Routed();
  EXPECT_TRUE(exec->mode.watched_exec);
  EXPECT_EQ(session_.PinnedLinkFor(*exec, "127.0.0.1", 7001), router_.links.back().get());
  EXPECT_EQ(router_.links.size(), 1u);
  Answer(exec, "*1\r\n$1\r\n1\r\n");
  EXPECT_EQ(router_.released.size(), 1u) << "the watch connection goes back after EXEC";
}

TEST_F(SessionTest, BlockingCommandsGoOverAPinnedConnectionThatIsGivenBack) {
  Send({"BLPOP", "a", "0"});
  SubRequest* pop = Routed();
  EXPECT_TRUE(pop->mode.pinned);
  EXPECT_TRUE(pop->mode.may_block);
  session_.PinnedLinkFor(*pop, "127.0.0.1", 7001);
  ASSERT_EQ(router_.links.size(), 1u);
  Answer(pop, "*-1\r\n");
  EXPECT_EQ(Output(), "*-1\r\n");
  ASSERT_EQ(router_.released.size(), 1u);
  EXPECT_EQ(router_.released[0], router_.links[0].get());
}

TEST_F(SessionTest, WaitReturnsTheFewestReplicasAnyShardCounted) {
  Send({"WAIT", "1", "100"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_TRUE(first->mode.pinned && first->mode.may_block);
  Answer(first, ":1\r\n");
  Answer(second, ":0\r\n");
  EXPECT_EQ(Output(), ":0\r\n");
  // From the first WAIT on, keyed commands stay on the client's own connections.
  Send({"SET", "a", "1"});
  EXPECT_TRUE(Routed()->mode.pinned);
}

TEST_F(SessionTest, AWaitAfterSharedWritesWaitsForThemAndCatchesUp) {
  Send({"SET", "a", "1"});
  SubRequest* set = Routed();
  Send({"WAIT", "1", "0"});
  EXPECT_EQ(router_.Take(), nullptr) << "WAIT went out before the write it must count";
  Answer(set, "+OK\r\n");
  SubRequest* wait = Routed();
  ASSERT_NE(wait, nullptr);
  ASSERT_TRUE(wait->extras);
  EXPECT_NE(wait->extras->preamble.find("__shardproxy:wait:"), std::string::npos);
}

TEST_F(SessionTest, ASlotsCommandsStayInOrderWhenTheyWouldGoToDifferentConnections) {
  Send({"SET", "a", "1"});
  Send({"SET", "a", "2"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  int old_owner = 0;
  int new_owner = 0;
  EXPECT_TRUE(session_.Admit(first, &old_owner));
  // The map changed: the second would go to the new owner while the first is in flight.
  EXPECT_FALSE(session_.Admit(second, &new_owner));
  EXPECT_EQ(router_.Take(), nullptr);
  Answer(first, "+OK\r\n");
  EXPECT_EQ(Routed(), second) << "the held request is routed again once the first is done";
  EXPECT_TRUE(session_.Admit(second, &new_owner));
  Answer(second, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n+OK\r\n");
}

TEST_F(SessionTest, SubscribeCountsAndResp2SubscribedMode) {
  Send({"SUBSCRIBE", "news", "sport"});
  EXPECT_EQ(Output(),
            "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"
            "*3\r\n$9\r\nsubscribe\r\n$5\r\nsport\r\n:2\r\n");
  EXPECT_EQ(router_.hub.Count(SubscriptionKind::kChannel, "news"), 1u);
  Send({"GET", "a"});
  EXPECT_TRUE(Output().starts_with("-ERR Can't execute 'get'"));
  session_.PushMessage("*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_EQ(Output(), "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  Send({"UNSUBSCRIBE"});
  EXPECT_EQ(router_.hub.Count(SubscriptionKind::kChannel, "news"), 0u);
  EXPECT_EQ(router_.hub.Count(SubscriptionKind::kChannel, "sport"), 0u);
}

TEST_F(SessionTest, SubscribeConfirmationsAreWrittenWithClientReplyOff) {
  Send({"CLIENT", "REPLY", "OFF"});
  Send({"SUBSCRIBE", "news"});
  EXPECT_EQ(Output(), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n");
  Send({"PING"});
  EXPECT_EQ(Output(), "") << "replies other than pub/sub's stay off";
  Send({"UNSUBSCRIBE"});
  EXPECT_EQ(Output(), "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnews\r\n:0\r\n");
}

TEST_F(SessionTest, SubscribeIsConfirmedOnceTheHubHasSubscribed) {
  router_.hub.ready = false;
  Send({"SUBSCRIBE", "__keyevent@0__:set"});
  Send({"PING"});
  EXPECT_EQ(Output(), "") << "held until the hub's connections subscribed";
  ASSERT_EQ(router_.hub.waiting.size(), 1u);
  router_.hub.waiting.clear();  // as the hub does when it tells them
  session_.SubscriptionsReady();
  EXPECT_EQ(Output(), "*3\r\n$9\r\nsubscribe\r\n$18\r\n__keyevent@0__:set\r\n:1\r\n" +
                          std::string("*2\r\n$4\r\npong\r\n$0\r\n\r\n"));
  // RESET answers a confirmation still held first, and the hub forgets the client.
  Send({"SUBSCRIBE", "news"});
  Send({"RESET"});
  EXPECT_EQ(Output(), "*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:2\r\n+RESET\r\n");
  EXPECT_TRUE(router_.hub.waiting.empty());
}

TEST_F(SessionTest, PublishCountsTheProxysSubscribersNotTheShardsConnections) {
  PubSubCounts& counts = services_.counts_of_subscribers;
  counts.Add(/*pattern=*/false, "news", +1);  // clients of other sessions or threads
  counts.Add(/*pattern=*/true, "n*", +1);
  counts.Add(/*pattern=*/true, "x*", +1);
  Send({"PUBLISH", "news", "hi"});
  SubRequest* publish = Routed();
  EXPECT_EQ(publish->request, Frame({"PUBLISH", "news", "hi"}));
  const int first_port = publish->port;
  Answer(publish, ":1\r\n");  // the shard counts the proxy's one connection
  EXPECT_EQ(Output(), ":2\r\n");
  Send({"SUBSCRIBE", "news"});
  Output();
  EXPECT_EQ(counts.Receivers("news", &GlobMatch), 3);
  Send({"UNSUBSCRIBE"});
  Output();
  EXPECT_EQ(counts.Receivers("news", &GlobMatch), 2);
  EXPECT_EQ(counts.Patterns(), 2);
  // One client's messages all leave from one primary, so they reach subscribers in order.
  Send({"PUBLISH", "news", "again"});
  SubRequest* again = Routed();
  EXPECT_EQ(again->port, first_port);
  EXPECT_NE(first_port, 0);
  Answer(again, ":1\r\n");
  EXPECT_EQ(Output(), ":2\r\n");
  Send({"PUBLISH", "news"});
  Answer(Routed(), "-ERR wrong number of arguments for 'publish' command\r\n");
  EXPECT_EQ(Output(), "-ERR wrong number of arguments for 'publish' command\r\n");
}

TEST_F(SessionTest, ASlowSubscriberIsDisconnected) {
  services_.proxy_options.pubsub_buffer_limit = 10;
  Send({"SUBSCRIBE", "news"});
  Output();
  session_.PushMessage("*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n");
  EXPECT_TRUE(link_.closed_now);
}

TEST_F(SessionTest, UsersMustAuthenticateFirst) {
  services_.users.users["default"] = "s3cret";
  Session locked(router_, services_, link_, 8, 0);
  const std::string get = Frame({"GET", "a"});
  locked.HandleCommand(get, *common::ParseCommandArgs(get));
  EXPECT_EQ(locked.output(), "-NOAUTH Authentication required.\r\n");
  locked.output().clear();
  const std::string auth = Frame({"AUTH", "s3cret"});
  locked.HandleCommand(auth, *common::ParseCommandArgs(auth));
  EXPECT_EQ(locked.output(), "+OK\r\n");
  EXPECT_EQ(router_.Take(), nullptr);
}

TEST_F(SessionTest, QuitIsTheLastReplyAndNothingAfterItIsRun) {
  Send({"GET", "a"});
  Send({"QUIT"});
  EXPECT_TRUE(session_.done_reading());
  Send({"GET", "b"});
  SubRequest* get = Routed();
  EXPECT_EQ(router_.Take(), nullptr) << "a command after QUIT was forwarded";
  EXPECT_FALSE(session_.close_after_output());
  Answer(get, "$1\r\nA\r\n");
  EXPECT_EQ(Output(), "$1\r\nA\r\n+OK\r\n");
  EXPECT_TRUE(session_.close_after_output());
}

TEST_F(SessionTest, AProtocolErrorIsAnsweredAfterTheRepliesOwedThenCloses) {
  Send({"GET", "a"});
  session_.ProtocolError("invalid bulk length");
  Answer(Routed(), "$1\r\nA\r\n");
  EXPECT_EQ(Output(), "$1\r\nA\r\n-ERR Protocol error: invalid bulk length\r\n");
  EXPECT_TRUE(session_.close_after_output());
  EXPECT_EQ(services_.counters.protocol_errors.load(), 1u);
}

TEST_F(SessionTest, AClosedSessionLivesUntilItsLastRequestIsAnswered) {
  Send({"GET", "a"});
  Send({"BLPOP", "b", "0"});
  SubRequest* get = Routed();
  SubRequest* pop = Routed();
  session_.PinnedLinkFor(*pop, "127.0.0.1", 7000);
  session_.Close();
  EXPECT_EQ(router_.released.size(), 1u)
      << "the pinned connection goes back when the client leaves";
  EXPECT_EQ(session_.inflight(), 2u);
  Answer(get, "$1\r\nA\r\n");
  EXPECT_FALSE(link_.idle);
  Answer(pop, "*-1\r\n");
  EXPECT_TRUE(link_.idle);
  EXPECT_EQ(Output(), "") << "a closed client is sent nothing";
}

TEST_F(SessionTest, BackpressureOnPendingCommands) {
  services_.proxy_options.max_pending = 2;
  Send({"GET", "a"});
  EXPECT_FALSE(session_.OverLimits());
  Send({"GET", "b"});
  EXPECT_TRUE(session_.OverLimits());
  Answer(Routed(), "$1\r\nA\r\n");
  EXPECT_FALSE(session_.OverLimits());
}

TEST_F(SessionTest, InfoAddsTheClustersKeyspaceToTheProxysSections) {
  Send({"INFO"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_EQ(first->request, Frame({"INFO"}));  // each shard's default sections
  Answer(first, Bulk("# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n"));
  Answer(second, Bulk("# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\n"));
  const std::string info = Output();
  EXPECT_NE(info.find("# Proxy"), std::string::npos) << info;
  EXPECT_NE(info.find("db0:keys=5,expires=1"), std::string::npos) << info;
}

TEST_F(SessionTest, ReadsGoToReplicasWhenAskedExceptRightAfterTheClientWroteTheSlot) {
  services_.proxy_options.read_from = ReadFrom::kPreferReplica;
  Send({"GET", "a"});
  EXPECT_TRUE(Routed()->mode.read_only);
  Send({"SET", "a", "1"});
  EXPECT_FALSE(Routed()->mode.read_only);
  Send({"GET", "a"});
  EXPECT_FALSE(Routed()->mode.read_only) << "read-your-writes: the primary serves it";
  router_.now_ms += 1500;
  Send({"GET", "a"});
  EXPECT_TRUE(Routed()->mode.read_only);
}

TEST_F(SessionTest, ClientReplyOffAndSkipSilenceRepliesTheClientWouldHaveGot) {
  Send({"CLIENT", "REPLY", "OFF"});
  Send({"PING", "silenced"});
  Send({"GET", "a"});
  Answer(Routed(), "$2\r\nva\r\n");
  Send({"CLIENT", "REPLY", "ON"});
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"CLIENT", "REPLY", "SKIP"});
  Send({"GET", "b"});
  Send({"PING", "shown"});
  Answer(Routed(), "$2\r\nvb\r\n");
  EXPECT_EQ(Output(), Bulk("shown"));
  EXPECT_EQ(session_.inflight(), 0u);
}

TEST_F(SessionTest, ClientPauseAndUnpauseGoToEveryPrimary) {
  Send({"CLIENT", "PAUSE", "100", "WRITE"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_EQ(first->request, Frame({"CLIENT", "PAUSE", "100", "WRITE"}));
  EXPECT_TRUE(first->mode.pinned) << "not behind a paused write on a shared connection";
  EXPECT_NE(first->port, second->port);
  Answer(first, "+OK\r\n");
  Answer(second, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"CLIENT", "PAUSE"});
  EXPECT_EQ(Output(), "-ERR wrong number of arguments for 'client|pause' command\r\n");
}

TEST_F(SessionTest, ClientListAndKillSpeakAboutThisClient) {
  Send({"CLIENT", "LIST", "ID", "8"});
  EXPECT_EQ(Output(), Bulk(""));
  Send({"CLIENT", "INFO"});
  const std::string info = Output();
  EXPECT_NE(info.find("id=7 addr=127.0.0.1:50000 "), std::string::npos) << info;
  EXPECT_NE(info.find(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=26 "), std::string::npos)
      << info;
  EXPECT_NE(info.find(" cmd=client|info user=default redir=-1 resp=2"), std::string::npos) << info;
  Send({"CLIENT", "KILL", "ID", "0"});
  EXPECT_EQ(Output(), "-ERR client-id should be greater than 0\r\n");
  Send({"CLIENT", "KILL", "TYPE", "nope"});
  EXPECT_EQ(Output(), "-ERR Unknown client type 'nope'\r\n");
  Send({"CLIENT", "KILL", "ID", "7"});  // SKIPME yes by default
  EXPECT_EQ(Output(), ":0\r\n");
  EXPECT_FALSE(session_.close_after_output());
  Send({"CLIENT", "KILL", "ID", "7", "SKIPME", "no"});
  EXPECT_EQ(Output(), ":1\r\n");
  EXPECT_TRUE(session_.close_after_output());
}

TEST_F(SessionTest, InfoIsEveryPrimarysOwnMerged) {
  Send({"INFO", "commandstats"});
  SubRequest* first = Routed();
  SubRequest* second = Routed();
  EXPECT_EQ(first->request, Frame({"INFO", "commandstats"}));
  EXPECT_TRUE(first->mode.pinned);
  Answer(first, Bulk("# Commandstats\r\ncmdstat_set:calls=2,usec=4,usec_per_call=2.00\r\n"));
  Answer(second, Bulk("# Commandstats\r\ncmdstat_set:calls=1,usec=5,usec_per_call=5.00\r\n"));
  // The fake proxy's own section follows the shards'.
  EXPECT_EQ(Output(), Bulk("# Commandstats\r\ncmdstat_set:calls=3,usec=9,usec_per_call=3.00\r\n"
                           "\r\n# Proxy\r\nsection:commandstats\r\n"));
}

// ---- CLIENT TRACKING (session_tracking.cc) ----

TEST_F(SessionTest, TrackingGoesOverOwnConnectionsAndCachingPrecedesTheNextCommand) {
  Send({"HELLO", "3"});
  Output();
  Send({"CLIENT", "TRACKING", "ON", "OPTIN"});
  // One ON per primary, over the client's own connections.
  SubRequest* on_a = Routed();
  SubRequest* on_b = Routed();
  for (SubRequest* on : {on_a, on_b}) {
    EXPECT_TRUE(on->mode.pinned && on->mode.tracking_command);
    EXPECT_EQ(on->request, Frame({"CLIENT", "TRACKING", "ON", "OPTIN"}));
    PinnedLink* link = session_.PinnedLinkFor(*on, on->host, on->port);
    EXPECT_TRUE(link->tracking);
  }
  Answer(on_a, "+OK\r\n");
  Answer(on_b, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"CLIENT", "CACHING", "yes"});
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"GET", "a"});
  SubRequest* get = Routed();
  EXPECT_TRUE(get->mode.pinned);
  EXPECT_EQ(get->Extras().caching, Frame({"CLIENT", "CACHING", "yes"}));
  Answer(get, "$1\r\n1\r\n");
  Send({"GET", "b"});  // CACHING covers one command only
  SubRequest* next = Routed();
  EXPECT_TRUE(next->mode.pinned);
  EXPECT_TRUE(next->extras == nullptr || next->Extras().caching.empty());
  Answer(next, "$1\r\n2\r\n");
  EXPECT_EQ(Output(), "$1\r\n1\r\n$1\r\n2\r\n");
  // The shard's push on the client's own connection reaches the client.
  session_.OnPinnedPush(router_.links[0].get(), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nb\r\n");
  EXPECT_EQ(Output(), ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nb\r\n");
}

TEST_F(SessionTest, RedirectAsksEachShardForItsReceiverFirstAndPostsToTheTarget) {
  router_.clients.insert(99);
  Send({"CLIENT", "TRACKING", "ON", "REDIRECT", "98"});
  EXPECT_EQ(Output(), "-ERR The client ID you want redirect to does not exist\r\n");
  Send({"CLIENT", "TRACKING", "ON", "REDIRECT", "99"});
  // CLIENT ID over a receiver per primary; nothing more is read meanwhile.
  SubRequest* id_a = Routed();
  SubRequest* id_b = Routed();
  EXPECT_TRUE(id_a->mode.receiver && id_b->mode.receiver);
  EXPECT_TRUE(session_.OverLimits());
  PinnedLink* receiver = session_.PinnedLinkFor(*id_a, id_a->host, id_a->port);
  EXPECT_EQ(receiver->protocol(), 3);
  session_.PinnedLinkFor(*id_b, id_b->host, id_b->port);
  Answer(id_a, ":501\r\n");
  EXPECT_TRUE(router_.routed.empty());
  Answer(id_b, ":502\r\n");
  EXPECT_FALSE(session_.OverLimits());
  // Then the ON, each shard redirecting to the receiver it numbered.
  SubRequest* on_a = Routed();
  SubRequest* on_b = Routed();
  EXPECT_EQ(on_a->request, Frame({"CLIENT", "TRACKING", "ON", "REDIRECT", "501"}));
  EXPECT_EQ(on_b->request, Frame({"CLIENT", "TRACKING", "ON", "REDIRECT", "502"}));
  Answer(on_a, "+OK\r\n");
  Answer(on_b, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n");
  // An invalidation on a receiver goes to client 99, and one "everything" per read.
  const std::string push = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\na\r\n";
  session_.OnPinnedPush(receiver, push);
  session_.OnPinnedPush(receiver, ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  session_.OnPinnedPush(receiver, ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  EXPECT_EQ(router_.posted[99], (std::vector<std::string>{"*1\r\n$1\r\na\r\n", "_\r\n"}));
  // The target gone: the client is told (RESP2: only by TRACKINGINFO).
  router_.clients.erase(99);
  session_.OnPinnedPush(receiver, push);
  Send({"CLIENT", "GETREDIR"});
  EXPECT_EQ(Output(), ":99\r\n");
  Send({"CLIENT", "TRACKINGINFO"});
  EXPECT_NE(Output().find("broken_redirect"), std::string::npos);
}

TEST_F(SessionTest, ARedirectTargetHearsInvalidationsInItsProtocol) {
  session_.DeliverInvalidation("*1\r\n$1\r\na\r\n");  // RESP2, not subscribed: nothing
  EXPECT_EQ(Output(), "");
  Send({"SUBSCRIBE", "__redis__:invalidate"});
  Output();
  session_.DeliverInvalidation("_\r\n");
  EXPECT_EQ(Output(), "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n");
}

TEST_F(SessionTest, ResetTurnsTrackingOffOnTheShardsWithoutAReplyOfItsOwn) {
  Send({"CLIENT", "TRACKING", "ON"});
  for (int i = 0; i < 2; ++i) {
    SubRequest* on = Routed();
    session_.PinnedLinkFor(*on, on->host, on->port);
    Answer(on, "+OK\r\n");
  }
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"RESET"});
  EXPECT_EQ(Output(), "+RESET\r\n");
  ASSERT_EQ(router_.links.size(), 2u);
  for (const auto& link : router_.links) {
    EXPECT_EQ(link->unanswered, (std::vector<std::string>{Frame({"CLIENT", "TRACKING", "OFF"})}));
  }
  Send({"CLIENT", "GETREDIR"});
  EXPECT_EQ(Output(), ":-1\r\n");
  Send({"GET", "a"});
  EXPECT_FALSE(Routed()->mode.pinned);
}

TEST_F(SessionTest, Resp3RedirectNeedsNoReceiverAndAnUnansweredReadKeepsTheNextFlush) {
  router_.clients.insert(99);
  Send({"HELLO", "3"});
  Output();
  Send({"CLIENT", "TRACKING", "ON", "REDIRECT", "99"});
  // RESP3 connections track without REDIRECT: their pushes are passed to client 99.
  SubRequest* on_a = Routed();
  SubRequest* on_b = Routed();
  EXPECT_FALSE(on_a->mode.receiver);
  EXPECT_EQ(on_a->request, Frame({"CLIENT", "TRACKING", "ON"}));
  PinnedLink* link_a = session_.PinnedLinkFor(*on_a, on_a->host, on_a->port);
  session_.PinnedLinkFor(*on_b, on_b->host, on_b->port);
  Answer(on_a, "+OK\r\n");
  Answer(on_b, "+OK\r\n");
  EXPECT_EQ(Output(), "+OK\r\n");
  Send({"GET", "a"});
  SubRequest* get = Routed();
  EXPECT_TRUE(get->mode.tracked);
  const std::string everything = ">2\r\n$10\r\ninvalidate\r\n_\r\n";
  session_.OnPinnedPush(link_a, everything);  // one shard's flush, the read still unanswered
  Answer(get, "$1\r\n1\r\n");                 // its value may predate the other shard's flush
  session_.OnPinnedPush(link_a, everything);
  session_.OnPinnedPush(link_a, everything);  // nothing read since: nothing to drop
  EXPECT_EQ(router_.posted[99], (std::vector<std::string>{"_\r\n", "_\r\n"}));
  EXPECT_EQ(Output(), "$1\r\n1\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
