// shardproxy's /metrics: command families (bounded label values), the per-thread counters and
// histogram, the sum over threads, the rendered text, and the session's timing of a command from
// its request to its complete reply.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/resp.h"
#include "proxy/services/metrics.h"
#include "proxy/session/session.h"
#include "tests/unit/proxy_fakes.h"

namespace shardctl::proxy {
namespace {

using namespace testing_fakes;

std::string_view FamilyOf(std::string_view command) {
  return CommandFamilies()[CommandFamilyOf(LookupCommand(command))];
}

TEST(CommandFamilyTest, TopCommandsByNameOthersByKindUnknownAsOther) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"GET", "get"},
      {"get", "get"},
      {"set", "set"},
      {"MGET", "mget"},
      {"HSET", "hset"},
      {"PING", "ping"},
      {"EVALSHA", "evalsha"},
      {"APPEND", "kind_single_key"},
      {"UNLINK", "kind_split"},
      {"ECHO", "kind_local"},
      {"DBSIZE", "kind_fanout"},
      {"SCAN", "kind_scan"},
      {"BLPOP", "kind_blocking"},
      {"SUBSCRIBE", "kind_pubsub"},
      {"NOSUCHCOMMAND", "other"},
      {"", "other"},
  };
  for (const auto& [command, family] : cases) EXPECT_EQ(FamilyOf(command), family) << command;
  // The label values are fixed: the same set whatever is sent.
  EXPECT_LT(CommandFamilies().size(), 64u);
}

TEST(ThreadMetricsTest, CountsOnCommandObservesOnReply) {
  ThreadMetrics metrics;
  const uint32_t get = CommandFamilyOf(LookupCommand("GET"));
  CommandStamp stamp = metrics.OnCommand(LookupCommand("GET"));
  EXPECT_NE(stamp.started_ns, 0u);
  EXPECT_EQ(stamp.family, get);
  EXPECT_EQ(metrics.commands(get), 1u);
  uint64_t observed = 0;
  for (size_t b = 0; b <= kDurationBounds.size(); ++b) observed += metrics.bucket(get, b);
  EXPECT_EQ(observed, 0u);  // not until the reply
  metrics.OnReply(stamp);
  // A stamp from 3 ms ago lands in the (2.5 ms, 5 ms] bucket.
  CommandStamp old = stamp;
  old.started_ns -= 3'000'000;
  metrics.OnReply(old);
  const size_t five_ms = 5;
  ASSERT_EQ(kDurationBounds[five_ms], 0.005);
  EXPECT_EQ(metrics.bucket(get, five_ms), 1u);
  observed = 0;
  for (size_t b = 0; b <= kDurationBounds.size(); ++b) observed += metrics.bucket(get, b);
  EXPECT_EQ(observed, 2u);
  EXPECT_GE(metrics.duration_sum_ns(get), 3'000'000u);
  // Longer than the last bound: the +Inf bucket.
  CommandStamp ancient = stamp;
  ancient.started_ns -= 60'000'000'000ull;
  metrics.OnReply(ancient);
  EXPECT_EQ(metrics.bucket(get, kDurationBounds.size()), 1u);
}

TEST(ThreadMetricsTest, BucketIsTheFirstBoundNotExceeded) {
  const std::vector<std::pair<uint64_t, size_t>> cases = {
      {0, 0},
      {100'000, 0},  // exactly 100 µs: le="0.0001"
      {100'001, 1},
      {3'000'000, 5},  // (2.5 ms, 5 ms]
      {10'000'000'000ull, 15},
      {10'000'000'001ull, 16},  // +Inf
  };
  for (const auto& [ns, bucket] : cases) EXPECT_EQ(ThreadMetrics::BucketOf(ns), bucket) << ns;
  // The table lookup agrees with a search of the bounds around every bound and power of two.
  std::vector<uint64_t> probes = {~uint64_t{0}};
  for (uint64_t bound : kDurationBoundsNs)
    probes.insert(probes.end(), {bound - 1, bound, bound + 1});
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t power = uint64_t{1} << bit;
    probes.insert(probes.end(), {power - 1, power, power + 1});
  }
  for (uint64_t ns : probes) {
    const auto searched = static_cast<size_t>(
        std::lower_bound(kDurationBoundsNs.begin(), kDurationBoundsNs.end(), ns) -
        kDurationBoundsNs.begin());
    EXPECT_EQ(ThreadMetrics::BucketOf(ns), searched) << ns;
  }
}

TEST(ThreadMetricsTest, ReadBatchStampsWhatItHandlesWithOneClockRead) {
  ThreadMetrics metrics;
  const uint32_t get = CommandFamilyOf(LookupCommand("GET"));
  CommandStamp first;
  {
    const ThreadMetrics::ReadBatch batch(&metrics);
    first = metrics.OnCommand(LookupCommand("GET"));
    EXPECT_NE(first.started_ns, 0u);
    EXPECT_EQ(metrics.OnCommand(LookupCommand("SET")).started_ns, first.started_ns);
    {
      const ThreadMetrics::ReadBatch nested(&metrics);  // keeps the outer batch's time
      EXPECT_EQ(metrics.OnCommand(LookupCommand("GET")).started_ns, first.started_ns);
    }
    EXPECT_EQ(metrics.OnCommand(LookupCommand("GET")).started_ns, first.started_ns);
    metrics.OnReply(first);  // answered within the same read: no time at all
    EXPECT_EQ(metrics.bucket(get, 0), 1u);
    EXPECT_EQ(metrics.duration_sum_ns(get), 0u);
  }
  // Outside a batch the clock is read again.
  uint64_t later = ThreadMetrics::ClockNs();
  while (later <= first.started_ns) later = ThreadMetrics::ClockNs();
  EXPECT_GE(metrics.OnCommand(LookupCommand("GET")).started_ns, later);
  const ThreadMetrics::ReadBatch without_metrics(nullptr);  // no --metrics-port: nothing to do
}

TEST(ProxyMetricsTest, SnapshotSumsThreadsAndNamesBackendErrors) {
  ProxyMetrics metrics(2);
  metrics.thread(0).OnReply(metrics.thread(0).OnCommand(LookupCommand("GET")));
  metrics.thread(1).OnReply(metrics.thread(1).OnCommand(LookupCommand("GET")));
  metrics.thread(1).OnCommand(LookupCommand("SET"));
  metrics.CountBackendError("127.0.0.1", 7001);
  metrics.CountBackendError("127.0.0.1", 7001);
  metrics.CountBackendError("::1", 7002);
  ProxyMetricsSnapshot snapshot = metrics.Snapshot();
  ASSERT_EQ(snapshot.families.size(), 2u);  // only families that saw commands
  EXPECT_EQ(snapshot.families[0].name, "get");
  EXPECT_EQ(snapshot.families[0].commands, 2u);
  uint64_t observed = 0;
  for (uint64_t count : snapshot.families[0].buckets) observed += count;
  EXPECT_EQ(observed, 2u);
  EXPECT_EQ(snapshot.families[1].name, "set");
  EXPECT_EQ(snapshot.families[1].commands, 1u);
  EXPECT_EQ(snapshot.backend_errors,
            (std::map<std::string, uint64_t>{{"127.0.0.1:7001", 2}, {"::1:7002", 1}}));
}

TEST(ProxyMetricsTest, BackendErrorLabelsAreBounded) {
  ProxyMetrics metrics(1);
  for (int port = 1; port <= 1100; ++port) metrics.CountBackendError("10.0.0.1", port);
  ProxyMetricsSnapshot snapshot = metrics.Snapshot();
  EXPECT_EQ(snapshot.backend_errors.size(), 1025u);
  EXPECT_EQ(snapshot.backend_errors["other"], 76u);
}

TEST(RenderProxyMetricsTest, NamesLabelsAndHistogram) {
  ProxyMetricsSnapshot snapshot;
  ProxyMetricsSnapshot::Family get{.name = "get", .commands = 3};
  get.buckets[0] = 2;
  get.buckets[3] = 1;
  get.duration_sum_seconds = 0.0012;
  snapshot.families.push_back(get);
  snapshot.client_connections = 4;
  snapshot.backend_errors["127.0.0.1:7001"] = 2;
  snapshot.moved = 5;
  snapshot.ask = 1;
  snapshot.slot_map_version = 9;
  const std::string text = RenderProxyMetrics(snapshot);
  for (const char* line : {
           "# TYPE shardproxy_commands_total counter\n",
           "shardproxy_commands_total{cmd=\"get\"} 3\n",
           "# TYPE shardproxy_command_duration_seconds histogram\n",
           "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"0.0001\"} 2\n",
           "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"0.0005\"} 2\n",
           "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"0.001\"} 3\n",
           "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"10\"} 3\n",
           "shardproxy_command_duration_seconds_bucket{cmd=\"get\",le=\"+Inf\"} 3\n",
           "shardproxy_command_duration_seconds_sum{cmd=\"get\"} 0.0012\n",
           "shardproxy_command_duration_seconds_count{cmd=\"get\"} 3\n",
           "# TYPE shardproxy_client_connections gauge\nshardproxy_client_connections 4\n",
           "shardproxy_backend_errors_total{shard=\"127.0.0.1:7001\"} 2\n",
           "shardproxy_redirects_total{kind=\"moved\"} 5\n",
           "shardproxy_redirects_total{kind=\"ask\"} 1\n",
           "# TYPE shardproxy_slot_map_version gauge\nshardproxy_slot_map_version 9\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "not in:\n" << text;
  }
}

// FakeServices with /metrics on: the session gets thread 1's counters.
class MeteredServices : public FakeServices {
 public:
  ThreadMetrics* metrics(int thread) override { return &registry.thread(thread); }
  ProxyMetrics registry{2};
};

class SessionMetricsTest : public testing::Test {
 protected:
  SessionMetricsTest() : session_(router_, services_, link_, /*id=*/7, /*thread=*/1) {}
  ~SessionMetricsTest() override {
    while (SubRequest* request = router_.Take()) session_.OnReply(request, "+OK\r\n");
  }

  void Send(std::initializer_list<std::string_view> args) {
    std::string frame;
    common::AppendCommand(frame, std::vector<std::string_view>(args));
    auto parsed = common::ParseCommandArgs(frame);
    ASSERT_TRUE(parsed.ok());
    session_.HandleCommand(frame, *parsed);
  }
  // Commands counted and durations observed for `command`'s family on the session's thread.
  std::pair<uint64_t, uint64_t> Seen(std::string_view command) {
    const ThreadMetrics& metrics = services_.registry.thread(1);
    const uint32_t family = CommandFamilyOf(LookupCommand(command));
    uint64_t observed = 0;
    for (size_t b = 0; b <= kDurationBounds.size(); ++b) observed += metrics.bucket(family, b);
    return {metrics.commands(family), observed};
  }

  FakeRouter router_;
  MeteredServices services_;
  FakeClientLink link_;
  Session session_;
};

TEST_F(SessionMetricsTest, ForwardedCommandIsTimedUntilItsReply) {
  Send({"GET", "a"});
  Send({"GET", "b"});
  EXPECT_EQ(Seen("GET"), (std::pair<uint64_t, uint64_t>(2, 0)));
  SubRequest* first = router_.Take();
  SubRequest* second = router_.Take();
  session_.OnReply(second, "$-1\r\n");  // ready, though written after the first
  EXPECT_EQ(Seen("GET"), (std::pair<uint64_t, uint64_t>(2, 1)));
  session_.OnReply(first, "$-1\r\n");
  EXPECT_EQ(Seen("GET"), (std::pair<uint64_t, uint64_t>(2, 2)));
}

TEST_F(SessionMetricsTest, SplitCommandIsObservedOnceWhenEveryPartAnswered) {
  Send({"MSET", "a", "1", "b", "2"});  // two slots, two parts
  SubRequest* part1 = router_.Take();
  SubRequest* part2 = router_.Take();
  ASSERT_NE(part2, nullptr);
  session_.OnReply(part1, "+OK\r\n");
  EXPECT_EQ(Seen("MSET"), (std::pair<uint64_t, uint64_t>(1, 0)));
  session_.OnReply(part2, "+OK\r\n");
  EXPECT_EQ(Seen("MSET"), (std::pair<uint64_t, uint64_t>(1, 1)));
}

TEST_F(SessionMetricsTest, LocalRepliesAndErrorsAreObservedAtOnce) {
  Send({"GET", "a"});
  Send({"PING"});           // queued behind GET's reply
  Send({"NOSUCHCOMMAND"});  // an error made by the proxy
  Send({"MGET"});           // wrong number of arguments
  EXPECT_EQ(Seen("PING"), (std::pair<uint64_t, uint64_t>(1, 1)));
  EXPECT_EQ(Seen("NOSUCHCOMMAND"), (std::pair<uint64_t, uint64_t>(1, 1)));
  EXPECT_EQ(Seen("MGET"), (std::pair<uint64_t, uint64_t>(1, 1)));
  EXPECT_EQ(Seen("GET"), (std::pair<uint64_t, uint64_t>(1, 0)));
}

TEST(SessionWithoutMetricsTest, NothingIsStamped) {
  FakeRouter router;
  FakeServices services;
  FakeClientLink link;
  Session session(router, services, link, 1, 0);
  std::string frame;
  common::AppendCommand(frame, std::vector<std::string_view>{"GET", "a"});
  auto parsed = common::ParseCommandArgs(frame);
  ASSERT_TRUE(parsed.ok());
  session.HandleCommand(frame, *parsed);
  SubRequest* request = router.Take();
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->pending->stamp.started_ns, 0u);
  session.OnReply(request, "$-1\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
