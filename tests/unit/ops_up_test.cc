// ClassifyExisting: what `up` does about what it finds in the state dir (start, adopt, nothing
// to do, refuse), decided from facts alone.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "launcher/ops/up_steps.h"

namespace shardctl::launcher {
namespace {

using Kind = Existing::Kind;

Deployment Requested(int shards) {
  Deployment deployment;
  deployment.plan.name = "main";
  deployment.plan.bind = "127.0.0.1";
  for (int i = 0; i < shards; ++i) {
    deployment.plan.shards.push_back({.index = i, .port = 7000 + i, .bus_port = 17000 + i});
  }
  deployment.engine.path = "/usr/bin/redis-server";
  return deployment;
}

struct ExistingCase {
  const char* label;
  int recorded_shards;  // 0: no readable deployment.json
  bool supervised;
  bool live_shards;
  Kind kind;
  std::vector<std::string> differences;
  size_t shards;
};

const ExistingCase kExistingCases[] = {
    {"nothing recorded", 0, false, false, Kind::kNone, {}, 0},
    {"record of a stopped deployment", 3, false, false, Kind::kResume, {}, 0},
    {"record of a stopped deployment with another shape",
     4,
     false,
     false,
     Kind::kOtherShape,
     {"shards: 4 -> 3 (live: shardctl scale --shards 3)"},
     0},
    {"same spec, supervised", 3, true, true, Kind::kRunning, {}, 3},
    {"same spec, supervisor still starting shards", 3, true, false, Kind::kRunning, {}, 3},
    {"same spec, shards without a supervisor", 3, false, true, Kind::kAdopt, {}, 0},
    {"another spec, supervised", 4, true, true, Kind::kDifferent, {"shards: 4 -> 3"}, 0},
    {"another spec, shards without a supervisor",
     2,
     false,
     true,
     Kind::kDifferent,
     {"shards: 2 -> 3"},
     0},
};

TEST(ExistingDeploymentTest, ClassifiesWhatUpFinds) {
  for (const ExistingCase& test : kExistingCases) {
    SCOPED_TRACE(test.label);
    ExistingFacts facts{.supervised = test.supervised, .live_shards = test.live_shards};
    if (test.recorded_shards > 0) facts.recorded = Requested(test.recorded_shards);
    Existing existing = ClassifyExisting(facts, Requested(3));
    EXPECT_EQ(existing.kind, test.kind);
    EXPECT_EQ(existing.differences, test.differences);
    EXPECT_EQ(existing.shards, test.shards);
  }
}

// ShapeDifferences: what a stopped deployment's data cannot be resumed with, and how to make
// each change live instead.
TEST(ShapeDifferencesTest, NamesEachDifferenceAndTheLiveCommand) {
  const Deployment recorded = Requested(3);
  EXPECT_TRUE(ShapeDifferences(recorded, Requested(3)).empty());

  Deployment other_memory = Requested(3);
  other_memory.plan.shards[0].maxmemory = 1 << 30;
  other_memory.plan.shards[1].cpus = {5};
  EXPECT_TRUE(ShapeDifferences(recorded, other_memory).empty())
      << "memory and CPUs may change on a resume";

  Deployment with_replicas = Requested(3);
  with_replicas.plan.shards.push_back(
      {.index = 3, .port = 7003, .bus_port = 17003, .role = Role::kReplica, .primary = 0});
  EXPECT_EQ(ShapeDifferences(recorded, with_replicas),
            std::vector<std::string>{"replicas: 0 -> 1 in all (shardctl cannot add or remove "
                                     "replicas of a deployment with data)"});

  Deployment other_ports = Requested(3);
  for (auto& shard : other_ports.plan.shards) shard.port += 100;
  ASSERT_EQ(ShapeDifferences(recorded, other_ports).size(), 1u);
  EXPECT_EQ(ShapeDifferences(recorded, other_ports)[0].rfind("shard 0 port/bus port: "
                                                             "7000/17000 -> 7100/17000",
                                                             0),
            0u);

  Deployment as_aof = Requested(3);
  Deployment as_rdb = Requested(3);
  as_rdb.durability.persistence = Persistence::kRdb;
  as_aof.durability.persistence = Persistence::kAof;
  EXPECT_EQ(ShapeDifferences(as_rdb, as_aof),
            std::vector<std::string>{"persistence: rdb -> aof (the shards would not start from "
                                     "their rdb data; resume with --persistence rdb)"});
  EXPECT_TRUE(ShapeDifferences(recorded, as_rdb).empty()) << "a cache may start keeping data";
  EXPECT_TRUE(ShapeDifferences(as_rdb, recorded).empty())
      << "to none, the data files are refused by name (CheckNoStrayData)";

  // With its data kept, a stopped deployment loads it back into the memory it is given: less
  // room, or another eviction policy, would evict keys or refuse writes as it resumes.
  Deployment kept = as_rdb;
  for (auto& shard : kept.plan.shards) shard.maxmemory = 600u << 20;
  kept.plan.maxmemory_policy = "allkeys-lru";
  Deployment smaller = kept;
  smaller.plan.shards[1].maxmemory = 8u << 20;
  EXPECT_EQ(ShapeDifferences(kept, smaller, " --name main"),
            std::vector<std::string>{
                "memory: shard 1 maxmemory 600mb -> 8mb (the shards load their data into it; "
                "resume with shardctl up --name main alone, which keeps the recorded settings, "
                "or give them)"});
  Deployment reset_policy = kept;
  reset_policy.plan.maxmemory_policy = "noeviction";
  ASSERT_EQ(ShapeDifferences(kept, reset_policy).size(), 1u);
  EXPECT_EQ(ShapeDifferences(kept, reset_policy)[0].rfind(
                "maxmemory-policy: allkeys-lru -> noeviction (the shards load", 0),
            0u);
  Deployment larger = kept;
  for (auto& shard : larger.plan.shards) shard.maxmemory = 1u << 30;
  EXPECT_TRUE(ShapeDifferences(kept, larger).empty()) << "more room evicts nothing";

  Deployment valkey = Requested(3);
  valkey.engine = {
      .kind = EngineKind::kValkey, .path = "/opt/valkey-server", .version = "9.1.2", .major = 9};
  ASSERT_EQ(ShapeDifferences(recorded, valkey).size(), 1u);
  EXPECT_NE(ShapeDifferences(recorded, valkey)[0].find(
                "(live: shardctl restart --rolling --engine /opt/valkey-server)"),
            std::string::npos);
}

// ResolveMetrics: the supervisor's metrics port must collide with nothing else `up` starts.
struct MetricsCase {
  const char* label;
  std::optional<int> metrics_port;
  int proxy_port;
  int proxy_metrics_port;
  std::string error;  // "" when accepted
};

const MetricsCase kMetricsCases[] = {
    {"no metrics port", std::nullopt, 0, 0, ""},
    {"a free port", 9121, 0, 0, ""},
    {"next to a proxy", 9121, 6379, 9122, ""},
    {"a shard's port", 7001, 0, 0,
     "--metrics-port 7001: shard 1 uses it (pick a port outside 7000-7002 and their bus ports)"},
    {"a shard's bus port", 17002, 0, 0, "--metrics-port 17002: shard 2 uses it"},
    {"the proxy's port", 6379, 6379, 0,
     "--metrics-port 6379: --proxy-port uses it (pick another port for one of them)"},
    {"the proxy's metrics port", 9122, 6379, 9122,
     "--metrics-port 9122: --proxy-metrics-port uses it"},
};

TEST(ResolveMetricsTest, RefusesPortsOtherPartsUse) {
  for (const MetricsCase& test : kMetricsCases) {
    SCOPED_TRACE(test.label);
    Spec spec;
    spec.metrics_port = test.metrics_port;
    ProxyConfig proxy{.port = test.proxy_port, .metrics_port = test.proxy_metrics_port};
    auto metrics = ResolveMetrics(spec, Requested(3).plan, proxy);
    if (test.error.empty()) {
      ASSERT_TRUE(metrics.ok()) << metrics.error().message();
      EXPECT_EQ(metrics->port, test.metrics_port.value_or(0));
      EXPECT_EQ(metrics->bind, "127.0.0.1");
    } else {
      ASSERT_FALSE(metrics.ok());
      EXPECT_EQ(metrics.error().message().rfind(test.error, 0), 0u) << metrics.error().message();
    }
  }
}

TEST(PlainPortClashTest, TheProxyAndMetricsPortsStayOffThePlainPorts) {
  Deployment deployment = Requested(3);
  deployment.proxy.port = 27001;
  deployment.metrics.port = 27003;
  EXPECT_TRUE(PlainPortClash(deployment).ok()) << "no --tls-also-plain, no plain ports";
  deployment.tls = {.cert = "/s.crt", .key = "/s.key", .ca = "/ca.crt", .plain_base_port = 27000};
  auto clash = PlainPortClash(deployment);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().message(),
            "--proxy-port 27001: shard 1 serves plain RESP there (--tls-also-plain uses "
            "27000-27002; pick another port or --plain-base-port)");
  deployment.proxy.port = 6380;
  EXPECT_TRUE(PlainPortClash(deployment).ok()) << "27003 is past the last plain port";
  deployment.metrics.port = 27000;
  EXPECT_FALSE(PlainPortClash(deployment).ok());
}

TEST(ResolveProxyTest, ProxyMetricsPortNeedsTheProxy) {
  Spec spec;
  spec.proxy_metrics_port = 9122;
  auto proxy = ResolveProxy(spec, Requested(3).plan);
  ASSERT_FALSE(proxy.ok());
  EXPECT_EQ(proxy.error().message(),
            "--proxy-metrics-port: needs --proxy-port (the proxy whose metrics to serve)");
}

}  // namespace
}  // namespace shardctl::launcher
