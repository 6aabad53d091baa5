// One Redis Cluster across two hosts: two network namespaces (tests/integration/netns_hosts.h)
// stand for two machines, each running its own shardctl with its own state. Host A forms the
// cluster; host B joins it with --join, its replicas follow A's primaries and A's replicas move to
// B's, and B's primaries take their share of the slots. Then one host is lost (kill -9 of all its
// processes), or restarts (down, up: it resumes from nodes.conf) and leaves (down --leave), and
// every write acknowledged before is read back from what remains. Needs root (skips otherwise).
#include <signal.h>

#include <fstream>
#include <thread>

#include "common/cluster_text.h"
#include "tests/integration/harness.h"
#include "tests/integration/netns_hosts.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPassword = "multihost-test-pw-71c2";
constexpr int kHostA = 0, kHostB = 1;

class MultiHostTest : public ShardctlTest {
 protected:
  void SetUp() override {
    ShardctlTest::SetUp();
    if (std::string why = hosts_.Make(); !why.empty()) GTEST_SKIP() << why;
    password_file_ = scratch_dir() / "pass";
    std::ofstream(password_file_) << kPassword << "\n";
    fs::permissions(password_file_, fs::perms::owner_read | fs::perms::owner_write);
  }
  void TearDown() override {
    for (int host : {kHostA, kHostB}) OnHost(host, {"down", "--purge"});
    ShardctlTest::TearDown();  // and every process of the test gone
  }

  static std::string Name(int host) { return host == kHostA ? "hosta" : "hostb"; }
  std::string Seed() const { return hosts_.address(kHostA) + ":" + std::to_string(base_port()); }

  CommandResult OnHost(int host, std::vector<std::string> args) {
    args.insert(args.begin(), ShardctlBinary());
    args.insert(args.end(), {"--name", Name(host), "--state-dir", state_root().string()});
    return hosts_.In(host, args, 120s);
  }
  CommandResult UpOn(int host, int shards, int replicas, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"up",
                                     "--shards",
                                     std::to_string(shards),
                                     "--replicas",
                                     std::to_string(replicas),
                                     "--base-port",
                                     std::to_string(base_port()),
                                     "--bind",
                                     hosts_.address(host),
                                     "--password-file",
                                     password_file_.string(),
                                     "--cluster-node-timeout",
                                     "2000",
                                     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    return OnHost(host, args);
  }
  CommandResult Cli(int host, int port, std::vector<std::string> args) {
    std::vector<std::string> command = {
        "redis-cli", "--no-auth-warning",  "-a", kPassword,
        "-h",        hosts_.address(host), "-p", std::to_string(port)};
    command.insert(command.end(), args.begin(), args.end());
    return hosts_.In(host, command, 20s);
  }
  std::vector<common::NodeLine> ClusterNodes(int host) {
    auto listing = Cli(host, base_port(), {"CLUSTER", "NODES"});
    auto lines = common::ParseClusterNodes(listing.out);
    EXPECT_TRUE(lines.ok()) << listing.Describe();
    return lines.ok() ? *lines : std::vector<common::NodeLine>{};
  }

  // Writes unique keys through redis-py's cluster client from `host` for `seconds`, then reads
  // them back; returns its verdict.
  json WriteFor(int host, const std::string& prefix, std::chrono::seconds seconds) {
    const fs::path stop = scratch_dir() / (prefix + ".stop");
    const fs::path out = scratch_dir() / (prefix + ".out"), err = scratch_dir() / (prefix + ".err");
    BackgroundCommand writer({"ip", "netns", "exec", hosts_.ns(host), Python(), WriterScript(),
                              "--host", hosts_.address(host), "--port", std::to_string(base_port()),
                              "--cluster", "--password-file", password_file_.string(), "--prefix",
                              prefix, "--stop-file", stop.string(), "--max-seconds", "60"},
                             out, err);
    std::this_thread::sleep_for(seconds);
    std::ofstream(stop).put('\n');
    EXPECT_EQ(writer.WaitForExit(60s), std::optional<int>(0)) << ReadFileText(err);
    json verdict = json::parse(ReadFileText(out), nullptr, false);
    EXPECT_TRUE(verdict.is_object()) << ReadFileText(out) << ReadFileText(err);
    return verdict.is_object() ? verdict : json::object();
  }
  // Reads keys 0..count-1 of `prefix` back through the cluster from `host`.
  json ReadBack(int host, const std::string& prefix, int count) {
    auto read = hosts_.In(
        host,
        {Python(), WriterScript(), "--host", hosts_.address(host), "--port",
         std::to_string(base_port()), "--cluster", "--password-file", password_file_.string(),
         "--prefix", prefix, "--read-back", std::to_string(count)},
        60s);
    EXPECT_EQ(read.exit_code, 0) << read.Describe();
    json verdict = json::parse(read.out, nullptr, false);
    return verdict.is_object() ? verdict : json::object();
  }
  static std::string Python() {
    const char* python = std::getenv("SHARDCTL_PYTHON");
    return python ? python : "python3";
  }
  static std::string WriterScript() {
    return (SourceDir() / "tests/integration/acked_writer.py").string();
  }

  // True when every primary of `host` has replicas whose offsets reached its own.
  bool ReplicasCaughtUp(int host, int shards) {
    for (int i = 0; i < shards; ++i) {
      auto info = Cli(host, base_port() + i, {"INFO", "replication"}).out;
      if (info.find("role:master") == std::string::npos) continue;
      auto field = [&](const std::string& key) {  // the rest of the line after `key`
        auto at = info.find(key);
        if (at == std::string::npos) return std::string();
        at += key.size();
        return info.substr(at, info.find('\n', at) - at);
      };
      const std::string offset = field("master_repl_offset:");
      for (int k = 0; k < 4; ++k) {
        const std::string replica = field("slave" + std::to_string(k) + ":");
        if (replica.empty()) break;
        auto theirs = replica.find("offset=");
        if (theirs == std::string::npos) return false;
        if (std::stoll(replica.substr(theirs + 7)) != std::stoll(offset)) return false;
      }
    }
    return true;
  }

  NetnsHosts hosts_{212};
  fs::path password_file_;
};

// The join: one cluster of both hosts' shards, replicas across hosts, slots shared.
void ExpectOneClusterReplicasApart(const std::vector<common::NodeLine>& nodes, size_t count) {
  ASSERT_EQ(nodes.size(), count);
  int slots = 0;
  for (const auto& node : nodes) {
    for (const auto& range : node.slots) slots += range.last - range.first + 1;
    if (!node.IsReplica()) continue;
    const common::NodeLine* primary = common::FindNode(nodes, node.master_id);
    ASSERT_NE(primary, nullptr) << node.id;
    EXPECT_NE(primary->address.host, node.address.host)
        << "replica " << node.address.ToString() << " shares a host with its primary "
        << primary->address.ToString();
  }
  EXPECT_EQ(slots, 16384);
}

// Redis Cluster fails a primary over only when a majority of primaries sees it down, so the host
// that is lost here holds the fewer primaries (one of three); docs/multi-host.md says why.
TEST_F(MultiHostTest, JoinedHostsShareSlotsAndLosingOneLosesNoAcknowledgedWrite) {
  auto a = UpOn(kHostA, 1, 2);
  ASSERT_EQ(a.exit_code, 0) << a.Describe();
  auto b = UpOn(kHostB, 2, 1, {"--join", Seed(), "--cluster-name", "prod"});
  ASSERT_EQ(b.exit_code, 0) << b.Describe();
  json joined = json::parse(b.out);
  EXPECT_EQ(joined["joined"], true) << b.out;
  EXPECT_EQ(joined["joined_nodes"], 3) << b.out;
  const int share = joined.value("share_slots", 0);
  EXPECT_TRUE(share >= 10922 && share <= 10923) << "two of three primaries' slots: " << b.out;

  ExpectOneClusterReplicasApart(ClusterNodes(kHostB), 7);
  auto view = OnHost(kHostB, {"status", "--cluster", "--json"});
  ASSERT_EQ(view.exit_code, 0) << view.Describe();
  json cluster = json::parse(view.out);
  EXPECT_EQ(cluster["hosts"], 2);
  EXPECT_EQ(cluster["cluster_name"], "prod");
  EXPECT_EQ(OnHost(kHostA, {"status"}).exit_code, 0) << "host A is healthy with B in its cluster";

  // Repeating the join changes nothing.
  auto again = UpOn(kHostB, 2, 1, {"--join", Seed(), "--cluster-name", "prod"});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(json::parse(again.out).value("already_running", false), true) << again.out;

  json written = WriteFor(kHostB, "before-loss", 3s);
  ASSERT_GT(written.value("acked", 0), 100) << written.dump();
  ASSERT_EQ(written["errors"], 0) << written.dump();
  ASSERT_EQ(written["lost"], 0) << written.dump();
  ASSERT_TRUE(WaitUntil([&] { return ReplicasCaughtUp(kHostA, 3); }, 20s, 100ms));

  // Host A is lost: its supervisor and every shard, kill -9.
  for (const auto& process : PidFilesUnder(state_root())) {
    if (process.source.find("/" + Name(kHostA) + "/") != std::string::npos) {
      kill(process.pid, SIGKILL);
    }
  }
  // B's replicas of A's primaries take over on their own (cluster-node-timeout 2 s).
  EXPECT_TRUE(WaitUntil(
      [&] {
        int primaries = 0;
        for (const auto& node : ClusterNodes(kHostB)) {
          primaries += node.address.host == hosts_.address(kHostB) && node.IsPrimary();
        }
        auto info = Cli(kHostB, base_port(), {"CLUSTER", "INFO"}).out;
        return primaries == 3 && info.find("cluster_state:ok") != std::string::npos;
      },
      30s, 200ms))
      << Cli(kHostB, base_port(), {"CLUSTER", "NODES"}).out;
  json survived = ReadBack(kHostB, "before-loss", written["acked"].get<int>());
  EXPECT_EQ(survived["lost"], 0) << survived.dump();
  EXPECT_EQ(survived["wrong"], 0) << survived.dump();
}

TEST_F(MultiHostTest, LeavingHandsPrimariesToReplicasElsewhereAndMovesTheRestOfItsSlots) {
  auto a = UpOn(kHostA, 2, 1);
  ASSERT_EQ(a.exit_code, 0) << a.Describe();
  // B: three primaries, no replicas. A's two replicas move to two of them; B's third has none.
  const std::vector<std::string> b_spec = {"--join", Seed(), "--persistence", "aof"};
  auto b = UpOn(kHostB, 3, 0, b_spec);
  ASSERT_EQ(b.exit_code, 0) << b.Describe();
  ExpectOneClusterReplicasApart(ClusterNodes(kHostA), 7);
  json written = WriteFor(kHostA, "before-leave", 3s);
  ASSERT_GT(written.value("acked", 0), 100) << written.dump();
  ASSERT_EQ(written["lost"], 0) << written.dump();
  ASSERT_TRUE(WaitUntil([&] { return ReplicasCaughtUp(kHostB, 3); }, 20s, 100ms));

  // B restarts (a reboot): its shards come back as themselves from nodes.conf and their AOF.
  auto stopped = OnHost(kHostB, {"down"});
  ASSERT_EQ(stopped.exit_code, 0) << stopped.Describe();
  auto resumed = UpOn(kHostB, 3, 0, b_spec);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_EQ(json::parse(resumed.out).value("resumed", false), true) << resumed.out;
  EXPECT_EQ(json::parse(resumed.out).value("share_slots", 0), 0) << "B kept its slots";
  EXPECT_TRUE(WaitUntil([&] { return OnHost(kHostA, {"status"}).exit_code == 0; }, 20s, 200ms));
  ExpectOneClusterReplicasApart(ClusterNodes(kHostA), 7);

  auto left = OnHost(kHostB, {"down", "--leave", "--json"});
  ASSERT_EQ(left.exit_code, 0) << left.Describe();
  json report = json::parse(left.out);
  EXPECT_EQ(report["failed_over"].size(), 2u) << left.out;
  EXPECT_GT(report["moved_slots"].get<int>(), 0) << "the primary without a replica drained";
  EXPECT_EQ(report["purged"], true);
  EXPECT_FALSE(fs::exists(state_root() / Name(kHostB)));

  // A serves every slot on its own; B's nodes are forgotten.
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto nodes = ClusterNodes(kHostA);
        auto info = Cli(kHostA, base_port(), {"CLUSTER", "INFO"}).out;
        return nodes.size() == 4 && info.find("cluster_state:ok") != std::string::npos;
      },
      20s, 200ms))
      << Cli(kHostA, base_port(), {"CLUSTER", "NODES"}).out;
  for (const auto& node : ClusterNodes(kHostA)) {
    EXPECT_EQ(node.address.host, hosts_.address(kHostA)) << node.id;
  }
  json survived = ReadBack(kHostA, "before-leave", written["acked"].get<int>());
  EXPECT_EQ(survived["lost"], 0) << survived.dump();
  EXPECT_EQ(survived["wrong"], 0) << survived.dump();
  auto status = OnHost(kHostA, {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.Describe();

  // With nobody left to take the slots, leaving is refused and nothing stops.
  auto alone = OnHost(kHostA, {"down", "--leave"});
  EXPECT_EQ(alone.exit_code, 2) << alone.Describe();
  EXPECT_NE(alone.err.find("nobody to leave the slots to"), std::string::npos) << alone.err;
  EXPECT_EQ(OnHost(kHostA, {"status"}).exit_code, 0);
}

}  // namespace
}  // namespace shardctl::integration
