// CLIENT TRACKING through shardproxy (Redis' unit/tracking): a RESP3 client's invalidations on
// its own connection, a RESP2 client's redirected to another client of the proxy, one
// "everything" per FLUSHALL however many primaries, a broken redirect, CLIENT CACHING in OPTIN
// mode, also for a read that meets MOVED. A real 3-shard cluster behind the real proxy, read byte
// for byte.
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/resp.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using namespace std::chrono_literals;

constexpr int kShards = 3;

// RESP as a client sends it.
std::string Resp(const std::vector<std::string>& argv) {
  const std::vector<std::string_view> views(argv.begin(), argv.end());
  std::string out;
  common::AppendCommand(out, views);
  return out;
}

std::string Bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

// The invalidation of one key as a RESP3 client receives it, and as a RESP2 redirect target.
std::string PushOf(const std::string& key) {
  return ">2\r\n$10\r\ninvalidate\r\n*1\r\n" + Bulk(key);
}
std::string MessageOf(const std::string& keys_frame) {
  return "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n" + keys_frame;
}

// A raw client connection read frame by frame: what arrives is compared byte for byte.
class RawClient {
 public:
  explicit RawClient(int port) : raw_(port) {}
  bool connected() const { return raw_.connected(); }
  void Send(const std::vector<std::string>& argv) { raw_.Send(Resp(argv)); }
  // Waits (up to `timeout`) for `size` bytes and takes them.
  std::string Take(size_t size, std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (buffer_.size() < size && std::chrono::steady_clock::now() < deadline) {
      buffer_ += raw_.ReadUntil(1, 100ms);
    }
    std::string taken = buffer_.substr(0, size);
    buffer_.erase(0, taken.size());
    return taken;
  }
  std::string Expect(const std::string& frame) { return Take(frame.size()); }
  // Everything up to and including `marker` (for replies whose size the test does not know).
  std::string TakeThrough(const std::string& marker, std::chrono::milliseconds timeout = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (buffer_.find(marker) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      buffer_ += raw_.ReadUntil(1, 100ms);
    }
    const size_t at = buffer_.find(marker);
    if (at == std::string::npos) return std::exchange(buffer_, {});
    std::string taken = buffer_.substr(0, at + marker.size());
    buffer_.erase(0, taken.size());
    return taken;
  }
  // What else arrives within `wait`: nothing, when the proxy sent no more.
  std::string Rest(std::chrono::milliseconds wait) {
    buffer_ += raw_.ReadUntil(1 << 20, wait);
    return std::exchange(buffer_, {});
  }

 private:
  RawConnection raw_;
  std::string buffer_;
};

class ProxyTrackingTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy();
  }
};

TEST_F(ProxyTrackingTest, Resp3ClientGetsItsInvalidationsOnItsOwnConnection) {
  ASSERT_EQ(Keys(), 0);
  const std::vector<std::string> keys = KeyPerShard(kShards, "t");
  for (const std::string& key : keys) ASSERT_EQ(TextOf(Proxy({"SET", key, "1"})), "OK");
  ASSERT_EQ(Keys(), kShards);
  RawClient client(proxy_port());
  ASSERT_TRUE(client.connected());
  client.Send({"HELLO", "3"});
  client.Send({"PING"});
  client.TakeThrough("+PONG\r\n");
  client.Send({"CLIENT", "TRACKING", "ON"});
  ASSERT_EQ(client.Expect("+OK\r\n"), "+OK\r\n");
  for (const std::string& key : keys) {
    client.Send({"GET", key});
    ASSERT_EQ(client.Expect("$1\r\n1\r\n"), "$1\r\n1\r\n") << key;
  }
  // Another client changes each key: the shard owning it pushes the invalidation.
  for (const std::string& key : keys) {
    ASSERT_EQ(TextOf(Proxy({"SET", key, "2"})), "OK");
    EXPECT_EQ(client.Expect(PushOf(key)), PushOf(key));
  }
  // A key it did not read is not tracked.
  ASSERT_EQ(TextOf(Proxy({"SET", "untracked", "1"})), "OK");
  EXPECT_EQ(client.Rest(300ms), "");
  // The client's own write of a key it read: the reply first, then the invalidation.
  client.Send({"GET", keys[0]});
  ASSERT_EQ(client.Expect("$1\r\n2\r\n"), "$1\r\n2\r\n");
  client.Send({"DEL", keys[0]});
  EXPECT_EQ(client.Expect(":1\r\n" + PushOf(keys[0])), ":1\r\n" + PushOf(keys[0]));
  EXPECT_EQ(Keys(), kShards);  // the two left of `keys`, and "untracked"
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[1], keys[2], "untracked"})), 3);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyTrackingTest, RedirectedInvalidationsReachTheTargetOnceEvenForAFlush) {
  ASSERT_EQ(Keys(), 0);
  RawClient target(proxy_port());
  target.Send({"CLIENT", "ID"});
  const std::string id_frame = target.TakeThrough("\r\n");
  ASSERT_EQ(id_frame[0], ':') << id_frame;
  const std::string id = id_frame.substr(1, id_frame.size() - 3);
  target.Send({"SUBSCRIBE", "__redis__:invalidate"});
  target.TakeThrough(":1\r\n");

  auto tracker = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(tracker);
  ASSERT_EQ(TextOf(tracker->Command({"CLIENT", "TRACKING", "ON", "REDIRECT", id})), "OK");
  EXPECT_EQ(IntegerOf(tracker->Command({"CLIENT", "GETREDIR"})), std::stoll(id));
  const std::vector<std::string> keys = KeyPerShard(kShards, "t");
  for (const std::string& key : keys) {
    ASSERT_EQ(TextOf(Proxy({"SET", key, "1"})), "OK");
    ASSERT_EQ(TextOf(tracker->Command({"GET", key})), "1");
  }
  ASSERT_EQ(Keys(), kShards);
  for (const std::string& key : keys) {
    ASSERT_EQ(IntegerOf(Proxy({"INCR", key})), 2);
    const std::string message = MessageOf("*1\r\n" + Bulk(key));
    EXPECT_EQ(target.Expect(message), message) << key;
  }
  // Every primary invalidates "everything" on FLUSHALL: the target hears it once.
  for (const std::string& key : keys) ASSERT_EQ(TextOf(tracker->Command({"GET", key})), "2");
  ASSERT_EQ(Keys(), kShards);
  ASSERT_EQ(TextOf(Proxy({"FLUSHALL"})), "OK");
  EXPECT_EQ(Keys(), 0);
  const std::string everything = MessageOf("$-1\r\n");
  EXPECT_EQ(target.Expect(everything), everything);
  EXPECT_EQ(target.Rest(300ms), "");

  // The target leaves: the next invalidation cannot be delivered, and the tracker is told so.
  target.Send({"QUIT"});
  ASSERT_EQ(TextOf(Proxy({"SET", keys[0], "3"})), "OK");
  ASSERT_EQ(TextOf(tracker->Command({"GET", keys[0]})), "3");
  ASSERT_EQ(TextOf(Proxy({"SET", keys[0], "4"})), "OK");
  std::string flags;
  for (int attempt = 0; attempt < 50 && flags.find("broken_redirect") == std::string::npos;
       ++attempt) {
    auto info = tracker->Command({"CLIENT", "TRACKINGINFO"});
    ASSERT_TRUE(info && info->elements.size() == 6) << TextOf(info);
    flags.clear();
    for (const RedisReply& flag : info->elements[1].elements) flags += flag.text + " ";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(flags, "on broken_redirect ");
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[0]})), 1);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyTrackingTest, OptinTracksOnlyAfterClientCachingYes) {
  ASSERT_EQ(Keys(), 0);
  const std::vector<std::string> keys = KeyPerShard(kShards, "t");
  for (const std::string& key : keys) ASSERT_EQ(TextOf(Proxy({"SET", key, "1"})), "OK");
  RawClient client(proxy_port());
  client.Send({"HELLO", "3"});
  client.Send({"PING"});
  client.TakeThrough("+PONG\r\n");
  client.Send({"CLIENT", "CACHING", "YES"});
  const std::string not_tracking =
      "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
      "OPTOUT mode enabled\r\n";
  EXPECT_EQ(client.Expect(not_tracking), not_tracking);
  client.Send({"CLIENT", "TRACKING", "ON", "OPTIN"});
  ASSERT_EQ(client.Expect("+OK\r\n"), "+OK\r\n");
  client.Send({"GET", keys[0]});  // not cached: OPTIN without CLIENT CACHING YES
  ASSERT_EQ(client.Expect("$1\r\n1\r\n"), "$1\r\n1\r\n");
  client.Send({"CLIENT", "CACHING", "YES"});
  ASSERT_EQ(client.Expect("+OK\r\n"), "+OK\r\n");
  client.Send({"GET", keys[1]});
  ASSERT_EQ(client.Expect("$1\r\n1\r\n"), "$1\r\n1\r\n");
  for (const std::string& key : keys) ASSERT_EQ(IntegerOf(Proxy({"INCR", key})), 2);
  EXPECT_EQ(client.Expect(PushOf(keys[1])), PushOf(keys[1]));
  EXPECT_EQ(client.Rest(300ms), "");
  EXPECT_EQ(Keys(), kShards);
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[0], keys[1], keys[2]})), kShards);
  EXPECT_EQ(Keys(), 0);
}

// A read under CLIENT CACHING YES whose slot moved behind the proxy's back: the old owner answers
// MOVED, the proxy reads the new map and sends the read again to the new owner, with CLIENT
// CACHING before it again; without it, the new owner would not track the key and the client's
// cached value would never be invalidated.
TEST_F(ProxyTrackingTest, CachingFollowsAReadToItsSlotsNewOwner) {
  StopProxy();
  StartProxy({"--refresh-interval", "600s"});  // only the MOVED makes it read the new map
  ASSERT_EQ(Keys(), 0);
  const int source = shard_port(0);
  const int target = shard_port(1);
  const std::string key = KeyOn(source, "moving");
  ASSERT_EQ(TextOf(Proxy({"SET", key, "1"})), "OK");
  MoveSlotOf(key, source, target);

  RawClient client(proxy_port());
  client.Send({"HELLO", "3"});
  client.Send({"PING"});
  client.TakeThrough("+PONG\r\n");
  client.Send({"CLIENT", "TRACKING", "ON", "OPTIN"});
  ASSERT_EQ(client.Expect("+OK\r\n"), "+OK\r\n");
  const long long retries = ProxyCounter("retries");
  client.Send({"CLIENT", "CACHING", "YES"});
  ASSERT_EQ(client.Expect("+OK\r\n"), "+OK\r\n");
  client.Send({"GET", key});
  ASSERT_EQ(client.Expect("$1\r\n1\r\n"), "$1\r\n1\r\n");
  EXPECT_GT(ProxyCounter("retries"), retries) << "the read did not meet the old owner";
  ASSERT_EQ(IntegerOf(Proxy({"INCR", key})), 2);
  EXPECT_EQ(client.Expect(PushOf(key)), PushOf(key));
  EXPECT_EQ(client.Rest(300ms), "");
  EXPECT_EQ(Keys(), 1);
  EXPECT_EQ(IntegerOf(QueryRedis(target, {"EXISTS", key})), 1);
  EXPECT_EQ(IntegerOf(Proxy({"DEL", key})), 1);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyTrackingTest, RefusedTrackingLeavesTheClientAsItWas) {
  auto client = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(client);
  EXPECT_EQ(TextOf(client->Command({"CLIENT", "TRACKING", "ON", "REDIRECT", "999999"})),
            "ERR The client ID you want redirect to does not exist");
  // The shards' own check, in their words.
  EXPECT_EQ(TextOf(client->Command({"CLIENT", "TRACKING", "ON", "PREFIX", "a"})),
            "ERR PREFIX option requires BCAST mode to be enabled");
  EXPECT_EQ(IntegerOf(client->Command({"CLIENT", "GETREDIR"})), -1);
  ASSERT_EQ(TextOf(client->Command({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "foo"})), "OK");
  EXPECT_EQ(TextOf(client->Command({"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "fo"})),
            "ERR Prefix 'fo' overlaps with an existing prefix 'foo'. Prefixes for a single client "
            "must not overlap.");
  auto info = client->Command({"CLIENT", "TRACKINGINFO"});
  ASSERT_TRUE(info && info->elements.size() == 6) << TextOf(info);
  ASSERT_EQ(info->elements[5].elements.size(), 1u);
  EXPECT_EQ(info->elements[5].elements[0].text, "foo");
  EXPECT_EQ(TextOf(client->Command({"CLIENT", "TRACKING", "OFF"})), "OK");
  EXPECT_EQ(IntegerOf(client->Command({"CLIENT", "GETREDIR"})), -1);
}

}  // namespace
}  // namespace shardctl::integration
