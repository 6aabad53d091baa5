// CopyKeys (launcher/cluster/key_copy.h) on its own, from a real standalone server into a real
// 3-primary cluster, with batches small enough that every worker takes many: one SCAN cut into
// many batches, each worker's batch written to the owners while it reads the next, batches of
// strings only, of DUMPs only and of both. Every key, value and TTL must arrive once; keys are
// counted on both sides before and after.
#include "launcher/cluster/key_copy.h"

#include "common/cluster_text.h"
#include "tests/integration/data_copy.h"
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class KeyCopyTest : public ShardctlTest {
 protected:
  int source_port() const { return base_port() + 40; }
  std::vector<int> ClusterPorts() { return {base_port(), base_port() + 1, base_port() + 2}; }
  common::SlotTable Table() {
    auto nodes = QueryRedis(base_port(), {"CLUSTER", "NODES"});
    EXPECT_TRUE(nodes.has_value());
    auto table = common::SlotTable::FromClusterNodes(nodes ? nodes->text : "");
    EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message());
    return table.ok() ? *table : common::SlotTable();
  }
};

TEST_F(KeyCopyTest, ManySmallBatchesPerWorkerCopyEveryKeyOnce) {
  BackgroundCommand source({"redis-server", "--port", std::to_string(source_port()), "--bind",
                            "127.0.0.1", "--save", "", "--dir", scratch_dir().string()},
                           scratch_dir() / "source.out", scratch_dir() / "source.err");
  ASSERT_TRUE(WaitUntil([&] { return !PortBindable(source_port()); }, 10s));
  const int written = WriteEveryType({"-p", std::to_string(source_port())}, 120);
  ASSERT_EQ(Up(3).exit_code, 0);
  const auto expected = ReadKeyspace({source_port()});
  ASSERT_EQ(expected.size(), static_cast<size_t>(written));
  // A TTL on every third key of the five types DUMP carries without one: 40 each.
  size_t typed_with_ttl = 0;
  for (const auto& [key, value] : expected) {
    if (!key.starts_with("string:") && !key.starts_with("ttl:") && value.pttl > 0) {
      ++typed_with_ttl;
    }
  }
  EXPECT_EQ(typed_with_ttl, 5u * 40u);
  const common::SlotTable table = Table();
  ASSERT_EQ(table.primaries().size(), 3u);

  // 7 keys a batch, 3 workers: ~140 batches, most of them mixed.
  // 1 key a batch, 1 worker: every batch is all strings or all DUMPs.
  for (auto [batch, workers] : {std::pair{7, 3}, std::pair{1, 1}}) {
    SCOPED_TRACE("batch " + std::to_string(batch) + ", workers " + std::to_string(workers));
    for (int port : ClusterPorts()) ASSERT_TRUE(QueryRedis(port, {"FLUSHALL"}).has_value());
    ASSERT_EQ(KeysAt(ClusterPorts()), 0);
    launcher::KeyCopyOptions options{.workers = workers, .batch = batch};
    uint64_t progress_calls = 0;
    options.on_progress = [&](uint64_t, uint64_t) { ++progress_calls; };
    auto copied = launcher::CopyKeys({"127.0.0.1", source_port()}, table, options);
    ASSERT_TRUE(copied.ok()) << copied.error().message();
    EXPECT_EQ(copied->keys, static_cast<uint64_t>(written));
    EXPECT_EQ(copied->vanished, 0u);
    EXPECT_GE(progress_calls, static_cast<uint64_t>(written / batch));
    EXPECT_EQ(KeysAt(ClusterPorts()), written);
    EXPECT_EQ(KeysAt({source_port()}), written) << "the copy changed the source";
    ExpectSameKeyspace(expected, ReadKeyspace(ClusterPorts()));
  }
}

}  // namespace
}  // namespace shardctl::integration
