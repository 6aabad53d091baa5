// DiffDeployments: what `up` of a requested deployment would change in the running one. Each
// line is shown to the user when `up` refuses, so the exact text is checked.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "launcher/model/deployment.h"

namespace shardctl::launcher {
namespace {

// Three primaries on 127.0.0.1:7000-7002, redis at a fixed path, no proxy, no persistence.
Deployment Base() {
  Deployment deployment;
  deployment.plan.name = "main";
  deployment.plan.engine = "redis";
  deployment.plan.bind = "127.0.0.1";
  deployment.plan.maxmemory_policy = "noeviction";
  for (int i = 0; i < 3; ++i) {
    deployment.plan.shards.push_back({.index = i,
                                      .port = 7000 + i,
                                      .bus_port = 17000 + i,
                                      .cpus = {i},
                                      .numa_node = 0,
                                      .maxmemory = 1 << 30});
  }
  deployment.engine = {
      .kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15", .major = 7};
  return deployment;
}

struct DiffCase {
  const char* label;
  std::function<void(Deployment&)> change;  // applied to the requested deployment
  std::vector<std::string> expected;
};

const DiffCase kDiffCases[] = {
    {"same spec", [](Deployment&) {}, {}},
    {"engine binary",
     [](Deployment& d) { d.engine.path = "/opt/valkey/bin/valkey-server"; },
     {"engine binary: /usr/bin/redis-server -> /opt/valkey/bin/valkey-server"}},
    {"engine version alone (same binary)", [](Deployment& d) { d.engine.version = "7.2.4"; }, {}},
    {"health timeout",
     [](Deployment& d) { d.supervision.health_timeout = std::chrono::seconds(5); },
     {"health-timeout / hang-grace differ"}},
    {"hang grace",
     [](Deployment& d) { d.supervision.hang_grace = std::chrono::seconds(1); },
     {"health-timeout / hang-grace differ"}},
    {"proxy added",
     [](Deployment& d) { d.proxy.port = 7100; },
     {"proxy-port / proxy-threads: 0 -> 7100"}},
    {"proxy threads",
     [](Deployment& d) { d.proxy.threads = 4; },
     {"proxy-port / proxy-threads: 0 -> 0"}},
    {"proxy read-from",
     [](Deployment& d) { d.proxy.read_from = "replica"; },
     {"proxy-port / proxy-threads: 0 -> 0"}},
    {"proxy binary alone (found anew by every up)",
     [](Deployment& d) { d.proxy.binary = "/elsewhere/shardproxy"; },
     {}},
    {"metrics port",
     [](Deployment& d) { d.metrics.port = 9121; },
     {"metrics-port / proxy-metrics-port / metrics-bind: 0/0 on 127.0.0.1 -> 9121/0 on "
      "127.0.0.1"}},
    {"proxy metrics port and bind",
     [](Deployment& d) {
       d.proxy.metrics_port = 9122;
       d.metrics.bind = "0.0.0.0";
     },
     {"metrics-port / proxy-metrics-port / metrics-bind: 0/0 on 127.0.0.1 -> 0/9122 on "
      "0.0.0.0"}},
    {"persistence",
     [](Deployment& d) { d.durability.persistence = Persistence::kRdb; },
     {"persistence / appendfsync / save-interval / fork-limit / cluster-node-timeout differ "
      "(running: persistence none)"}},
    {"fork limit",
     [](Deployment& d) { d.durability.fork_limit = 2; },
     {"persistence / appendfsync / save-interval / fork-limit / cluster-node-timeout differ "
      "(running: persistence none)"}},
    {"plan (DiffPlans' lines come first)",
     [](Deployment& d) {
       d.plan.maxmemory_policy = "allkeys-lru";
       d.engine.path = "/opt/redis-server";
     },
     {"maxmemory-policy: noeviction -> allkeys-lru",
      "engine binary: /usr/bin/redis-server -> /opt/redis-server"}},
    {"password added",
     [](Deployment& d) { d.auth = {.password_required = true, .password = "s3cret"}; },
     {"password-file: none -> set"}},
    {"one more shard",
     [](Deployment& d) { d.plan.shards.push_back(d.plan.shards.back()); },
     {"shards: 3 -> 4"}},
};

TEST(DeploymentDiffTest, AnotherPasswordIsADifferenceThatNeverShowsEitherPassword) {
  Deployment running = Base();
  running.auth = {.password_required = true, .password = "old-secret"};
  Deployment requested = running;
  EXPECT_TRUE(DiffDeployments(running, requested).empty());
  requested.auth.password = "new-secret";
  EXPECT_EQ(DiffDeployments(running, requested),
            std::vector<std::string>{"password-file: holds another password"});
  requested.auth = {};
  EXPECT_EQ(DiffDeployments(running, requested),
            std::vector<std::string>{"password-file: set -> none"});
}

TEST(DeploymentDiffTest, ListsEveryDifferenceUpWouldMake) {
  for (const DiffCase& test : kDiffCases) {
    SCOPED_TRACE(test.label);
    Deployment requested = Base();
    test.change(requested);
    EXPECT_EQ(DiffDeployments(Base(), requested), test.expected);
  }
}

}  // namespace
}  // namespace shardctl::launcher
