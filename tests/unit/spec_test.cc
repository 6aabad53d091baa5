// Spec validation (BuildSpec), the TOML loader (ParseSpecToml) and "did you mean" suggestions.
#include "launcher/model/spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace shardctl::launcher {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

Setting Flag(const std::string& key, const std::string& value) { return {key, value, "--" + key}; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// BuildSpec

TEST(BuildSpecTest, NoSettingsGiveTheDefaults) {
  auto spec = BuildSpec({});
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->name, "default");
  EXPECT_FALSE(spec->shards.has_value());
  EXPECT_EQ(spec->base_port, 7000);
  EXPECT_FALSE(spec->bus_base_port.has_value());
  EXPECT_EQ(spec->BusBasePort(), 17000);
  EXPECT_EQ(spec->bind, "127.0.0.1");
  EXPECT_EQ(spec->engine, "redis");
  EXPECT_FALSE(spec->cpus.has_value());
  EXPECT_TRUE(spec->reserve_cpus.empty());
  EXPECT_FALSE(spec->memory.has_value());
  EXPECT_FALSE(spec->shard_memory.has_value());
  EXPECT_EQ(spec->max_shard_memory, 25 * kGiB);
  EXPECT_EQ(spec->maxmemory_policy, "noeviction");
  EXPECT_FALSE(spec->state_dir.has_value());
  EXPECT_EQ(spec->supervision.health_timeout, std::chrono::seconds(3));
  EXPECT_EQ(spec->supervision.hang_grace, std::chrono::seconds(30));
  EXPECT_EQ(*spec, Spec{});
}

TEST(BuildSpecTest, EveryKeyIsApplied) {
  auto spec =
      BuildSpec({Flag("name", "cache-1"), Flag("shards", "8"), Flag("base-port", "30000"),
                 Flag("bus-base-port", "40000"), Flag("bind", "10.0.0.5"), Flag("engine", "valkey"),
                 Flag("cpus", "2-9"), Flag("reserve-cpus", "0,1"), Flag("shard-memory", "512mb"),
                 Flag("max-shard-memory", "4gb"), Flag("maxmemory-policy", "allkeys-lru"),
                 Flag("state-dir", "/tmp/st"), Flag("password-file", "/etc/shardctl/pass")});
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->name, "cache-1");
  EXPECT_EQ(spec->shards, 8);
  EXPECT_EQ(spec->base_port, 30000);
  EXPECT_EQ(spec->BusBasePort(), 40000);
  EXPECT_EQ(spec->bind, "10.0.0.5");
  EXPECT_EQ(spec->engine, "valkey");
  EXPECT_EQ(spec->cpus, (std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(spec->reserve_cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(spec->shard_memory, 512 * kMiB);
  EXPECT_EQ(spec->max_shard_memory, 4 * kGiB);
  EXPECT_EQ(spec->maxmemory_policy, "allkeys-lru");
  EXPECT_EQ(spec->state_dir, std::filesystem::path("/tmp/st"));
  EXPECT_EQ(spec->password_file, std::filesystem::path("/etc/shardctl/pass"));
  EXPECT_FALSE(spec->allow_no_auth);
  EXPECT_EQ(spec->memory, std::nullopt);

  auto total = BuildSpec({Flag("memory", "16gb")});
  ASSERT_TRUE(total.ok()) << total.error().message();
  EXPECT_EQ(total->memory, 16 * kGiB);
}

TEST(BuildSpecTest, ABindBeyondLoopbackTakesAPasswordFileOrAllowNoAuth) {
  for (const char* bind : {"10.0.0.1", "0.0.0.0", "::", "fe80::1"}) {
    auto with_password = BuildSpec({Flag("bind", bind), Flag("password-file", "/etc/pass")});
    EXPECT_TRUE(with_password.ok()) << bind << ": " << with_password.error().message();
    auto trusted = BuildSpec({Flag("allow-no-auth", "true"), Flag("bind", bind)});
    ASSERT_TRUE(trusted.ok()) << bind << ": " << trusted.error().message();
    EXPECT_TRUE(trusted->allow_no_auth);
    auto open = BuildSpec({Flag("bind", bind), Flag("allow-no-auth", "false")});
    EXPECT_FALSE(open.ok()) << bind;
  }
  for (const char* bind : {"127.0.0.1", "127.0.0.9", "::1"}) {
    EXPECT_TRUE(BuildSpec({Flag("bind", bind)}).ok()) << bind;
  }
}

TEST(BuildSpecTest, TlsTakesCertificateKeyAndCaTogether) {
  auto all = BuildSpec({Flag("tls-cert", "s.crt"), Flag("tls-key", "s.key"),
                        Flag("tls-ca", "ca.crt"), Flag("tls-auth-clients", "optional")});
  ASSERT_TRUE(all.ok()) << all.error().message();
  EXPECT_EQ(all->tls_cert, std::filesystem::path("s.crt"));
  EXPECT_EQ(all->tls_auth_clients, std::optional<std::string>("optional"));
  for (const auto& two :
       std::vector<std::vector<Setting>>{{Flag("tls-cert", "s.crt"), Flag("tls-key", "s.key")},
                                         {Flag("tls-key", "s.key"), Flag("tls-ca", "ca.crt")},
                                         {Flag("tls-ca", "ca.crt")}}) {
    auto partial = BuildSpec(two);
    ASSERT_FALSE(partial.ok());
    EXPECT_NE(partial.error().message().find("TLS needs all three"), std::string::npos)
        << partial.error().message();
  }
}

TEST(BuildSpecTest, TlsAlsoPlainNeedsTls) {
  auto alone = BuildSpec({Flag("tls-also-plain", "true")});
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.error().message().find("--tls-also-plain: only means something with TLS"),
            std::string::npos)
      << alone.error().message();
  auto with = BuildSpec({Flag("tls-cert", "s.crt"), Flag("tls-key", "s.key"),
                         Flag("tls-ca", "ca.crt"), Flag("tls-also-plain", "true")});
  ASSERT_TRUE(with.ok()) << with.error().message();
  EXPECT_TRUE(with->tls_also_plain);
}

// The examples in configs/ are what users copy: each must read and build a valid spec.
TEST(BuildSpecTest, EveryExampleConfigIsValid) {
  int read = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(SHARDCTL_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    auto settings = ReadSpecFile(entry.path());
    ASSERT_TRUE(settings.ok()) << settings.error().message();
    auto spec = BuildSpec(*settings);
    EXPECT_TRUE(spec.ok()) << spec.error().message();
    ++read;
  }
  EXPECT_GE(read, 4);
}

TEST(BuildSpecTest, BusBasePortFollowsTheBasePortUnlessSet) {
  auto spec = BuildSpec({Flag("base-port", "20000")});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->BusBasePort(), 30000);
}

struct ValidCase {
  const char* key;
  const char* value;
};

class BuildSpecValidTest : public testing::TestWithParam<ValidCase> {};

TEST_P(BuildSpecValidTest, Accepts) {
  auto spec = BuildSpec({Flag(GetParam().key, GetParam().value)});
  EXPECT_TRUE(spec.ok()) << GetParam().key << "=" << GetParam().value << ": "
                         << spec.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Values, BuildSpecValidTest,
    testing::Values(ValidCase{"shards", "1"}, ValidCase{"shards", "1000"},
                    ValidCase{"base-port", "1"}, ValidCase{"base-port", "65535"},
                    ValidCase{"bus-base-port", "65535"}, ValidCase{"bind", "::1"},
                    ValidCase{"bind", "127.0.0.2"}, ValidCase{"allow-no-auth", "false"},
                    ValidCase{"password-file", "pass"}, ValidCase{"announce", "10.0.0.7"},
                    ValidCase{"announce", "fd00::7"}, ValidCase{"announce", "cache-1.example.com"},
                    ValidCase{"announce", "localhost"}, ValidCase{"join", "10.0.0.1:7000"},
                    ValidCase{"join", "[fd00::1]:7000"}, ValidCase{"join", "cache-1.example:7000"},
                    ValidCase{"cluster-name", "prod"}, ValidCase{"preferred-endpoint", "ip"},
                    ValidCase{"cluster-name", "eu-1.cache_a"}, ValidCase{"engine", "redis"},
                    ValidCase{"engine", "valkey"}, ValidCase{"engine", "/usr/bin/redis-server"},
                    ValidCase{"engine", "./valkey-server"}, ValidCase{"cpus", "0"},
                    ValidCase{"cpus", "0-3,8,10-11"}, ValidCase{"reserve-cpus", ""},
                    ValidCase{"reserve-cpus", "0-1"}, ValidCase{"memory", "1.5gb"},
                    ValidCase{"shard-memory", "100mb"}, ValidCase{"max-shard-memory", "1tb"},
                    ValidCase{"maxmemory-policy", "volatile-ttl"},
                    ValidCase{"maxmemory-policy", "allkeys-lfu"}, ValidCase{"name", "a.b_c-1"},
                    ValidCase{"health-timeout", "100ms"}, ValidCase{"health-timeout", "3s"},
                    ValidCase{"hang-grace", "30s"}, ValidCase{"hang-grace", "2m"},
                    ValidCase{"metrics-port", "9121"}, ValidCase{"metrics-port", "65535"},
                    ValidCase{"proxy-metrics-port", "1"}, ValidCase{"metrics-bind", "0.0.0.0"},
                    ValidCase{"metrics-bind", "::1"}),
    [](const testing::TestParamInfo<ValidCase>& case_info) {
      return std::to_string(case_info.index);
    });

struct InvalidCase {
  const char* key;
  const char* value;
  const char* mentions;  // part of the message besides the `where`
};

void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.key << "=\"" << c.value << '"'; }

class BuildSpecInvalidTest : public testing::TestWithParam<InvalidCase> {};

TEST_P(BuildSpecInvalidTest, RefusesNamingTheSetting) {
  const InvalidCase& c = GetParam();
  auto spec = BuildSpec({{c.key, c.value, "cluster.toml:3:1: " + std::string(c.key)}});
  ASSERT_FALSE(spec.ok());
  const std::string& message = spec.error().message();
  EXPECT_EQ(Lines(message).size(), 1u) << message;
  EXPECT_EQ(message.rfind("cluster.toml:3:1: " + std::string(c.key) + ": ", 0), 0u) << message;
  EXPECT_TRUE(Contains(message, c.mentions)) << "\"" << c.mentions << "\" not in: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Values, BuildSpecInvalidTest,
    testing::Values(
        InvalidCase{"shards", "0", "between 1 and 1000"},
        InvalidCase{"shards", "-1", "between 1 and 1000"},
        InvalidCase{"shards", "abc", "\"abc\" is not a whole number"},
        InvalidCase{"shards", "1001", "between 1 and 1000"},
        InvalidCase{"shards", "", "not a whole number"},
        InvalidCase{"shards", "4x", "not a whole number"},
        InvalidCase{"shards", "99999999999", "99999999999"},
        InvalidCase{"base-port", "0", "between 1 and 65535"},
        InvalidCase{"base-port", "70000", "between 1 and 65535"},
        InvalidCase{"base-port", "seven", "not a whole number"},
        InvalidCase{"bus-base-port", "0", "between 1 and 65535"},
        InvalidCase{"bus-base-port", "70000", "between 1 and 65535"},
        InvalidCase{"bind", "localhost", "not an IP address"},
        InvalidCase{"bind", "", "not an IP address"},
        InvalidCase{"bind", "256.1.1.1", "not an IP address"},
        InvalidCase{"bind", "10.0.0.1",
                    "10.0.0.1 is reachable from other hosts, and the shards would accept anyone "
                    "(give --password-file FILE holding a password, mode 0600, or --allow-no-auth"},
        InvalidCase{"bind", "0.0.0.0", "--password-file FILE"},
        InvalidCase{"bind", "::", "--password-file FILE"},
        InvalidCase{"allow-no-auth", "yes", "expected true or false (got \"yes\")"},
        InvalidCase{"announce", "", "neither an IP address nor a host name"},
        InvalidCase{"announce", "bad host", "neither an IP address nor a host name"},
        InvalidCase{"announce", "-dash.example.com", "neither an IP address nor a host name"},
        InvalidCase{"announce", "a..b", "neither an IP address nor a host name"},
        InvalidCase{"password-file", "", "is empty"},
        InvalidCase{"join", "7000", "is not HOST:PORT of a node of the cluster to join"},
        InvalidCase{"join", "10.0.0.1", "is not HOST:PORT"},
        InvalidCase{"join", "10.0.0.1:0", "is not HOST:PORT"},
        InvalidCase{"join", "", "is not HOST:PORT"},
        InvalidCase{"cluster-name", "", "is not a cluster name"},
        InvalidCase{"preferred-endpoint", "name", "expected ip or hostname"},
        InvalidCase{"tls-cert", "", "is empty"},
        InvalidCase{"tls-auth-clients", "maybe", "expected no, yes or optional"},
        InvalidCase{"tls-auth-clients", "yes", "only means something with TLS"},
        InvalidCase{"preferred-endpoint", "hostname", "hostname needs a host name to give"},
        InvalidCase{"cluster-name", "prod east", "is not a cluster name"},
        InvalidCase{"engine", "memcached", "redis, valkey"},
        InvalidCase{"engine", "redis-server", "path"}, InvalidCase{"engine", "", "not an engine"},
        InvalidCase{"cpus", "", "empty"}, InvalidCase{"cpus", "3-1", "3-1"},
        InvalidCase{"cpus", "abc", "abc"}, InvalidCase{"cpus", "0-9999", "0-9999"},
        InvalidCase{"reserve-cpus", "x", "x"}, InvalidCase{"memory", "abc", "abc"},
        InvalidCase{"memory", "0", "larger than 0"}, InvalidCase{"shard-memory", "abc", "abc"},
        InvalidCase{"shard-memory", "0", "larger than 0"},
        InvalidCase{"shard-memory", "1.5", "1.5"},
        InvalidCase{"max-shard-memory", "0", "larger than 0"},
        InvalidCase{"max-shard-memory", "12 gb", "12 gb"},
        InvalidCase{"maxmemory-policy", "lru", "noeviction"},
        InvalidCase{"maxmemory-policy", "allkeys_lru", "not a maxmemory policy"},
        InvalidCase{"name", "", "not a valid name"}, InvalidCase{"name", "a/b", "not a valid name"},
        InvalidCase{"name", "-x", "not a valid name"},
        InvalidCase{"name", ".hidden", "not a valid name"}, InvalidCase{"state-dir", "", "empty"},
        InvalidCase{"health-timeout", "50ms", "at least 100ms"},
        InvalidCase{"health-timeout", "soon", "soon"}, InvalidCase{"hang-grace", "abc", "abc"},
        InvalidCase{"metrics-port", "0", "is not a TCP port (use 1-65535, e.g. 9121)"},
        InvalidCase{"metrics-port", "70000", "\"70000\" is not a TCP port"},
        InvalidCase{"metrics-port", "http", "\"http\" is not a TCP port"},
        InvalidCase{"proxy-metrics-port", "65536", "use 1-65535, e.g. 9122"},
        InvalidCase{"metrics-bind", "localhost", "not an IP address"},
        InvalidCase{"no-such-key", "1", "unknown setting"}),
    [](const testing::TestParamInfo<InvalidCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(BuildSpecTest, MemoryAndShardMemoryConflict) {
  auto spec =
      BuildSpec({{"memory", "16gb", "cluster.toml:2:1: memory"}, Flag("shard-memory", "1gb")});
  ASSERT_FALSE(spec.ok());
  const std::string& message = spec.error().message();
  EXPECT_EQ(message.rfind("cluster.toml:2:1: memory: conflicts with --shard-memory", 0), 0u)
      << message;
  EXPECT_EQ(Lines(message).size(), 1u) << message;
}

TEST(BuildSpecTest, ReportsEveryProblemAtOnceEachStartingWithItsWhere) {
  std::vector<Setting> settings = {
      {"shards", "0", "cluster.toml:2:10: shards"},
      {"base-port", "70000", "cluster.toml:3:13: base-port"},
      {"name", "ok-name", "cluster.toml:4:8: name"},
      Flag("bind", "localhost"),
      Flag("engine", "memcached"),
      Flag("maxmemory-policy", "lru"),
      Flag("memory", "abc"),
  };
  auto spec = BuildSpec(settings);
  ASSERT_FALSE(spec.ok());
  auto lines = Lines(spec.error().message());
  const std::vector<std::string> wheres = {"cluster.toml:2:10: shards: ",
                                           "cluster.toml:3:13: base-port: ",
                                           "--bind: ",
                                           "--engine: ",
                                           "--maxmemory-policy: ",
                                           "--memory: "};
  ASSERT_EQ(lines.size(), wheres.size()) << spec.error().message();
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(wheres[i], 0), 0u) << lines[i];
  }
}

TEST(BuildSpecTest, ConflictIsReportedAlongWithOtherProblems) {
  auto spec = BuildSpec({Flag("memory", "1gb"), Flag("shard-memory", "1mb"), Flag("shards", "0")});
  ASSERT_FALSE(spec.ok());
  auto lines = Lines(spec.error().message());
  ASSERT_EQ(lines.size(), 2u) << spec.error().message();
  EXPECT_EQ(lines[0].rfind("--shards: ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("--memory: conflicts with --shard-memory", 0), 0u) << lines[1];
}

TEST(BuildSpecTest, LaterSettingsOverrideEarlierOnes) {
  auto spec = BuildSpec({{"shards", "4", "cluster.toml:1:10: shards"},
                         {"base-port", "30000", "cluster.toml:2:13: base-port"},
                         {"engine", "valkey", "cluster.toml:3:10: engine"},
                         {"cpus", "0-7", "cluster.toml:4:8: cpus"},
                         Flag("shards", "16"),
                         Flag("base-port", "31000"),
                         Flag("engine", "redis"),
                         Flag("cpus", "8")});
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->shards, 16);
  EXPECT_EQ(spec->base_port, 31000);
  EXPECT_EQ(spec->engine, "redis");
  EXPECT_EQ(spec->cpus, std::vector<int>{8});
}

// The engines a command starts change into their own directories (redis-server --dir): a
// relative state directory must not reach them as such.
TEST(BuildSpecTest, ARelativeStateDirBecomesAbsolute) {
  auto spec = BuildSpec({Flag("state-dir", "some/state/../dir")});
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(spec->state_dir.has_value());
  EXPECT_TRUE(spec->state_dir->is_absolute()) << *spec->state_dir;
  EXPECT_EQ(*spec->state_dir, std::filesystem::current_path() / "some/dir");
}

// ---------------------------------------------------------------------------------------------
// ParseSpecToml

const Setting* Find(const std::vector<Setting>& settings, const std::string& key) {
  for (const auto& setting : settings) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
}

TEST(ParseSpecTomlTest, ReadsAValidFileWithHyphenatedKeys) {
  constexpr const char* kText = R"(# a deployment
name = "cache"
shards = 8
base-port = 30000
bus-base-port = 40000
engine = "valkey"
cpus = "2-9"
reserve-cpus = [0, 1]
shard-memory = "512mb"
max-shard-memory = "4gb"
maxmemory-policy = "allkeys-lru"
state-dir = "/tmp/shardctl-state"
bind = "::1"
)";
  auto settings = ParseSpecToml(kText, "cluster.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  EXPECT_EQ(settings->size(), 12u);
  ASSERT_NE(Find(*settings, "shards"), nullptr);
  EXPECT_EQ(Find(*settings, "shards")->value, "8");
  EXPECT_EQ(Find(*settings, "base-port")->value, "30000");
  EXPECT_EQ(Find(*settings, "cpus")->value, "2-9");
  // `where` names the file, the line and the key.
  EXPECT_EQ(Find(*settings, "shards")->where.rfind("cluster.toml:3:", 0), 0u);
  EXPECT_TRUE(Contains(Find(*settings, "shards")->where, ": shards"));
  EXPECT_EQ(Find(*settings, "maxmemory-policy")->where.rfind("cluster.toml:11:", 0), 0u);

  auto spec = BuildSpec(*settings);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->name, "cache");
  EXPECT_EQ(spec->shards, 8);
  EXPECT_EQ(spec->base_port, 30000);
  EXPECT_EQ(spec->BusBasePort(), 40000);
  EXPECT_EQ(spec->engine, "valkey");
  EXPECT_EQ(spec->cpus, (std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(spec->reserve_cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(spec->shard_memory, 512 * kMiB);
  EXPECT_EQ(spec->max_shard_memory, 4 * kGiB);
  EXPECT_EQ(spec->maxmemory_policy, "allkeys-lru");
  EXPECT_EQ(spec->state_dir, std::filesystem::path("/tmp/shardctl-state"));
  EXPECT_EQ(spec->bind, "::1");
}

struct CpusCase {
  const char* toml;
  std::vector<int> cpus;
};

class ParseSpecTomlCpusTest : public testing::TestWithParam<CpusCase> {};

TEST_P(ParseSpecTomlCpusTest, TakesAStringOrAnIntegerArray) {
  auto settings = ParseSpecToml(GetParam().toml, "cpus.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  auto spec = BuildSpec(*settings);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->cpus, GetParam().cpus);
}

INSTANTIATE_TEST_SUITE_P(Forms, ParseSpecTomlCpusTest,
                         testing::Values(CpusCase{"cpus = \"0-3,8\"", {0, 1, 2, 3, 8}},
                                         CpusCase{"cpus = [0, 1, 2, 3, 8]", {0, 1, 2, 3, 8}},
                                         CpusCase{"cpus = [8, 3, 2, 1, 0]", {0, 1, 2, 3, 8}},
                                         CpusCase{"cpus = [5]", {5}},
                                         CpusCase{"cpus = \"7\"", {7}}));

TEST(ParseSpecTomlTest, EmptyFileGivesNoSettings) {
  auto settings = ParseSpecToml("", "empty.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  EXPECT_TRUE(settings->empty());
}

TEST(ParseSpecTomlTest, SyntaxErrorNamesFileLineAndColumn) {
  for (const char* text : {"shards = 4\nbase-port = = 7000\n", "shards = 4\nname = \"open\n",
                           "shards = 4\n[cluster\n"}) {
    auto settings = ParseSpecToml(text, "cluster.toml");
    ASSERT_FALSE(settings.ok()) << text;
    const std::string& message = settings.error().message();
    EXPECT_TRUE(std::regex_search(message, std::regex("^cluster\\.toml:2:[0-9]+: "))) << message;
    EXPECT_TRUE(Contains(message, "syntax")) << message;
    EXPECT_EQ(Lines(message).size(), 1u) << message;
  }
}

TEST(ParseSpecTomlTest, UnknownKeyIsReportedWithASuggestion) {
  auto settings = ParseSpecToml("shards = 4\nbase_port = 7000\n", "cluster.toml");
  ASSERT_FALSE(settings.ok());
  const std::string& message = settings.error().message();
  EXPECT_TRUE(std::regex_search(message, std::regex("^cluster\\.toml:2:[0-9]+: base_port: ")))
      << message;
  EXPECT_TRUE(Contains(message, "unknown key")) << message;
  EXPECT_TRUE(Contains(message, "did you mean base-port?")) << message;
}

TEST(ParseSpecTomlTest, UnknownKeyFarFromEveryKeyHasNoSuggestion) {
  auto settings = ParseSpecToml("zzzzzzzzzzzz = 1\n", "cluster.toml");
  ASSERT_FALSE(settings.ok());
  EXPECT_TRUE(Contains(settings.error().message(), "unknown key")) << settings.error().message();
  EXPECT_FALSE(Contains(settings.error().message(), "did you mean")) << settings.error().message();
}

TEST(ParseSpecTomlTest, ValuesOfTheWrongTypeAreRefused) {
  for (const char* text : {"[shards]\ncount = 4\n", "shards = { count = 4 }\n", "memory = 1.5\n",
                           "cpus = [\"0\", \"1\"]\n", "cpus = [[0, 1]]\n"}) {
    auto settings = ParseSpecToml(text, "cluster.toml");
    ASSERT_FALSE(settings.ok()) << text;
    const std::string& message = settings.error().message();
    EXPECT_TRUE(std::regex_search(message, std::regex("^cluster\\.toml:1:[0-9]+: "))) << message;
    EXPECT_TRUE(Contains(message, "string, a whole number or true/false")) << message;
  }
  // A boolean is taken as text: the setting says whether it takes one.
  auto settings = ParseSpecToml("shards = true\nallow-no-auth = true\n", "cluster.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  auto spec = BuildSpec(*settings);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message(), "cluster.toml:1:10: shards: \"true\" is not a whole number");
}

TEST(ParseSpecTomlTest, ReportsEveryProblemAtOnce) {
  auto settings =
      ParseSpecToml("shardz = 4\nbase-port = 7000\nmemory = 1.5\nbnd = \"::1\"\n", "cluster.toml");
  ASSERT_FALSE(settings.ok());
  auto lines = Lines(settings.error().message());
  ASSERT_EQ(lines.size(), 3u) << settings.error().message();
  for (const auto& line : lines) EXPECT_EQ(line.rfind("cluster.toml:", 0), 0u) << line;
}

TEST(ParseSpecTomlTest, OutOfRangeCpuInAnArrayIsNotSilentlyWrapped) {
  // 4294967296 does not fit an int; it must not turn into CPU 0.
  auto settings = ParseSpecToml("cpus = [4294967296]\n", "cluster.toml");
  if (!settings.ok()) {
    EXPECT_EQ(settings.error().message().rfind("cluster.toml:1:", 0), 0u);
    return;
  }
  auto spec = BuildSpec(*settings);
  ASSERT_FALSE(spec.ok()) << "cpus = [4294967296] became " << settings->front().value;
  EXPECT_EQ(spec.error().message().rfind("cluster.toml:1:", 0), 0u) << spec.error().message();
}

TEST(ParseSpecTomlTest, FileValuesAreValidatedWithTheirPosition) {
  auto settings = ParseSpecToml("shards = 0\nbind = \"localhost\"\n", "cluster.toml");
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  auto spec = BuildSpec(*settings);
  ASSERT_FALSE(spec.ok());
  const std::string& message = spec.error().message();
  EXPECT_TRUE(std::regex_search(message, std::regex("(^|\n)cluster\\.toml:1:[0-9]+: shards: ")))
      << message;
  EXPECT_TRUE(std::regex_search(message, std::regex("(^|\n)cluster\\.toml:2:[0-9]+: bind: ")))
      << message;
}

// ---------------------------------------------------------------------------------------------
// ClosestKey

struct ClosestCase {
  const char* typed;
  const char* suggestion;  // "" for none
};

class ClosestKeyTest : public testing::TestWithParam<ClosestCase> {};

TEST_P(ClosestKeyTest, SuggestsTheNearestSpecKey) {
  EXPECT_EQ(ClosestKey(GetParam().typed, SpecKeys()), GetParam().suggestion)
      << "typed " << GetParam().typed;
}

INSTANTIATE_TEST_SUITE_P(
    Typos, ClosestKeyTest,
    testing::Values(ClosestCase{"shard", "shards"}, ClosestCase{"shads", "shards"},
                    ClosestCase{"base_port", "base-port"}, ClosestCase{"baseport", "base-port"},
                    ClosestCase{"bus-base", "bus-base-port"}, ClosestCase{"memroy", "memory"},
                    ClosestCase{"shard_memory", "shard-memory"},
                    ClosestCase{"max-memory-policy", "maxmemory-policy"},
                    ClosestCase{"maxmemory_policy", "maxmemory-policy"},
                    ClosestCase{"reserve", "reserve-cpus"}, ClosestCase{"cpu", "cpus"},
                    ClosestCase{"statedir", "state-dir"}, ClosestCase{"engin", "engine"},
                    ClosestCase{"shards", "shards"}, ClosestCase{"zzzzzzzzzzzz", ""},
                    ClosestCase{"", ""}, ClosestCase{"completely-unrelated-words", ""}),
    [](const testing::TestParamInfo<ClosestCase>& case_info) {
      return std::to_string(case_info.index);
    });

TEST(ClosestKeyTest, WorksOnAnyKnownList) {
  const std::vector<std::string_view> commands = {"plan", "up", "status", "down"};
  EXPECT_EQ(ClosestKey("stauts", commands), "status");
  EXPECT_EQ(ClosestKey("pln", commands), "plan");
  EXPECT_EQ(ClosestKey("anything", {}), "");
}

TEST(SpecKeysTest, EveryKeyIsKnownAndUnique) {
  const auto& keys = SpecKeys();
  for (const char* key :
       {"name", "shards", "base-port", "bus-base-port", "bind", "engine", "cpus", "reserve-cpus",
        "memory", "shard-memory", "max-shard-memory", "maxmemory-policy", "state-dir"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  for (auto key : keys) EXPECT_TRUE(IsSpecKey(key)) << key;
  EXPECT_EQ(std::set<std::string_view>(keys.begin(), keys.end()).size(), keys.size());
  EXPECT_FALSE(IsSpecKey("base_port"));
  EXPECT_FALSE(IsSpecKey("json"));
  EXPECT_FALSE(IsSpecKey(""));
}

}  // namespace
}  // namespace shardctl::launcher
