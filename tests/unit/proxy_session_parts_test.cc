// The parts a proxy Session is made of, each on its own: ReplyQueue (order), SlotSequencer
// (per-slot order across map changes), Transaction (MULTI), ReplyAssembly (merges), PinnedLinks
// (the client's own connections) and ClientSubscriptions (pub/sub counts). No sockets.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/resp.h"
#include "proxy/commands/command_table.h"
#include "proxy/merge/reply_assembly.h"
#include "proxy/session/client_subscriptions.h"
#include "proxy/session/pinned_links.h"
#include "proxy/session/reply_queue.h"
#include "proxy/session/slot_sequencer.h"
#include "proxy/session/transaction.h"
#include "tests/unit/proxy_fakes.h"

namespace shardctl::proxy {
namespace {

using namespace testing_fakes;

// ---- ReplyQueue ----

TEST(ReplyQueueTest, OnlyTheReadyPrefixIsWritten) {
  ReplyQueue queue;
  std::string out;
  PendingReply& first = queue.Push();
  PendingReply& second = queue.Push();
  PendingReply& third = queue.Push();
  queue.Fill(third, "3", out);
  queue.Fill(second, "2", out);
  EXPECT_EQ(out, "");
  EXPECT_EQ(queue.size(), 3u);
  queue.Fill(first, "1", out);
  EXPECT_EQ(out, "123");
  EXPECT_TRUE(queue.empty());
}

TEST(ReplyQueueTest, NothingAfterACloseAfterReplyIsWritten) {
  ReplyQueue queue;
  std::string out;
  PendingReply& before = queue.Push();
  PendingReply& quit = queue.Push();
  quit.close_after = true;
  queue.Push();  // a command after QUIT: never answered
  queue.Fill(quit, "+OK\r\n", out);
  EXPECT_FALSE(queue.closing());
  queue.Fill(before, "A", out);
  EXPECT_EQ(out, "A+OK\r\n");
  EXPECT_TRUE(queue.closing());
  EXPECT_TRUE(queue.empty());
}

TEST(ReplyQueueTest, SilencedRepliesAreMadeButNeverWritten) {
  ReplyQueue queue;
  std::string out;
  queue.set_mode(ReplyQueue::Mode::kSkipNext);
  PendingReply& skipped = queue.Push();
  EXPECT_FALSE(queue.silencing());  // SKIP drops one reply only
  PendingReply& shown = queue.Push();
  queue.set_mode(ReplyQueue::Mode::kOff);
  PendingReply& off1 = queue.Push();
  PendingReply& off2 = queue.Push();
  EXPECT_TRUE(queue.silencing());
  queue.Fill(off2, "4", out);
  queue.Fill(shown, "2", out);
  queue.Fill(skipped, "1", out);
  EXPECT_EQ(out, "2");
  queue.Fill(off1, "3", out);
  EXPECT_EQ(out, "2");
  EXPECT_TRUE(queue.empty());
  queue.set_mode(ReplyQueue::Mode::kOn);
  queue.Fill(queue.Push(), "5", out);
  EXPECT_EQ(out, "25");
}

// A worker's pool: written replies come back as new, keeping the buffer a reply parked in.
TEST(ReplyQueueTest, PooledRepliesComeBackAsNewWithTheirBuffers) {
  PendingReplyPool pool;
  std::string out;
  {
    ReplyQueue queue(&pool);
    PendingReply& first = queue.Push();
    PendingReply& second = queue.Push();
    second.progressed = true;
    queue.Fill(second, std::string(300, 'b'), out);  // parked: the first is not in yet
    EXPECT_GE(second.bytes.capacity(), 300u);
    queue.Fill(first, "a", out);
    EXPECT_EQ(out, "a" + std::string(300, 'b'));
    EXPECT_EQ(pool.spare(), 2u);
    PendingReply& reused = queue.Push();
    EXPECT_EQ(pool.spare(), 1u);
    EXPECT_FALSE(reused.ready || reused.progressed || reused.close_after || reused.silent ||
                 reused.has_trailer || reused.assembly);
    EXPECT_TRUE(reused.bytes.empty());
    queue.Push();
  }  // a closed session's replies go back too
  EXPECT_EQ(pool.spare(), 2u);
  ReplyQueue queue(&pool);
  queue.Push();
  queue.Push();
  PendingReply& third = queue.Push();
  queue.Fill(third, std::string(64 * 1024, 'x'), out);  // parked behind the other two
  queue.Clear();
  EXPECT_EQ(pool.spare(), 2u) << "a buffer grown by a big reply is freed, not kept";
}

// ---- SlotSequencer ----

TEST(ReplyQueueTest, APushGoesWhereTheShardPutItAmongTheReplies) {
  ReplyQueue queue;
  std::string out;
  // Nothing outstanding: written at once.
  queue.PlacePush(">push0", out);
  EXPECT_EQ(out, ">push0");
  out.clear();
  PendingReply& first = queue.Push();
  PendingReply& second = queue.Push();
  PendingReply& third = queue.Push();
  // Nothing of any reply has arrived: the shard pushed before answering, so the push goes first.
  queue.PlacePush(">before", out);
  EXPECT_EQ(out, ">before");
  out.clear();
  // A part of the second reply arrived (a fan-out): a push now may have followed it.
  second.progressed = true;
  queue.PlacePush(">after-second", out);
  EXPECT_EQ(out, "");
  queue.Fill(third, "+3", out);
  queue.Fill(first, "+1", out);
  EXPECT_EQ(out, "+1");
  queue.Fill(second, "+2", out);
  EXPECT_EQ(out, "+1+2>after-second+3");
  // A silenced reply (CLIENT REPLY OFF) still lets its push through.
  out.clear();
  queue.set_mode(ReplyQueue::Mode::kOff);
  PendingReply& silent = queue.Push();
  silent.progressed = true;
  queue.PlacePush(">kept", out);
  queue.Fill(silent, "+dropped", out);
  EXPECT_EQ(out, ">kept");
}

TEST(SlotSequencerTest, HoldsWhatWouldOvertakeAndReleasesInOrder) {
  SlotSequencer sequencer;
  SubRequest a, b, c, other;
  a.slot = b.slot = c.slot = 5;
  other.slot = 6;
  int old_owner = 0, new_owner = 0;
  EXPECT_TRUE(sequencer.Admit(&a, &old_owner));
  EXPECT_TRUE(a.sequenced);
  EXPECT_TRUE(sequencer.Admit(&other, &new_owner)) << "another slot is not held";
  EXPECT_FALSE(sequencer.Admit(&b, &new_owner));
  EXPECT_FALSE(sequencer.Admit(&c, &old_owner)) << "nothing overtakes a held request";
  EXPECT_EQ(sequencer.Leave(5), (std::vector<SubRequest*>{&b, &c}));
  EXPECT_TRUE(sequencer.Leave(6).empty());
  EXPECT_EQ(sequencer.slots_in_flight(), 0u);
}

TEST(SlotSequencerTest, ARetryHoldsTheSlotsNextRequests) {
  SlotSequencer sequencer;
  SubRequest a, b;
  a.slot = b.slot = 9;
  int connection = 0;
  ASSERT_TRUE(sequencer.Admit(&a, &connection));
  sequencer.Hold(9);  // `a` waits for a TRYAGAIN backoff
  EXPECT_FALSE(sequencer.Admit(&b, &connection));
  EXPECT_EQ(sequencer.TakeAllHeld(), std::vector<SubRequest*>{&b});
  EXPECT_EQ(sequencer.slots_in_flight(), 0u);
}

// The sequencer against a plain model of its rules (a map of slot records and one held list),
// over random admissions, holds and out-of-order finishes, with one request left in flight for
// long stretches while records of other slots come and go behind it.
TEST(SlotSequencerTest, AgreesWithAPlainModelOverRandomTraffic) {
  struct Record {
    uint32_t count = 0, held = 0;
    const void* connection = nullptr;
  };
  std::map<int, Record> records;
  std::vector<SubRequest*> model_held;
  auto model_admit = [&](SubRequest* request, const void* connection) {
    Record& record = records[request->slot];
    if (record.count > 0 && (record.connection != connection || record.held > 0)) {
      model_held.push_back(request);
      ++record.held;
      return false;
    }
    record.connection = connection;
    ++record.count;
    return true;
  };
  auto model_leave = [&](int slot) {
    std::vector<SubRequest*> released;
    auto found = records.find(slot);
    if (found == records.end() || --found->second.count > 0) return released;
    std::erase_if(model_held, [&](SubRequest* request) {
      if (request->slot != slot) return false;
      released.push_back(request);
      return true;
    });
    records.erase(found);
    return released;
  };

  SlotSequencer sequencer;
  std::mt19937 random(42);
  std::deque<SubRequest> requests;
  std::vector<SubRequest*> in_flight;
  int connections[2] = {0, 0};
  SubRequest* lingering = nullptr;  // finishes only now and then
  auto admit = [&](SubRequest* request) {
    const void* connection = &connections[random() % 2];
    const bool admitted = sequencer.Admit(request, connection);
    ASSERT_EQ(admitted, model_admit(request, connection)) << "slot " << request->slot;
    if (admitted) in_flight.push_back(request);
  };
  for (int step = 0; step < 200000; ++step) {
    const unsigned roll = random() % 100;
    if (roll < 50 || in_flight.empty()) {
      SubRequest& request = requests.emplace_back();
      request.slot = static_cast<int>(random() % 200);
      admit(&request);
      if (lingering == nullptr && !in_flight.empty() && in_flight.back() == &request) {
        lingering = &request;
      }
    } else if (roll < 52) {
      const int slot = in_flight[random() % in_flight.size()]->slot;
      sequencer.Hold(slot);
      if (records.count(slot)) records[slot].connection = nullptr;
    } else {
      // Mostly the oldest first, as replies come; sometimes any; the lingering one rarely.
      size_t at = roll < 90 ? 0 : random() % in_flight.size();
      if (in_flight[at] == lingering && random() % 500 != 0) {
        if (in_flight.size() == 1) continue;
        at = (at + 1) % in_flight.size();
      }
      SubRequest* done = in_flight[at];
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(at));
      if (done == lingering) lingering = nullptr;
      const auto released = sequencer.Leave(done->slot);
      ASSERT_EQ(released, model_leave(done->slot)) << "step " << step;
      for (SubRequest* again : released) admit(again);  // routed again, in order
    }
    ASSERT_EQ(sequencer.slots_in_flight(), records.size()) << "step " << step;
  }
}

// ---- Transaction ----

std::vector<std::string_view> Args(const std::string& frame) {
  return *common::ParseCommandArgs(frame);
}

std::string Frame(std::vector<std::string_view> args) {
  std::string frame;
  common::AppendCommand(frame, args);
  return frame;
}

TEST(TransactionTest, QueuesOneSlotsCommandsIntoOneBatch) {
  Transaction transaction;
  const std::string set = Frame({"SET", "{u}a", "1"});
  const std::string get = Frame({"GET", "{u}b"});
  const std::string ping = Frame({"PING"});
  for (const std::string* frame : {&set, &get, &ping}) {
    auto args = Args(*frame);
    ASSERT_TRUE(transaction.Queue(*frame, LookupCommand(args[0]), args, -1, 1 << 20));
  }
  EXPECT_EQ(transaction.count(), 3u);
  EXPECT_EQ(transaction.replies_before_exec(), 4u);
  EXPECT_EQ(transaction.Batch(), Frame({"MULTI"}) + set + get + ping + Frame({"EXEC"}));
  EXPECT_FALSE(transaction.failed());
}

TEST(TransactionTest, CrossSlotUnqueueableAndTooBigFailTheTransaction) {
  struct Case {
    std::vector<std::string_view> command;
    int watch_slot;
    size_t max_bytes;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {{"GET", "b"}, 15495, 1 << 20, "CROSSSLOT Keys in request don't hash to the same slot"},
           {{"SUBSCRIBE", "x"}, -1, 1 << 20, "ERR command 'SUBSCRIBE' cannot be queued"},
           {{"SET", "a", "1"}, -1, 4, "ERR transaction too big for shardproxy"},
           {{"SAVE"}, -1, 1 << 20, "ERR Command not allowed inside a transaction"},
           {{"shutdown", "nosave"}, -1, 1 << 20, "ERR Command not allowed inside a transaction"},
           {{"SCRIPT", "DEBUG", "yes"}, -1, 1 << 20, "ERR command 'script|debug' is not"}}) {
    Transaction transaction;
    const std::string frame = Frame(c.command);
    auto args = Args(frame);
    auto queued = transaction.Queue(frame, LookupCommand(args[0]), args, c.watch_slot, c.max_bytes);
    ASSERT_FALSE(queued) << frame;
    EXPECT_EQ(queued.error().message().rfind(c.error, 0), 0u) << queued.error().message();
    EXPECT_TRUE(transaction.failed());
  }
}

// CONFIG SET, FLUSHALL, DBSIZE in MULTI: in the home batch in order, and those for every shard
// also in a batch of their own for the other primaries; CONFIG GET (any shard) only at home.
TEST(TransactionTest, ServerWideCommandsAreQueuedForEveryShard) {
  Transaction transaction;
  const std::string set = Frame({"SET", "a", "1"});
  const std::string config = Frame({"CONFIG", "SET", "maxmemory", "bla"});
  const std::string get = Frame({"CONFIG", "GET", "maxmemory"});
  const std::string dbsize = Frame({"DBSIZE"});
  for (const std::string* frame : {&set, &config, &get, &dbsize}) {
    auto args = Args(*frame);
    ASSERT_TRUE(transaction.Queue(*frame, LookupCommand(args[0]), args, -1, 1 << 20));
  }
  EXPECT_EQ(transaction.slot(), 15495);
  EXPECT_EQ(transaction.Batch(), Frame({"MULTI"}) + set + config + get + dbsize + Frame({"EXEC"}));
  EXPECT_EQ(transaction.server_wide_batch(), Frame({"MULTI"}) + config + dbsize + Frame({"EXEC"}));
  EXPECT_EQ(transaction.server_wide_everywhere(), 2u);
  ASSERT_EQ(transaction.server_wide().size(), 3u);
  EXPECT_EQ(transaction.server_wide()[0].position, 1u);
  EXPECT_EQ(transaction.server_wide()[1].position, 2u);
  EXPECT_FALSE(transaction.server_wide()[1].plan.every_shard);
  EXPECT_EQ(transaction.server_wide()[2].plan.merge, FanOutMerge::kSumIntegers);
}

TEST(ReplyAssemblyTest, TransactionRepliesMergeTheServerWideOnes) {
  const std::vector<ServerWideCommand> commands = {{1, {true, FanOutMerge::kAllOk}},
                                                   {2, {false, FanOutMerge::kFirst}},
                                                   {3, {true, FanOutMerge::kSumIntegers}}};
  const std::string home = "*4\r\n+OK\r\n+OK\r\n*0\r\n:2\r\n";
  const std::string other = "*2\r\n+OK\r\n:5\r\n";
  auto assembly = TransactionFanOutAssembly(commands, 3);
  EXPECT_FALSE(assembly->Add(2, other));
  EXPECT_FALSE(assembly->Add(0, home));
  EXPECT_EQ(assembly->Add(1, other), "*4\r\n+OK\r\n+OK\r\n*0\r\n:12\r\n");
  // One shard refusing the setting is the command's reply, as one Redis refusing it.
  const std::string refused = "*2\r\n-ERR CONFIG SET failed\r\n:5\r\n";
  EXPECT_EQ(MergeTransactionFanOut(std::vector<std::string_view>{home, refused}, commands),
            "*4\r\n+OK\r\n-ERR CONFIG SET failed\r\n*0\r\n:7\r\n");
  // An aborted transaction at home is the client's reply as it is.
  const std::string abort = "-EXECABORT Transaction discarded because of previous errors.\r\n";
  EXPECT_EQ(MergeTransactionFanOut(std::vector<std::string_view>{abort, other}, commands), abort);
}

// ---- ReplyAssembly ----

TEST(ReplyAssemblyTest, PartsArriveInAnyOrder) {
  auto dbsize = FanOutAssembly(FanOutMerge::kSumIntegers, 3);
  EXPECT_EQ(dbsize->Add(2, ":1\r\n"), std::nullopt);
  EXPECT_EQ(dbsize->Add(0, ":2\r\n"), std::nullopt);
  EXPECT_EQ(dbsize->Add(1, ":3\r\n"), ":6\r\n");
}

TEST(ReplyAssemblyTest, ShaOfBulkReplyNeedsExactlyFortyHexDigits) {
  const std::string sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
  EXPECT_EQ(ShaOfBulkReply("$40\r\n" + sha + "\r\n"), sha);
  EXPECT_EQ(ShaOfBulkReply("-ERR nope\r\n"), std::nullopt);
  EXPECT_EQ(ShaOfBulkReply("$40\r\n" + std::string(40, 'x') + "\r\n"), std::nullopt);
  EXPECT_EQ(ShaOfBulkReply("$5\r\nhello\r\n"), std::nullopt);
}

TEST(ReplyAssemblyTest, ScriptLoadIsRememberedOnlyWhenEveryShardAgrees) {
  std::vector<std::string> remembered;
  const std::string sha = "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n";
  auto agree = ScriptLoadAssembly(2, [&](std::string s) { remembered.push_back(s); });
  agree->Add(0, sha);
  EXPECT_EQ(agree->Add(1, sha), sha);
  EXPECT_EQ(remembered.size(), 1u);
  auto failed = ScriptLoadAssembly(2, [&](std::string s) { remembered.push_back(s); });
  failed->Add(0, sha);
  EXPECT_EQ(failed->Add(1, "-ERR Error compiling script\r\n"), "-ERR Error compiling script\r\n");
  EXPECT_EQ(remembered.size(), 1u);
}

TEST(ReplyAssemblyTest, InfoIsVerbatimOverResp3) {
  EXPECT_EQ(InfoFrame("a:1", 2), "$3\r\na:1\r\n");
  EXPECT_EQ(InfoFrame("a:1", 3), "=7\r\ntxt:a:1\r\n");
}

// ---- PinnedLinks ----

TEST(PinnedLinksTest, OneConnectionPerShardReusedThenGivenBack) {
  FakeRouter router;
  PinnedLinks pinned(router, nullptr);
  SubRequest request;
  request.protocol = 2;
  PinnedLink* link = pinned.For(request, "127.0.0.1", 7000);
  EXPECT_EQ(pinned.For(request, "127.0.0.1", 7000), link);
  EXPECT_NE(pinned.For(request, "127.0.0.1", 7001), link);
  EXPECT_EQ(router.links.size(), 2u);
  router.links[0]->busy = true;  // still blocked in a command
  pinned.ReleaseIdle();
  EXPECT_EQ(router.released, std::vector<PinnedLink*>{router.links[1].get()});
  pinned.ReleaseAll();
  EXPECT_EQ(router.released.size(), 2u);
}

TEST(PinnedLinksTest, WaitModeKeepsConnectionsAndAWatchKeepsItsOwn) {
  FakeRouter router;
  PinnedLinks pinned(router, nullptr);
  pinned.watch().emplace(PinnedLinks::Watch{.slot = 5});
  SubRequest watched;
  watched.mode.watched = true;
  PinnedLink* link = pinned.For(watched, "127.0.0.1", 7000);
  EXPECT_TRUE(router.links[0]->watched);
  pinned.ReleaseIdle();
  EXPECT_TRUE(router.released.empty()) << "the WATCH connection was given back";
  pinned.Forget(link);
  ASSERT_TRUE(pinned.watch());
  EXPECT_TRUE(pinned.watch()->broken);
  pinned.EnterWaitMode();
  SubRequest plain;
  pinned.For(plain, "127.0.0.1", 7001);
  pinned.ReleaseIdle();
  EXPECT_TRUE(router.released.empty()) << "WAIT mode keeps the connections";
}

// ---- ClientSubscriptions ----

TEST(ClientSubscriptionsTest, CountsAsRedisDoesAndRegistersOncePerName) {
  FakeHub hub;
  FakeClientLink link;
  FakeRouter router;
  FakeServices services;
  Session self(router, services, link, 1, 0);
  ClientSubscriptions subscriptions(hub, &self);
  const std::vector<std::string_view> names = {"a", "a", "b"};
  const std::string replies =
      subscriptions.Subscribe(SubscriptionKind::kChannel, "subscribe", names, 2);
  EXPECT_NE(replies.find(":2\r\n"), std::string::npos);
  EXPECT_EQ(hub.Count(SubscriptionKind::kChannel, "a"), 1u);
  // Shard channels count on their own.
  const std::vector<std::string_view> shard = {"s"};
  EXPECT_NE(subscriptions.Subscribe(SubscriptionKind::kShardChannel, "ssubscribe", shard, 2)
                .find(":1\r\n"),
            std::string::npos);
  EXPECT_FALSE(subscriptions.empty());
  subscriptions.Clear();
  EXPECT_TRUE(subscriptions.empty());
  EXPECT_EQ(hub.Count(SubscriptionKind::kChannel, "b"), 0u);
  EXPECT_EQ(hub.Count(SubscriptionKind::kShardChannel, "s"), 0u);
}

}  // namespace
}  // namespace shardctl::proxy
