// shardproxy while the cluster changes under it: a slot migrating between primaries (ASK, then
// MOVED) with a pipelining client checking every reply, a primary killed and restarted under a
// client's open connection, a hung primary and the --timeout, and the client limits.
#include <signal.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "common/slots.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A client pipelining batches of commands through the proxy on its own thread, checking every
// reply against what it wrote: keys of the slot under test and keys elsewhere.
class CheckingClient {
 public:
  CheckingClient(int proxy_port, std::vector<std::string> fixed_keys,
                 std::vector<std::string> other_keys, std::string tag)
      : fixed_(std::move(fixed_keys)), other_(std::move(other_keys)), tag_(std::move(tag)) {
    std::string error;
    connection_ = RedisConnection::Open(proxy_port, &error);
    if (!connection_) errors_.push_back("connect: " + error);
    thread_ = std::thread([this] { Loop(); });
  }
  ~CheckingClient() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int batches() const { return batches_.load(); }
  long replies() const { return replies_.load(); }
  // Waits until `more` further batches have completed (pacing, not an assertion).
  void WaitForBatches(int more) {
    const int target = batches() + more;
    WaitUntil([&] { return batches() >= target || stop_; }, 10s, 5ms);
  }
  std::vector<std::string> errors() {
    std::lock_guard lock(mutex_);
    return errors_;
  }

 private:
  static constexpr int kGroupsPerBatch = 40;

  struct Expected {
    std::string what;
    RedisReply reply;
  };

  static RedisReply Text(const std::string& text) {
    return {.kind = RedisReply::Kind::kString, .text = text};
  }
  static RedisReply Integer(long long value) {
    return {.kind = RedisReply::Kind::kInteger, .text = std::to_string(value), .integer = value};
  }

  void Fail(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (errors_.size() < 20) errors_.push_back(message);
  }

  void Loop() {
    const auto deadline = Clock::now() + 90s;
    for (int batch = 0; connection_ && !stop_ && batch < 100000 && Clock::now() < deadline;
         ++batch) {
      std::vector<Expected> expected;
      auto add = [&](const std::vector<std::string>& argv, RedisReply reply) {
        connection_->Append(argv);
        std::string what;
        for (const auto& arg : argv) what += arg + " ";
        expected.push_back({what, std::move(reply)});
      };
      // Big batches: the longer the proxy takes to route one, the likelier a slot map change
      // lands in the middle of it.
      for (int i = 0; i < kGroupsPerBatch; ++i) {
        const size_t k = static_cast<size_t>(batch * kGroupsPerBatch + i);
        add({"GET", fixed_[k % fixed_.size()]}, Text("v" + std::to_string(k % fixed_.size())));
        add({"INCR", tag_ + "ctr"}, Integer(++counter_));
        const std::string fresh = tag_ + "bg" + std::to_string(k);
        add({"SET", fresh, "x" + std::to_string(k)}, Text("OK"));
        add({"GET", fresh}, Text("x" + std::to_string(k)));
        add({"GET", other_[k % other_.size()]}, Text("o" + std::to_string(k % other_.size())));
      }
      RedisReply mget{.kind = RedisReply::Kind::kArray};
      for (size_t i = 0; i < other_.size(); ++i)
        mget.elements.push_back(Text("o" + std::to_string(i)));
      std::vector<std::string> argv = {"MGET"};
      argv.insert(argv.end(), other_.begin(), other_.end());
      add(argv, mget);
      for (const Expected& want : expected) {
        auto got = connection_->GetReply();
        if (!got) {
          Fail("connection lost: " + connection_->error());
          return;
        }
        ++replies_;
        if (!Same(*got, want.reply)) {
          Fail(want.what + "-> " + Show(*got) + ", want " + Show(want.reply));
          // A wrong INCR reply would make every later one look wrong too.
          if (got->kind == RedisReply::Kind::kInteger && want.what.starts_with("INCR")) {
            counter_ = got->integer;
          }
        }
      }
      ++batches_;
    }
  }

  static bool Same(const RedisReply& a, const RedisReply& b) {
    if (a.kind != b.kind || a.text != b.text || a.elements.size() != b.elements.size()) {
      return false;
    }
    for (size_t i = 0; i < a.elements.size(); ++i) {
      if (!Same(a.elements[i], b.elements[i])) return false;
    }
    return true;
  }
  static std::string Show(const RedisReply& reply) {
    if (reply.kind == RedisReply::Kind::kError) return "error \"" + reply.text + "\"";
    if (reply.kind == RedisReply::Kind::kNil) return "nil";
    if (reply.kind != RedisReply::Kind::kArray) return "\"" + reply.text + "\"";
    std::string out = "[";
    for (const auto& element : reply.elements) out += Show(element) + " ";
    return out + "]";
  }

  std::vector<std::string> fixed_;
  std::vector<std::string> other_;
  std::string tag_;
  std::unique_ptr<RedisConnection> connection_;
  long long counter_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> batches_{0};
  std::atomic<long> replies_{0};
  std::mutex mutex_;
  std::vector<std::string> errors_;
  std::thread thread_;
};

// Continues a SIGSTOPped process however the test ends.
struct ContinueOnExit {
  pid_t pid;
  ~ContinueOnExit() {
    if (pid > 0) kill(pid, SIGCONT);
  }
};

TEST_F(ProxyTest, SlotMigrationIsInvisibleToPipeliningClients) {
  // No periodic refresh: the proxy learns about the move only from MOVED.
  UpWithProxy({"--refresh-interval", "60s"});
  ASSERT_FALSE(HasFailure());
  const std::string tag = "{mig}:";
  const int slot = common::KeySlot(tag + "x");
  const int source = OwnerPort(slot);
  ASSERT_NE(source, 0);
  const int target = source == shard_port(0) ? shard_port(1) : shard_port(0);
  const std::string source_id = NodeId(source), target_id = NodeId(target);
  ASSERT_FALSE(source_id.empty() || target_id.empty());

  std::vector<std::string> fixed, other;
  for (int i = 0; i < 20; ++i) fixed.push_back(tag + "k" + std::to_string(i));
  for (int shard = 0; shard < 3; ++shard) other.push_back(KeyOn(shard_port(shard), "mig:other"));
  auto seed = RedisConnection::Open(proxy_port());
  ASSERT_NE(seed, nullptr);
  for (size_t i = 0; i < fixed.size(); ++i) {
    auto set = seed->Command({"SET", fixed[i], "v" + std::to_string(i)});
    ASSERT_TRUE(set && set->text == "OK");
  }
  for (size_t i = 0; i < other.size(); ++i) {
    auto set = seed->Command({"SET", other[i], "o" + std::to_string(i)});
    ASSERT_TRUE(set && set->text == "OK");
  }
  ASSERT_EQ(IntegerOf(QueryRedis(source, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)})),
            20);

  // A RESP2 client here (hiredis) and a RESP3 one (redis-py), so the shards' RESP3
  // connections follow ASK and MOVED too.
  CheckingClient client(proxy_port(), fixed, other, tag);
  const fs::path stop_file = scratch_dir() / "stop-churn";
  auto resp3 =
      StartPythonScenario("churn", 3, {"--tag", tag, "--stop-file", stop_file.string()}, "churn");
  // Both clients run before, during and after each phase (pacing, not assertions).
  auto churn_batches = [&] {
    const std::string out = ReadFileText(scratch_dir() / "churn.out");
    size_t count = 0;
    for (size_t at = out.find("batch "); at != std::string::npos; at = out.find("batch ", at + 1)) {
      ++count;
    }
    return count;
  };
  auto wait_for_both = [&](int batches) {
    const size_t wanted = churn_batches() + static_cast<size_t>(batches);
    client.WaitForBatches(batches);
    WaitUntil([&] { return churn_batches() >= wanted || resp3->WaitForExit(0ms); }, 10s, 10ms);
  };
  wait_for_both(3);
  auto setslot = [&](int port, const std::vector<std::string>& args) {
    std::vector<std::string> command = {"CLUSTER", "SETSLOT", std::to_string(slot)};
    command.insert(command.end(), args.begin(), args.end());
    auto reply = QueryRedis(port, command);
    EXPECT_TRUE(reply && reply->text == "OK") << port << ": " << (reply ? reply->text : "no reply");
  };
  auto migrate = [&](const std::vector<std::string>& keys) {
    std::vector<std::string> command = {"MIGRATE", "127.0.0.1", std::to_string(target), "", "0",
                                        "5000",    "KEYS"};
    command.insert(command.end(), keys.begin(), keys.end());
    auto reply = QueryRedis(source, command);
    EXPECT_TRUE(reply && reply->text == "OK") << (reply ? reply->text : "no reply");
  };

  // Phase 1: half of the keys on the target, the slot still served by the source (ASK).
  setslot(target, {"IMPORTING", source_id});
  setslot(source, {"MIGRATING", target_id});
  migrate(std::vector<std::string>(fixed.begin(), fixed.begin() + 10));
  wait_for_both(3);
  auto moved_key = seed->Command({"GET", fixed[0]});
  ASSERT_TRUE(moved_key.has_value());
  EXPECT_EQ(moved_key->text, "v0") << "a migrated key read through the proxy";
  auto kept_key = seed->Command({"GET", fixed[15]});
  ASSERT_TRUE(kept_key.has_value());
  EXPECT_EQ(kept_key->text, "v15");
  auto fresh = seed->Command({"SET", tag + "fresh", "new"});
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->text, "OK");
  fresh = seed->Command({"GET", tag + "fresh"});
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->text, "new");
  auto on_target = RedisConnection::Open(target);
  ASSERT_NE(on_target, nullptr);
  EXPECT_EQ(TextOf(on_target->Command({"ASKING"})), "OK");
  EXPECT_EQ(IntegerOf(on_target->Command({"EXISTS", tag + "fresh"})), 1)
      << "a new key of a migrating slot belongs on the target";
  EXPECT_GT(ProxyCounter("ask_redirects"), 0);

  // Phase 2: everything moves, then the slot is the target's on every primary (MOVED). The
  // clients have written keys of the slot all along (tens of thousands on a slow machine): move
  // until none is left, as a node that loses a slot deletes the keys it still holds in it.
  for (int round = 0; round < 500; ++round) {
    auto keys = QueryRedis(source, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "1000"});
    ASSERT_TRUE(keys.has_value());
    if (keys->elements.empty()) break;
    std::vector<std::string> names;
    for (const auto& key : keys->elements) names.push_back(key.text);
    migrate(names);
  }
  ASSERT_EQ(IntegerOf(QueryRedis(source, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)})), 0)
      << "keys of the slot are still on the source: handing the slot over would delete them";
  setslot(target, {"NODE", target_id});
  setslot(source, {"NODE", target_id});
  for (int shard = 0; shard < 3; ++shard) {
    if (shard_port(shard) != source && shard_port(shard) != target) {
      setslot(shard_port(shard), {"NODE", target_id});
    }
  }
  EXPECT_TRUE(WaitUntil([&] { return ProxyCounter("moved_redirects") > 0; }, 5s));
  wait_for_both(3);
  client.Stop();
  std::ofstream(stop_file) << "stop\n";
  EXPECT_EQ(resp3->WaitForExit(30s), std::optional<int>(0))
      << ReadFileText(scratch_dir() / "churn.out") << ReadFileText(scratch_dir() / "churn.err");
  const std::string churned = ReadFileText(scratch_dir() / "churn.out");
  EXPECT_NE(churned.find("replies checked"), std::string::npos) << churned;
  EXPECT_GE(churn_batches(), 9u) << "the RESP3 client did not run through the phases";
  for (size_t i = 0; i < fixed.size(); ++i) {
    auto get = seed->Command({"GET", fixed[i]});
    ASSERT_TRUE(get.has_value());
    EXPECT_EQ(get->text, "v" + std::to_string(i));
  }
  EXPECT_EQ(IntegerOf(QueryRedis(source, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)})), 0);
  std::string errors;
  for (const auto& error : client.errors()) errors += "\n  " + error;
  EXPECT_TRUE(errors.empty()) << "wrong or lost replies during the migration:" << errors;
  EXPECT_GT(client.replies(), 500);
  std::cout << "[ measure  ] migration: " << client.replies() << " hiredis (RESP2) replies and "
            << churn_batches() * 60 << " redis-py (RESP3) replies checked; "
            << ProxyCounter("ask_redirects") << " ASK, " << ProxyCounter("moved_redirects")
            << " MOVED, " << ProxyCounter("retries") << " retries\n";
}

// A script whose key's slot moved to a shard that lost its scripts (a restart without
// persistence): the old owner answers MOVED, the new one NOSCRIPT, and the proxy, its map still
// naming the old owner, sends SCRIPT LOAD with the script there first. The SCRIPT LOAD must go
// along when the script follows MOVED to the new owner again.
TEST_F(ProxyTest, AScriptFollowsItsKeyToANewOwnerThatLostIt) {
  UpWithProxy({"--refresh-interval", "600s"});  // only MOVED makes it read the new map
  ASSERT_FALSE(HasFailure());
  const int source = shard_port(0);
  const int target = shard_port(1);
  const std::string key = KeyOn(source, "scripted");
  ASSERT_EQ(TextOf(Proxy({"SET", key, "value"})), "OK");
  auto sha = Proxy({"SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"});
  ASSERT_TRUE(sha && sha->text.size() == 40u) << (sha ? sha->text : "no reply");
  MoveSlotOf(key, source, target);
  auto flushed = QueryRedis(target, {"SCRIPT", "FLUSH"});
  ASSERT_TRUE(flushed && flushed->text == "OK");
  auto value = Proxy({"EVALSHA", sha->text, "1", key});
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->text, "value");
  EXPECT_GT(ProxyCounter("script_reloads"), 0);
  EXPECT_EQ(Keys(), 1);
  EXPECT_EQ(IntegerOf(QueryRedis(target, {"EXISTS", key})), 1);
  EXPECT_EQ(IntegerOf(Proxy({"DEL", key})), 1);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyTest, KilledPrimaryComesBackUnderTheSameClientConnection) {
  UpWithProxy();
  ASSERT_FALSE(HasFailure());
  const std::string key = KeyOn(shard_port(1), "kill:");
  auto connection = RedisConnection::Open(proxy_port());
  ASSERT_NE(connection, nullptr);
  auto id = connection->Command({"CLIENT", "ID"});
  ASSERT_TRUE(id && id->kind == RedisReply::Kind::kInteger);
  ASSERT_EQ(TextOf(connection->Command({"SET", key, "before"})), "OK");
  const pid_t old_pid = ShardPid(1);
  ASSERT_GT(old_pid, 0);
  ASSERT_EQ(kill(old_pid, SIGKILL), 0);
  const auto killed_at = Clock::now();

  std::map<std::string, int> errors_seen;
  bool recovered = false;
  for (int n = 0; n < 400 && Clock::now() - killed_at < 20s; ++n) {
    const std::string value = "after" + std::to_string(n);
    auto set = connection->Command({"SET", key, value});
    ASSERT_TRUE(set.has_value()) << "the proxy dropped the client: " << connection->error();
    auto get = connection->Command({"GET", key});
    ASSERT_TRUE(get.has_value()) << "the proxy dropped the client: " << connection->error();
    if (set->kind == RedisReply::Kind::kError) ++errors_seen[set->text];
    if (get->kind == RedisReply::Kind::kError) ++errors_seen[get->text];
    // The old process is gone, so a shard that answers is the restarted one.
    auto shard = QueryRedis(shard_port(1), {"PING"});
    if (set->text == "OK" && get->text == value && TextOf(shard) == "PONG") {
      recovered = true;
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(recovered) << "the connection never worked again";
  auto same = connection->Command({"CLIENT", "ID"});
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->integer, id->integer) << "not the same client connection";
  std::cout
      << "[ measure  ] kill -9 -> the same connection works again: "
      << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count()
      << " ms; errors seen meanwhile:";
  for (const auto& [text, count] : errors_seen) std::cout << "\n    " << count << " x " << text;
  std::cout << "\n";
}

TEST_F(ProxyTest, MaxPendingPausesReadingButLosesNothing) {
  UpWithProxy({"--max-pending", "4"});
  ASSERT_FALSE(HasFailure());
  std::vector<std::string> keys;
  for (int shard = 0; shard < 3; ++shard) {
    keys.push_back(KeyOn(shard_port(shard), "pend:"));
    ASSERT_EQ(TextOf(QueryRedis(proxy_port(), {"SET", keys.back(), keys.back()})), "OK");
  }
  auto connection = RedisConnection::Open(proxy_port());
  ASSERT_NE(connection, nullptr);
  constexpr int kCommands = 2000;
  for (int i = 0; i < kCommands; ++i) {
    if (i % 10 == 9) {
      connection->Append({"MGET", keys[2], keys[0], keys[1]});
    } else {
      connection->Append({"INCR", "pend:counter"});
    }
  }
  long long counter = 0;
  for (int i = 0; i < kCommands; ++i) {
    auto reply = connection->GetReply();
    ASSERT_TRUE(reply.has_value()) << "reply " << i << ": " << connection->error();
    if (i % 10 == 9) {
      ASSERT_EQ(reply->elements.size(), 3u) << "reply " << i;
      EXPECT_EQ(reply->elements[0].text, keys[2]);
      EXPECT_EQ(reply->elements[2].text, keys[1]);
    } else {
      ASSERT_EQ(reply->integer, ++counter) << "reply " << i << " out of order: " << reply->text;
    }
  }
  EXPECT_GT(ProxyCounter("paused_reads"), 0);
}

TEST_F(ProxyTest, SlowReaderGetsEveryByteWhileReadingFromItPauses) {
  // Only the reply buffer may pause reading here, not the number of requests in flight.
  UpWithProxy({"--max-client-buffer", "64kb", "--max-pending", "100000"});
  ASSERT_FALSE(HasFailure());
  const std::string value(32 * 1024, 'v');
  std::vector<std::string> keys;
  for (int shard = 0; shard < 3; ++shard) {
    keys.push_back(KeyOn(shard_port(shard), "slow:"));
    ASSERT_EQ(TextOf(QueryRedis(proxy_port(), {"SET", keys.back(), value})), "OK");
  }
  constexpr int kChunks = 30;
  constexpr int kPerChunk = 20;
  std::vector<std::string> chunks(kChunks);
  std::string expected;
  const std::string bulk = "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  auto argument = [](const std::string& text) {
    return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
  };
  for (int i = 0; i < kChunks * kPerChunk; ++i) {
    std::string& chunk = chunks[static_cast<size_t>(i / kPerChunk)];
    if (i % 2 == 0) {
      chunk += "*2\r\n" + argument("GET") + argument(keys[static_cast<size_t>(i % 3)]);
      expected += bulk;
    } else {
      chunk += "*3\r\n" + argument("MGET") + argument(keys[0]) + argument(keys[2]);
      expected += "*2\r\n" + bulk + bulk;
    }
  }
  // The shards' GET and MGET calls: 30 per chunk (an MGET is split in two).
  auto shard_reads = [&] {
    long long calls = 0;
    for (int shard = 0; shard < 3; ++shard) {
      auto info = QueryRedis(shard_port(shard), {"INFO", "commandstats"});
      for (const char* command : {"cmdstat_get:calls=", "cmdstat_mget:calls="}) {
        const size_t at = info ? info->text.find(command) : std::string::npos;
        if (at != std::string::npos) calls += std::atoll(info->text.c_str() + at + strlen(command));
      }
    }
    return calls;
  };
  const long long reads_before = shard_reads();
  RawConnection raw(proxy_port());
  ASSERT_TRUE(raw.connected());
  // ~29 MB of replies to a client that sends for a while before it reads anything: once the
  // replies held for it pass 64kb the proxy must stop reading its requests. Each chunk goes out
  // once the shards have answered the one before, so replies pile up while requests still come
  // (sent at once, a busy proxy could read them all before the first reply and never pause).
  std::thread sender([&] {
    for (size_t i = 0; i < chunks.size(); ++i) {
      raw.Send(chunks[i]);
      const long long answered = reads_before + 30 * static_cast<long long>(i + 1);
      WaitUntil([&] { return shard_reads() >= answered || ProxyCounter("paused_reads") > 0; }, 30s,
                5ms);
    }
  });
  // The client reads nothing until the proxy has paused it, however long that takes.
  const bool paused = WaitUntil([&] { return ProxyCounter("paused_reads") > 0; }, 60s);
  const std::string all = raw.ReadUntil(expected.size(), 30s);
  sender.join();
  EXPECT_TRUE(paused) << "the proxy kept reading from a client that did not read";
  ASSERT_EQ(all.size(), expected.size());
  EXPECT_TRUE(all == expected) << "reply bytes differ";
}

TEST_F(ProxyTest, MaxClientsRefusesTheNextConnection) {
  UpWithProxy({"--max-clients", "2"});
  ASSERT_FALSE(HasFailure());
  // Like Redis, the proxy counts a closed connection out once it has read the EOF: wait until
  // the startup PING's connection is gone and `first` is the only client.
  auto first = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(first);
  ASSERT_TRUE(WaitUntil(
      [&] {
        return TextOf(first->Command({"INFO", "clients"})).find("connected_clients:1\r\n") !=
               std::string::npos;
      },
      5s, 20ms));
  auto second = RedisConnection::Open(proxy_port());
  ASSERT_TRUE(second);
  ASSERT_EQ(TextOf(first->Command({"PING"})), "PONG");
  ASSERT_EQ(TextOf(second->Command({"PING"})), "PONG");
  {
    RawConnection third(proxy_port());
    ASSERT_TRUE(third.connected());
    third.Send("*1\r\n$4\r\nPING\r\n");
    bool closed = false;
    const std::string reply = third.ReadUntilClosed(3s, &closed);
    EXPECT_EQ(reply, "-ERR max number of clients reached\r\n");
    EXPECT_TRUE(closed);
  }
  EXPECT_EQ(TextOf(second->Command({"PING"})), "PONG") << "an admitted client was dropped";
  first.reset();
  // The slot frees once the proxy has seen the close.
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto pong = QueryRedis(proxy_port(), {"PING"});
        return pong && pong->text == "PONG";
      },
      5s, 50ms));
}

TEST_F(ProxyTest, HungPrimaryTimesOutThenServesAgain) {
  UpWithProxy({"--timeout", "300ms"});
  ASSERT_FALSE(HasFailure());
  const std::string key = KeyOn(shard_port(2), "hung:");
  auto connection = RedisConnection::Open(proxy_port());
  ASSERT_NE(connection, nullptr);
  ASSERT_EQ(TextOf(connection->Command({"SET", key, "value"})), "OK");
  const pid_t pid = ShardPid(2);
  ASSERT_GT(pid, 0);
  {
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    ContinueOnExit continue_on_exit{pid};
    const auto sent = Clock::now();
    auto get = connection->Command({"GET", key});
    const auto took = Clock::now() - sent;
    ASSERT_TRUE(get.has_value()) << connection->error();
    EXPECT_EQ(get->kind, RedisReply::Kind::kError) << get->text;
    EXPECT_NE(get->text.find("no reply"), std::string::npos) << get->text;
    EXPECT_LT(took, 2s);
    auto other = connection->Command({"SET", KeyOn(shard_port(0), "hung:"), "x"});
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(other->text, "OK") << "a hung shard held up another shard's keys";
  }
  bool served = WaitUntil(
      [&] {
        auto get = connection->Command({"GET", key});
        return get && get->text == "value";
      },
      10s, 50ms);
  EXPECT_TRUE(served) << connection->error();
}

}  // namespace
}  // namespace shardctl::integration
