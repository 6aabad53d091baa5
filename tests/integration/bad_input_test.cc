// Bad input to `shardctl up`: the documented exit code, a short stderr message that names the
// problem, and nothing left running or claiming to run.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

class BadInputTest : public ShardctlTest {
 protected:
  // `up` with `args`, adding --shards 2 and this test's --base-port unless `args` has them.
  CommandResult UpWith(std::vector<std::string> args) {
    auto has = [&](const std::string& flag) {
      return std::find(args.begin(), args.end(), flag) != args.end();
    };
    if (!has("--shards")) args.insert(args.end(), {"--shards", "2"});
    if (!has("--base-port")) args.insert(args.end(), {"--base-port", std::to_string(base_port())});
    return OnDeployment("up", args);
  }

  // The exit code, one short "shardctl: ..." message naming every `mentions`, nothing on
  // stdout, no process left and no deployment recorded.
  void ExpectRefused(const CommandResult& result, int exit_code,
                     const std::vector<std::string>& mentions) {
    EXPECT_EQ(result.exit_code, exit_code) << result.Describe();
    EXPECT_EQ(result.out, "") << result.Describe();
    std::vector<std::string> errors;
    for (const auto& line : SplitLines(result.err)) {
      if (line.rfind("shardctl: warning:", 0) == 0) continue;
      errors.push_back(line);
      EXPECT_EQ(line.rfind("shardctl: ", 0), 0u) << "unprefixed stderr line: " << line;
    }
    EXPECT_GE(errors.size(), 1u) << result.Describe();
    EXPECT_LE(errors.size(), 3u) << "not a short message: " << result.Describe();
    for (const auto& mention : mentions) {
      EXPECT_NE(result.err.find(mention), std::string::npos)
          << "stderr does not mention \"" << mention << "\": " << result.Describe();
    }
    ExpectNothingRunning("after a refused up");
    auto status = OnDeployment("status");
    EXPECT_EQ(status.exit_code, 3)
        << "a refused up left a deployment behind: " << status.Describe();
  }

  fs::path WriteScratchFile(const std::string& name, const std::string& content, mode_t mode) {
    fs::path path = scratch_dir() / name;
    std::ofstream(path) << content;
    chmod(path.c_str(), mode);
    return path;
  }
};

// ---- spec errors: exit 2 before anything starts ----

struct BadSpec {
  const char* label;
  std::vector<std::string> args;  // "{online}" stands for this host's online CPU list
  std::vector<std::string> mentions;
};

// How gtest and ctest name a case: by its label, not its bytes.
void PrintTo(const BadSpec& spec, std::ostream* out) { *out << spec.label; }

class BadSpecTest : public BadInputTest, public ::testing::WithParamInterface<BadSpec> {};

std::string OnlineCpuList() {
  auto lines = SplitLines(ReadFileText("/sys/devices/system/cpu/online"));
  return lines.empty() ? "" : lines[0];
}

TEST_P(BadSpecTest, ExitsTwoNamingTheProblem) {
  std::vector<std::string> args = GetParam().args;
  std::vector<std::string> mentions = GetParam().mentions;
  for (auto* list : {&args, &mentions}) {
    for (auto& arg : *list) {
      if (arg == "{online}") arg = OnlineCpuList();
    }
  }
  ExpectRefused(UpWith(args), kExitUsage, mentions);
}

const BadSpec kBadSpecs[] = {
    {"UnknownFlag", {"--shardz", "2"}, {"--shardz", "did you mean --shards"}},
    {"ZeroShards", {"--shards", "0"}, {"--shards", "(got 0)"}},
    {"NegativeShards", {"--shards", "-3"}, {"--shards", "-3"}},
    {"ShardsNotANumber", {"--shards", "many"}, {"--shards", "many"}},
    {"ShardMemoryNotASize", {"--shard-memory", "abc"}, {"--shard-memory", "abc"}},
    {"OfflineCpu", {"--cpus", "99"}, {"--cpus", "99", "not online"}},
    {"AllCpusReserved", {"--reserve-cpus", "{online}"}, {"--reserve-cpus", "reserved"}},
    {"PortsPast65535", {"--base-port", "65530", "--shards", "10"}, {"--base-port", "65535"}},
    // TEST-NET-1 (RFC 5737): never an address of this host; nothing is sent, only bind() tried.
    {"BindNotOnThisHost",
     {"--bind", "192.0.2.1", "--allow-no-auth", "--shards", "1"},
     {"--bind 192.0.2.1", "not an address of this host"}},
    {"MemoryBeyondTheHost", {"--memory", "100tb"}, {"--memory", "100tb"}},
    {"ShardMemoryAboveTheCap", {"--shard-memory", "30gb"}, {"--shard-memory", "30gb", "25gb"}},
    {"ShardMemoryBelowAnEmptyShard", {"--shard-memory", "1mb"}, {"minimum", "8mb"}},
    {"MemoryAndShardMemory", {"--memory", "1gb", "--shard-memory", "1gb"}, {"conflicts"}},
    {"EngineMissing", {"--engine", "/nonexistent"}, {"--engine", "/nonexistent"}},
    {"EngineNotAnEngine", {"--engine", "mysql"}, {"--engine", "mysql"}},
    {"BindNotAnAddress", {"--bind", "localhost:7000"}, {"--bind", "localhost:7000"}},
    {"PositionalArgument", {"8"}, {"unexpected argument \"8\""}},
};

std::string BadSpecName(const ::testing::TestParamInfo<BadSpec>& param) {
  return param.param.label;
}

INSTANTIATE_TEST_SUITE_P(Up, BadSpecTest, ::testing::ValuesIn(kBadSpecs), BadSpecName);

TEST_F(BadInputTest, UnknownCommandExitsTwo) {
  auto result = Shardctl({"upp", "--shards", "2"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.Describe();
  EXPECT_NE(result.err.find("did you mean up"), std::string::npos) << result.Describe();
  ExpectNothingRunning("after an unknown command");
}

TEST_F(BadInputTest, EngineThatIsNotExecutableExitsTwo) {
  fs::path fake = WriteScratchFile("redis-server", "#!/bin/sh\nexit 0\n", 0644);
  ExpectRefused(UpWith({"--engine", fake.string()}), kExitUsage, {fake.string(), "not executable"});
}

TEST_F(BadInputTest, TomlSyntaxErrorExitsTwoWithFileLineColumn) {
  fs::path config = WriteScratchFile(
      "broken.toml", "shards = 2\nmaxmemory-policy = \"allkeys-lru\"\nname = \"unterminated\n",
      0644);
  auto result = UpWith({"--config", config.string()});
  ExpectRefused(result, kExitUsage, {"TOML"});
  EXPECT_TRUE(std::regex_search(result.err, std::regex(config.string() + ":3:[0-9]+")))
      << "no file:line:column in: " << result.Describe();
}

TEST_F(BadInputTest, TomlUnknownKeyExitsTwoNamingIt) {
  fs::path config = WriteScratchFile("unknown.toml", "shards = 2\nshardz = 4\n", 0644);
  auto result = UpWith({"--config", config.string()});
  ExpectRefused(result, kExitUsage, {"shardz", "unknown key", config.string() + ":2:"});
}

TEST_F(BadInputTest, ClientPortInUseExitsOneNamingThePort) {
  int listener = ListenOn(base_port() + 1);
  ASSERT_GE(listener, 0);
  auto result = UpWith({});
  close(listener);
  ExpectRefused(result, kExitRuntime, {std::to_string(base_port() + 1), "in use"});
}

TEST_F(BadInputTest, JoiningANodeThatIsNotThereOrIsOurOwnStartsNothing) {
  const std::string nobody = "127.0.0.1:" + std::to_string(base_port() + 45);
  ExpectRefused(UpWith({"--join", nobody}), kExitRuntime,
                {"--join " + nobody, "Connection refused", "reachable from this host"});
  const std::string ours = "127.0.0.1:" + std::to_string(base_port() + 1);
  ExpectRefused(UpWith({"--join", ours}), kExitRuntime, {"one of this deployment's own shards"});
}

TEST_F(BadInputTest, BusPortInUseExitsOneNamingThePort) {
  int bus_port = base_port() + kBusPortOffset + 1;
  int listener = ListenOn(bus_port);
  ASSERT_GE(listener, 0);
  auto result = UpWith({});
  close(listener);
  ExpectRefused(result, kExitRuntime, {std::to_string(bus_port), "in use"});
}

TEST_F(BadInputTest, EngineDyingAtStartStopsTheOtherShards) {
  auto which = RunCommand({"sh", "-c", "command -v redis-server"}, 10s);
  ASSERT_EQ(which.exit_code, 0) << which.Describe();
  std::string redis = SplitLines(which.out).at(0);
  // Shard 2 (its config file is the first argument) gets a directive Redis refuses.
  fs::path wrapper = WriteScratchFile("redis-server-breaks-shard-2",
                                      "#!/bin/sh\n"
                                      "case \"$1\" in\n"
                                      "  */shards/2/redis.conf) exec " +
                                          redis +
                                          " \"$@\" --bogus-directive-xyz yes ;;\n"
                                          "esac\n"
                                          "exec " +
                                          redis + " \"$@\"\n",
                                      0755);
  auto result = UpWith({"--shards", "3", "--engine", wrapper.string()});
  ExpectRefused(result, kExitRuntime,
                {"shard 2", std::to_string(base_port() + 2), "during start-up"});
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(PortBindable(base_port() + i)) << "port " << base_port() + i << " still served";
  }
}

// An engine that forks and does not exec (a wrapper that leaves a helper running): whatever it
// started stops with the shard, on a failed start and on down alike.
TEST_F(BadInputTest, WhatAnEngineForksStopsWithIt) {
  auto which = RunCommand({"sh", "-c", "command -v redis-server"}, 10s);
  ASSERT_EQ(which.exit_code, 0) << which.Describe();
  const std::string redis = SplitLines(which.out).at(0);
  const fs::path marker = scratch_dir() / "helper";
  // The helper is a copy of sleep under a name of its own, so this test finds exactly its own.
  ASSERT_EQ(RunCommand({"cp", "/bin/sleep", marker.string()}, 10s).exit_code, 0);
  fs::path wrapper = WriteScratchFile("redis-server-with-helper",
                                      "#!/bin/sh\n[ \"$1\" = --version ] || " + marker.string() +
                                          " 300 &\nexec " + redis + " \"$@\"\n",
                                      0755);
  auto helpers = [&] {  // live processes whose argv[0] is the helper
    size_t count = 0;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string cmdline = ReadFileText(entry.path() / "cmdline");
      if (cmdline.substr(0, cmdline.find('\0')) == marker.string() &&
          ReadFileText(entry.path() / "stat").find(") Z ") == std::string::npos) {
        ++count;
      }
    }
    return count;
  };
  auto up = UpWith({"--shards", "2", "--engine", wrapper.string()});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  EXPECT_EQ(helpers(), 2u) << "each shard's wrapper left one helper";
  auto down = OnDeployment("down");
  EXPECT_EQ(down.exit_code, 0) << down.Describe();
  EXPECT_TRUE(WaitUntil([&] { return helpers() == 0; }, 5s)) << "a helper outlived its shard";
}

TEST_F(BadInputTest, StateDirThatCannotBeCreatedExitsOneNamingIt) {
  // Tests run as root, so permissions do not stop anything: a directory under a plain file can
  // never be created.
  fs::path file = WriteScratchFile("plain-file", "", 0644);
  fs::path state_dir = file / "sub";
  auto result = Shardctl({"up", "--shards", "2", "--base-port", std::to_string(base_port()),
                          "--name", name(), "--state-dir", state_dir.string()});
  ExpectRefused(result, kExitRuntime, {state_dir.string()});
}

}  // namespace
}  // namespace shardctl::integration
