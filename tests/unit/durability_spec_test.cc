// Durability settings end to end without a process: the spec keys (BuildSpec, ParseSpecToml), the
// lines each persistence profile puts in a shard's config (RenderShardConfig) and the JSON the
// deployment record keeps them in (DurabilityToJson / DurabilityFromJson).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/engine/engine.h"
#include "launcher/model/deployment.h"
#include "launcher/model/plan.h"
#include "launcher/model/plan_json.h"
#include "launcher/model/spec.h"

namespace shardctl::launcher {
namespace {

using std::chrono::milliseconds;

Setting Flag(const std::string& key, const std::string& value) { return {key, value, "--" + key}; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

Durability DurabilityOf(const std::vector<Setting>& settings) {
  auto spec = BuildSpec(settings);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return spec.ok() ? spec->durability : Durability{};
}

// ---------------------------------------------------------------------------------------------
// BuildSpec: accepted values.

TEST(DurabilitySpecTest, DefaultsAreACacheWithOneForkAtATime) {
  Durability durability = DurabilityOf({});
  EXPECT_EQ(durability.persistence, Persistence::kNone);
  EXPECT_EQ(durability.appendfsync, "everysec");
  EXPECT_EQ(durability.save_interval, milliseconds(300'000));
  EXPECT_EQ(durability.fork_limit, 1);
  EXPECT_EQ(durability.cluster_node_timeout, milliseconds(15'000));
  EXPECT_EQ(durability, Durability{});
}

struct AcceptCase {
  const char* key;
  const char* value;
  Durability expected;
};

Durability DefaultsWith(void (*change)(Durability&)) {
  Durability durability;
  change(durability);
  return durability;
}

class DurabilityAcceptTest : public testing::TestWithParam<AcceptCase> {};

TEST_P(DurabilityAcceptTest, SetsTheField) {
  const AcceptCase& c = GetParam();
  EXPECT_EQ(DurabilityOf({Flag(c.key, c.value)}), c.expected) << "--" << c.key << " " << c.value;
}

INSTANTIATE_TEST_SUITE_P(
    Values, DurabilityAcceptTest,
    testing::Values(
        AcceptCase{"persistence", "none",
                   DefaultsWith([](Durability& d) { d.persistence = Persistence::kNone; })},
        AcceptCase{"persistence", "rdb",
                   DefaultsWith([](Durability& d) { d.persistence = Persistence::kRdb; })},
        AcceptCase{"persistence", "aof",
                   DefaultsWith([](Durability& d) { d.persistence = Persistence::kAof; })},
        AcceptCase{"appendfsync", "always",
                   DefaultsWith([](Durability& d) { d.appendfsync = "always"; })},
        AcceptCase{"appendfsync", "everysec",
                   DefaultsWith([](Durability& d) { d.appendfsync = "everysec"; })},
        AcceptCase{"appendfsync", "no", DefaultsWith([](Durability& d) { d.appendfsync = "no"; })},
        AcceptCase{"save-interval", "5m",
                   DefaultsWith([](Durability& d) { d.save_interval = milliseconds(300'000); })},
        AcceptCase{"save-interval", "1s",
                   DefaultsWith([](Durability& d) { d.save_interval = milliseconds(1'000); })},
        AcceptCase{"save-interval", "90s",
                   DefaultsWith([](Durability& d) { d.save_interval = milliseconds(90'000); })},
        AcceptCase{"save-interval", "1h",
                   DefaultsWith([](Durability& d) { d.save_interval = milliseconds(3'600'000); })},
        AcceptCase{"save-interval", "1000",
                   DefaultsWith([](Durability& d) { d.save_interval = milliseconds(1'000); })},
        AcceptCase{"fork-limit", "1", DefaultsWith([](Durability& d) { d.fork_limit = 1; })},
        AcceptCase{"fork-limit", "3", DefaultsWith([](Durability& d) { d.fork_limit = 3; })},
        AcceptCase{"fork-limit", "1000", DefaultsWith([](Durability& d) { d.fork_limit = 1000; })},
        AcceptCase{"cluster-node-timeout", "5s", DefaultsWith([](Durability& d) {
                     d.cluster_node_timeout = milliseconds(5'000);
                   })},
        AcceptCase{"cluster-node-timeout", "100ms",
                   DefaultsWith([](Durability& d) { d.cluster_node_timeout = milliseconds(100); })},
        AcceptCase{"cluster-node-timeout", "1.5s", DefaultsWith([](Durability& d) {
                     d.cluster_node_timeout = milliseconds(1'500);
                   })}),
    [](const testing::TestParamInfo<AcceptCase>& case_info) {
      std::string name = std::string(case_info.param.key) + "_" + case_info.param.value;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// ---------------------------------------------------------------------------------------------
// BuildSpec: refused values.

struct RefuseCase {
  const char* key;
  const char* value;
  const char* mentions;  // part of the message besides the `where`
};

class DurabilityRefuseTest : public testing::TestWithParam<RefuseCase> {};

TEST_P(DurabilityRefuseTest, NamesTheFlagAndTheFix) {
  const RefuseCase& c = GetParam();
  auto spec = BuildSpec({Flag(c.key, c.value)});
  ASSERT_FALSE(spec.ok()) << "--" << c.key << " " << c.value;
  const std::string& message = spec.error().message();
  EXPECT_EQ(message.rfind("--" + std::string(c.key) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(c.mentions), std::string::npos) << message;
  EXPECT_EQ(Lines(message).size(), 1u) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Values, DurabilityRefuseTest,
    testing::Values(RefuseCase{"persistence", "bogus", "use none, rdb or aof"},
                    RefuseCase{"persistence", "", "use none, rdb or aof"},
                    RefuseCase{"persistence", "rdb+aof", "use none, rdb or aof"},
                    RefuseCase{"appendfsync", "sometimes", "use always, everysec or no"},
                    RefuseCase{"appendfsync", "", "use always, everysec or no"},
                    RefuseCase{"save-interval", "500ms", "at least 1s"},
                    RefuseCase{"save-interval", "999", "at least 1s"},
                    RefuseCase{"save-interval", "0", "at least 1s"},
                    RefuseCase{"save-interval", "soon", "soon"},
                    RefuseCase{"fork-limit", "0", "between 1 and 1000"},
                    RefuseCase{"fork-limit", "-1", "between 1 and 1000"},
                    RefuseCase{"fork-limit", "1001", "between 1 and 1000"},
                    RefuseCase{"fork-limit", "two", "not a whole number"},
                    RefuseCase{"cluster-node-timeout", "50ms", "at least 100ms"},
                    RefuseCase{"cluster-node-timeout", "99", "at least 100ms"},
                    RefuseCase{"cluster-node-timeout", "later", "later"}),
    [](const testing::TestParamInfo<RefuseCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(DurabilitySpecTest, EveryProblemIsReportedAtOnce) {
  auto spec = BuildSpec({Flag("persistence", "bogus"), Flag("appendfsync", "sometimes"),
                         Flag("save-interval", "500ms"), Flag("fork-limit", "0"),
                         Flag("cluster-node-timeout", "50ms")});
  ASSERT_FALSE(spec.ok());
  auto lines = Lines(spec.error().message());
  const std::vector<std::string> wheres = {
      "--persistence: ", "--appendfsync: ", "--save-interval: ", "--fork-limit: ",
      "--cluster-node-timeout: "};
  ASSERT_EQ(lines.size(), wheres.size()) << spec.error().message();
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(wheres[i], 0), 0u) << lines[i];
  }
}

TEST(DurabilitySpecTest, FlagsOverrideTheFile) {
  Durability durability = DurabilityOf({{"persistence", "rdb", "cluster.toml:1:15: persistence"},
                                        {"fork-limit", "2", "cluster.toml:2:14: fork-limit"},
                                        Flag("persistence", "aof"),
                                        Flag("fork-limit", "4")});
  EXPECT_EQ(durability.persistence, Persistence::kAof);
  EXPECT_EQ(durability.fork_limit, 4);
}

TEST(DurabilitySpecTest, KeysAreKnownForHelpAndSuggestions) {
  for (const char* key : {"replicas", "persistence", "appendfsync", "save-interval", "fork-limit",
                          "cluster-node-timeout"}) {
    EXPECT_TRUE(IsSpecKey(key)) << key;
    EXPECT_NE(std::find(SpecKeys().begin(), SpecKeys().end(), key), SpecKeys().end()) << key;
  }
  EXPECT_EQ(ClosestKey("persistance", SpecKeys()), "persistence");
  EXPECT_EQ(ClosestKey("fork-limt", SpecKeys()), "fork-limit");
  EXPECT_EQ(ClosestKey("appendfsnc", SpecKeys()), "appendfsync");
}

TEST(DurabilitySpecTest, ReadFromTomlWithLocations) {
  constexpr const char* kText =
      "shards = 3\n"
      "replicas = 1\n"
      "persistence = \"aof\"\n"
      "appendfsync = \"always\"\n"
      "save-interval = \"10m\"\n"
      "fork-limit = 2\n"
      "cluster-node-timeout = \"5s\"\n";
  auto settings = ParseSpecToml(kText, "durable.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  auto spec = BuildSpec(*settings);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->replicas, 1);
  EXPECT_EQ(spec->durability.persistence, Persistence::kAof);
  EXPECT_EQ(spec->durability.appendfsync, "always");
  EXPECT_EQ(spec->durability.save_interval, milliseconds(600'000));
  EXPECT_EQ(spec->durability.fork_limit, 2);
  EXPECT_EQ(spec->durability.cluster_node_timeout, milliseconds(5'000));

  auto bad = ParseSpecToml("fork-limit = 0\npersistence = \"disk\"\n", "bad.toml");
  ASSERT_TRUE(bad.ok()) << bad.error().message();
  auto refused = BuildSpec(*bad);
  ASSERT_FALSE(refused.ok());
  auto lines = Lines(refused.error().message());
  ASSERT_EQ(lines.size(), 2u) << refused.error().message();
  EXPECT_EQ(lines[0].rfind("bad.toml:1:", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("fork-limit"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("bad.toml:2:", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find("persistence"), std::string::npos) << lines[1];
}

TEST(DurabilitySpecTest, PersistenceNames) {
  EXPECT_STREQ(PersistenceName(Persistence::kNone), "none");
  EXPECT_STREQ(PersistenceName(Persistence::kRdb), "rdb");
  EXPECT_STREQ(PersistenceName(Persistence::kAof), "aof");
}

// ---------------------------------------------------------------------------------------------
// RenderShardConfig: the persistence lines.

// Directive -> every value it is given, comments and blank lines left out.
std::map<std::string, std::vector<std::string>> Directives(const std::string& config) {
  std::map<std::string, std::vector<std::string>> directives;
  for (const auto& line : Lines(config)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.find(' ');
    directives[line.substr(0, space)].push_back(
        space == std::string::npos ? "" : line.substr(space + 1));
  }
  return directives;
}

std::string Render(const Durability& durability) {
  Engine engine{.kind = EngineKind::kValkey,
                .path = "/usr/bin/valkey-server",
                .version = "8.0.1",
                .major = 8};
  Plan plan;
  plan.name = "durable";
  plan.bind = "127.0.0.1";
  plan.maxmemory_policy = "noeviction";
  ShardPlan shard{.index = 3, .port = 7003, .bus_port = 17003, .cpus = {3}, .maxmemory = 1 << 30};
  return RenderShardConfig(engine, plan, shard, "/var/lib/shardctl/durable/shard-3", durability);
}

struct ProfileCase {
  const char* name;
  Durability durability;
  std::map<std::string, std::string> has;  // directive -> its one value
  std::vector<std::string> lacks;          // directives that must not appear
};

class RenderProfileTest : public testing::TestWithParam<ProfileCase> {};

TEST_P(RenderProfileTest, WritesTheProfileLines) {
  const ProfileCase& c = GetParam();
  std::string config = Render(c.durability);
  auto directives = Directives(config);
  for (const auto& [directive, value] : c.has) {
    ASSERT_TRUE(directives.count(directive)) << directive << " missing from\n" << config;
    EXPECT_EQ(directives[directive], std::vector<std::string>{value}) << directive;
  }
  for (const auto& directive : c.lacks) {
    EXPECT_FALSE(directives.count(directive)) << directive << " should not be in\n" << config;
  }
  // Every profile: no save schedule of the server's own, the node timeout, replicas that sync at
  // once, and no directive given twice (the server would silently take the last).
  EXPECT_EQ(directives["save"], std::vector<std::string>{"\"\""});
  EXPECT_EQ(directives["cluster-node-timeout"],
            std::vector<std::string>{std::to_string(c.durability.cluster_node_timeout.count())});
  EXPECT_EQ(directives["repl-diskless-sync-delay"], std::vector<std::string>{"0"});
  // A primary emptied by a slot move must stay a primary (scale-in and rebalance rely on it).
  EXPECT_EQ(directives["cluster-allow-replica-migration"], std::vector<std::string>{"no"});
  EXPECT_EQ(directives["dbfilename"], std::vector<std::string>{"dump.rdb"});
  for (const auto& [directive, values] : directives) {
    EXPECT_EQ(values.size(), 1u) << directive << " appears " << values.size() << " times";
  }
  EXPECT_NE(config.find(std::string("# Persistence profile: ") +
                        PersistenceName(c.durability.persistence) + "."),
            std::string::npos)
      << config;
}

Durability Make(Persistence persistence, const char* appendfsync = "everysec",
                milliseconds node_timeout = milliseconds(15'000)) {
  Durability durability;
  durability.persistence = persistence;
  durability.appendfsync = appendfsync;
  durability.cluster_node_timeout = node_timeout;
  return durability;
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, RenderProfileTest,
    testing::Values(
        ProfileCase{"none",
                    Make(Persistence::kNone),
                    {{"appendonly", "no"}},
                    {"appendfsync", "auto-aof-rewrite-percentage", "aof-use-rdb-preamble"}},
        ProfileCase{"rdb",
                    Make(Persistence::kRdb),
                    {{"appendonly", "no"}},
                    {"appendfsync", "auto-aof-rewrite-percentage", "aof-use-rdb-preamble"}},
        ProfileCase{"aof",
                    Make(Persistence::kAof),
                    {{"appendonly", "yes"},
                     {"appendfsync", "everysec"},
                     {"auto-aof-rewrite-percentage", "0"},
                     {"aof-use-rdb-preamble", "yes"}},
                    {}},
        ProfileCase{"aof_always",
                    Make(Persistence::kAof, "always"),
                    {{"appendonly", "yes"}, {"appendfsync", "always"}},
                    {}},
        ProfileCase{"aof_no_fsync",
                    Make(Persistence::kAof, "no"),
                    {{"appendonly", "yes"}, {"appendfsync", "no"}},
                    {}},
        ProfileCase{"rdb_short_node_timeout",
                    Make(Persistence::kRdb, "everysec", milliseconds(5'000)),
                    {{"appendonly", "no"}, {"cluster-node-timeout", "5000"}},
                    {"appendfsync"}},
        // appendfsync only matters with an AOF: it is not written otherwise.
        ProfileCase{"none_ignores_appendfsync",
                    Make(Persistence::kNone, "always"),
                    {{"appendonly", "no"}},
                    {"appendfsync"}}),
    [](const testing::TestParamInfo<ProfileCase>& case_info) { return case_info.param.name; });

TEST(RenderProfileTest, DefaultDurabilityIsTheNoneProfile) {
  Engine engine{
      .kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15", .major = 7};
  Plan plan;
  plan.name = "cache";
  plan.bind = "127.0.0.1";
  plan.maxmemory_policy = "allkeys-lru";
  ShardPlan shard{.index = 0, .port = 7000, .bus_port = 17000, .cpus = {0}, .maxmemory = 1 << 20};
  EXPECT_EQ(RenderShardConfig(engine, plan, shard, "/d"),
            RenderShardConfig(engine, plan, shard, "/d", Durability{}));
  auto directives = Directives(RenderShardConfig(engine, plan, shard, "/d"));
  EXPECT_EQ(directives["appendonly"], std::vector<std::string>{"no"});
  EXPECT_EQ(directives["cluster-node-timeout"], std::vector<std::string>{"15000"});
}

TEST(RenderProfileTest, ReplicasGetTheSameProfileAsPrimaries) {
  // The profile is per deployment: a replica writes the same persistence lines, so that it keeps
  // the data the same way once promoted.
  Engine engine{
      .kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15", .major = 7};
  Plan plan;
  plan.name = "ha";
  plan.bind = "127.0.0.1";
  plan.maxmemory_policy = "noeviction";
  ShardPlan primary{.index = 0, .port = 7000, .bus_port = 17000, .cpus = {0}, .maxmemory = 1 << 30};
  ShardPlan replica = primary;
  replica.index = 1;
  replica.port = 7001;
  replica.bus_port = 17001;
  replica.role = Role::kReplica;
  replica.primary = 0;
  Durability aof = Make(Persistence::kAof);
  auto from_primary = Directives(RenderShardConfig(engine, plan, primary, "/p", aof));
  auto from_replica = Directives(RenderShardConfig(engine, plan, replica, "/r", aof));
  for (const char* directive : {"appendonly", "appendfsync", "auto-aof-rewrite-percentage", "save",
                                "cluster-node-timeout", "repl-diskless-sync-delay"}) {
    EXPECT_EQ(from_primary[directive], from_replica[directive]) << directive;
  }
}

// ---------------------------------------------------------------------------------------------
// DurabilityToJson / DurabilityFromJson

class DurabilityJsonTest : public testing::TestWithParam<Durability> {};

TEST_P(DurabilityJsonTest, RoundTrips) {
  const Durability& durability = GetParam();
  nlohmann::json json = DurabilityToJson(durability);
  EXPECT_EQ(DurabilityFromJson(json), durability) << json.dump();
  // And through text, as the deployment record is stored.
  EXPECT_EQ(DurabilityFromJson(nlohmann::json::parse(json.dump())), durability) << json.dump();
}

Durability Full(Persistence persistence, const char* appendfsync, long long save_ms, int forks,
                long long node_timeout_ms) {
  Durability durability;
  durability.persistence = persistence;
  durability.appendfsync = appendfsync;
  durability.save_interval = milliseconds(save_ms);
  durability.fork_limit = forks;
  durability.cluster_node_timeout = milliseconds(node_timeout_ms);
  return durability;
}

INSTANTIATE_TEST_SUITE_P(Profiles, DurabilityJsonTest,
                         testing::Values(Durability{},
                                         Full(Persistence::kRdb, "everysec", 60'000, 1, 15'000),
                                         Full(Persistence::kAof, "always", 1'000, 3, 5'000),
                                         Full(Persistence::kAof, "no", 3'600'000, 1000, 100),
                                         Full(Persistence::kNone, "everysec", 300'000, 2, 2'500)));

TEST(DurabilityJsonTest, FieldNamesAreTheContract) {
  nlohmann::json json = DurabilityToJson(Full(Persistence::kAof, "always", 90'000, 3, 5'000));
  EXPECT_EQ(json, nlohmann::json::parse(R"({
    "persistence": "aof",
    "appendfsync": "always",
    "save_interval_ms": 90000,
    "fork_limit": 3,
    "cluster_node_timeout_ms": 5000
  })"));
}

TEST(DurabilityJsonTest, MissingFieldsTakeTheDefaults) {
  // A record written before durability existed has none of these fields.
  EXPECT_EQ(DurabilityFromJson(nlohmann::json::object()), Durability{});
  Durability partial = DurabilityFromJson(nlohmann::json{{"persistence", "rdb"}});
  EXPECT_EQ(partial, Full(Persistence::kRdb, "everysec", 300'000, 1, 15'000));
}

// A minimal deployment record of a Redis 7.0.15 deployment named `name`.
Deployment RedisRecord(const std::string& name) {
  Deployment deployment;
  deployment.plan.name = name;
  deployment.plan.engine = "redis";
  deployment.plan.bind = "127.0.0.1";
  deployment.plan.maxmemory_policy = "noeviction";
  deployment.engine = {
      .kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15", .major = 7};
  return deployment;
}

TEST(DurabilityJsonTest, DeploymentRecordKeepsDurability) {
  Deployment deployment = RedisRecord("durable");
  deployment.durability = Full(Persistence::kAof, "always", 120'000, 2, 5'000);
  auto back = DeploymentFromJson(nlohmann::json::parse(DeploymentToJson(deployment).dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->durability, deployment.durability);

  // Without a durability object (an older record): the defaults.
  nlohmann::json old = DeploymentToJson(deployment);
  old.erase("durability");
  auto older = DeploymentFromJson(old);
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_EQ(older->durability, Durability{});
}

TEST(DeploymentJsonTest, TlsRoundTripsAndAnOlderRecordHasNone) {
  Deployment deployment = RedisRecord("secure");
  deployment.tls = {
      .cert = "/t/s.crt", .key = "/t/s.key", .ca = "/t/ca.crt", .auth_clients = "yes"};
  auto back = DeploymentFromJson(nlohmann::json::parse(DeploymentToJson(deployment).dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->tls, deployment.tls);
  Deployment plain = deployment;
  plain.tls = {};
  EXPECT_EQ(DiffDeployments(plain, deployment),
            std::vector<std::string>{"tls: none -> /t/s.crt (auth-clients yes)"});
  nlohmann::json old = DeploymentToJson(deployment);
  old.erase("tls");
  auto older = DeploymentFromJson(old);
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_FALSE(older->tls.enabled());
}

TEST(DeploymentJsonTest, MetricsPortsRoundTripAndDefaultToNone) {
  Deployment deployment = RedisRecord("watched");
  deployment.metrics = {.port = 9121, .bind = "0.0.0.0"};
  deployment.proxy.port = 6379;
  deployment.proxy.metrics_port = 9122;
  nlohmann::json json = DeploymentToJson(deployment);
  EXPECT_EQ(json["metrics"], nlohmann::json::parse(R"({"port": 9121, "bind": "0.0.0.0"})"));
  EXPECT_EQ(json["proxy"]["metrics_port"], 9122);
  auto back = DeploymentFromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->metrics, deployment.metrics);
  EXPECT_EQ(back->proxy.metrics_port, 9122);

  // A record written before metrics existed: no endpoints, the loopback default.
  json.erase("metrics");
  json["proxy"].erase("metrics_port");
  auto older = DeploymentFromJson(json);
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_EQ(older->metrics, MetricsConfig{});
  EXPECT_FALSE(older->metrics.enabled());
  EXPECT_EQ(older->proxy.metrics_port, 0);
}

TEST(DeploymentJsonTest, TheRecordSaysAPasswordIsNeededButNeverHoldsIt) {
  Deployment deployment;
  deployment.plan.name = "closed";
  deployment.engine = {.kind = EngineKind::kRedis, .path = "/r", .version = "7.0.15", .major = 7};
  deployment.auth = {.password_required = true, .password = "never-in-json"};
  nlohmann::json json = DeploymentToJson(deployment);
  EXPECT_EQ(json.dump().find("never-in-json"), std::string::npos) << json.dump();
  EXPECT_EQ(json["auth"], nlohmann::json::parse(R"({"password": true})"));
  auto back = DeploymentFromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->auth.password_required);
  EXPECT_EQ(back->auth.password, "");  // state/ reads it from the password file
  json.erase("auth");                   // a record from before passwords: none
  EXPECT_FALSE(DeploymentFromJson(json)->auth.password_required);
}

}  // namespace
}  // namespace shardctl::launcher
