// `shardctl plan` in a narrowed process: under taskset (CPU affinity) and inside a cgroup of our
// own with a cpuset and a memory limit, the plan uses only what the process may use and says why;
// `--reserve-cpus auto` reads the NICs' interrupts of this host.
#include <unistd.h>

#include <fstream>
#include <set>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

class HostLimitsTest : public ShardctlTest {
 protected:
  void TearDown() override {
    // The shell that joined the cgroup has exited; an empty cgroup is removed with rmdir.
    for (const auto& dir : cgroups_) {
      std::error_code ignored;
      fs::remove(dir, ignored);
    }
    ShardctlTest::TearDown();
  }

  // `shardctl plan --json ARGS` as a command prefixed by `wrapper` (e.g. taskset -c 1).
  json PlanJson(const std::vector<std::string>& wrapper, const std::vector<std::string>& args) {
    std::vector<std::string> argv = wrapper;
    argv.insert(argv.end(), {SHARDCTL_BINARY, "plan", "--json", "--shards", "2"});
    argv.insert(argv.end(), args.begin(), args.end());
    auto result = RunCommand(argv, 30s);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    json plan = json::parse(result.out, nullptr, false);
    EXPECT_TRUE(plan.is_object()) << result.Describe();
    return plan.is_object() ? plan : json::object();
  }

  // A new cgroup v1 directory under `controller`'s hierarchy, or "" when this host has no v1
  // mount of it we may write to.
  fs::path MakeCgroup(const std::string& controller) {
    const fs::path hierarchy = fs::path("/sys/fs/cgroup") / controller;
    if (!fs::exists(hierarchy / "cgroup.procs") || access(hierarchy.c_str(), W_OK) != 0) return {};
    fs::path dir = hierarchy / ("shardctl-test-" + std::to_string(getpid()) + "-" + controller);
    std::error_code error;
    if (!fs::create_directory(dir, error)) return {};
    cgroups_.push_back(dir);
    return dir;
  }

  // `sh -c 'echo $$ > DIR/cgroup.procs && exec "$@"'`: the command runs inside the cgroup.
  static std::vector<std::string> Inside(const fs::path& dir) {
    return {"/bin/sh", "-c", "echo $$ > \"$0\"/cgroup.procs && exec \"$@\"", dir.string()};
  }

  static std::set<int> PlannedCpus(const json& plan) {
    std::set<int> cpus;
    for (const auto& shard : plan["shards"]) {
      for (const auto& cpu : shard["cpus"]) cpus.insert(cpu.get<int>());
    }
    return cpus;
  }

  std::vector<fs::path> cgroups_;
};

TEST_F(HostLimitsTest, AffinityNarrowsThePlan) {
  json all = PlanJson({}, {});
  if (all.value("usable_cpus", 0) < 2) GTEST_SKIP() << "needs two CPUs to leave one out";
  json narrowed = PlanJson({"taskset", "-c", "1"}, {});
  EXPECT_EQ(narrowed["usable_cpus"], 1) << narrowed.dump(2);
  EXPECT_EQ(PlannedCpus(narrowed), std::set<int>{1}) << narrowed.dump(2);
  const std::string notes = narrowed["host_notes"].dump();
  EXPECT_NE(notes.find("limited to CPUs 1 of online"), std::string::npos) << notes;
  EXPECT_NE(notes.find("CPU affinity 1"), std::string::npos) << notes;
}

TEST_F(HostLimitsTest, CgroupCpusetAndMemoryLimitNarrowThePlan) {
  json all = PlanJson({}, {});
  const fs::path cpuset = MakeCgroup("cpuset");
  const fs::path memory = MakeCgroup("memory");
  if (cpuset.empty() || memory.empty() || all.value("usable_cpus", 0) < 2) {
    GTEST_SKIP() << "needs writable cgroup v1 cpuset and memory hierarchies and two CPUs";
  }
  std::ofstream(cpuset / "cpuset.cpus") << "0\n";
  std::ofstream(cpuset / "cpuset.mems") << "0\n";
  std::ofstream(memory / "memory.limit_in_bytes") << (512 << 20) << "\n";
  std::vector<std::string> wrapper = Inside(cpuset);
  const auto inner = Inside(memory);
  wrapper.insert(wrapper.end(), inner.begin(), inner.end());
  json narrowed = PlanJson(wrapper, {});
  EXPECT_EQ(PlannedCpus(narrowed), std::set<int>{0}) << narrowed.dump(2);
  uint64_t planned = 0;
  for (const auto& shard : narrowed["shards"]) planned += shard["maxmemory"].get<uint64_t>();
  EXPECT_GT(planned, 0u);
  EXPECT_LE(planned, uint64_t{512} << 20) << narrowed.dump(2);
  const std::string notes = narrowed["host_notes"].dump();
  EXPECT_NE(notes.find("cgroup v1 cpuset 0"), std::string::npos) << notes;
  EXPECT_NE(notes.find("memory 512mb"), std::string::npos) << notes;

  // A CPU outside the cgroup named in --cpus is refused in one line.
  auto outside = RunCommand(
      [&] {
        auto argv = Inside(cpuset);
        argv.insert(argv.end(), {SHARDCTL_BINARY, "plan", "--cpus", "1"});
        return argv;
      }(),
      30s);
  EXPECT_EQ(outside.exit_code, 2) << outside.Describe();
  EXPECT_NE(outside.err.find("--cpus: CPUs 1 are not online on this host or not allowed"),
            std::string::npos)
      << outside.Describe();
}

TEST_F(HostLimitsTest, ReserveCpusAutoSaysWhatItReserved) {
  auto plan = Shardctl({"plan", "--shards", "1", "--reserve-cpus", "auto"});
  ASSERT_EQ(plan.exit_code, 0) << plan.Describe();
  EXPECT_NE(plan.out.find("--reserve-cpus auto: "), std::string::npos) << plan.out;
  auto bad = Shardctl({"plan", "--reserve-cpus", "automatic"});
  EXPECT_EQ(bad.exit_code, 2) << bad.Describe();
}

}  // namespace
}  // namespace shardctl::integration
