// What a process in a container or a limited cgroup may use of the host: cgroup v1 and v2 files,
// CPU affinity, memory limits up the hierarchy, applied to a topology; and the CPUs the NICs'
// interrupts run on, for --reserve-cpus auto. Files are fixtures in a temp dir shaped like "/".
#include "launcher/model/host_limits.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "tests/unit/plan_fixtures.h"

namespace shardctl::launcher {
namespace {

namespace fs = std::filesystem;
using plan_fixtures::Host;

// A hybrid host's mountinfo (v1 controllers plus the unified v2 tree), as captured on a VM.
constexpr const char* kHybridMountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";

// A container with a cgroup namespace: v2 only, its own cgroup mounted as the root.
constexpr const char* kContainerMountinfo =
    "600 500 0:80 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw,nsdelegate\n";

TEST(CgroupParseTest, MountsAndTheProcessPath) {
  auto mounts = ParseCgroupMounts(kHybridMountinfo);
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_FALSE(mounts[0].v2);
  EXPECT_EQ(mounts[0].controllers, (std::vector<std::string>{"rw", "cpuset"}));
  EXPECT_EQ(mounts[0].mount_point, fs::path("/sys/fs/cgroup/cpuset"));
  EXPECT_EQ(mounts[2].controllers, (std::vector<std::string>{"rw", "cpu", "cpuacct"}));
  EXPECT_TRUE(mounts[3].v2);
  EXPECT_EQ(mounts[3].root, "/");

  const char* proc_cgroup = "4:memory:/process_api/c87\n3:cpuset:/\n2:cpu,cpuacct:/x\n0::/\n";
  EXPECT_EQ(CgroupPathOf(proc_cgroup, "memory"), "/process_api/c87");
  EXPECT_EQ(CgroupPathOf(proc_cgroup, "cpuacct"), "/x");
  EXPECT_EQ(CgroupPathOf(proc_cgroup, ""), "/");
  EXPECT_EQ(CgroupPathOf("0::/system.slice/redis.service\n", ""), "/system.slice/redis.service");
  EXPECT_EQ(CgroupPathOf("0::/a\n", "memory"), std::nullopt);
}

TEST(CgroupParseTest, MemoryLimits) {
  EXPECT_EQ(*ParseMemoryLimit("max\n"), std::nullopt);
  EXPECT_EQ(*ParseMemoryLimit("9223372036854771712\n"), std::nullopt);  // v1 "unlimited"
  EXPECT_EQ(*ParseMemoryLimit("2147483648\n"), std::optional<uint64_t>(2147483648));
  auto bad = ParseMemoryLimit("lots");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "\"lots\" is not a memory limit");
}

class HostLimitsTreeTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "host_limits_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  void Link(const std::string& relative, const std::string& target) {
    fs::create_directories((root_ / relative).parent_path());
    fs::create_directory_symlink(target, root_ / relative);
  }

  fs::path root_;
};

TEST_F(HostLimitsTreeTest, NothingToReadIsNoLimit) {
  auto limits = ReadHostLimits(root_);
  ASSERT_TRUE(limits.ok()) << limits.error().message();
  EXPECT_FALSE(limits->cpus);
  EXPECT_FALSE(limits->memory_bytes);
}

TEST_F(HostLimitsTreeTest, CgroupV2ContainerWithAParentMemoryLimit) {
  Write("proc/self/status", "Name:\tshardctl\nCpus_allowed_list:\t0-7\n");
  Write("proc/self/mountinfo", "600 500 0:80 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  Write("proc/self/cgroup", "0::/kubepods/pod1/c1\n");
  Write("sys/fs/cgroup/pod1/c1/cpuset.cpus.effective", "2-3,6\n");
  Write("sys/fs/cgroup/pod1/c1/memory.max", "max\n");
  Write("sys/fs/cgroup/pod1/memory.max", "2147483648\n");
  Write("sys/fs/cgroup/memory.max", "4294967296\n");
  auto limits = ReadHostLimits(root_);
  ASSERT_TRUE(limits.ok()) << limits.error().message();
  EXPECT_EQ(limits->cpus, (std::vector<int>{2, 3, 6}));
  EXPECT_EQ(limits->memory_bytes, std::optional<uint64_t>(2147483648));
  ASSERT_EQ(limits->sources.size(), 3u);
  EXPECT_EQ(limits->sources[0], "CPU affinity 0-7");
  EXPECT_NE(limits->sources[1].find("cgroup v2 cpuset 2-3,6"), std::string::npos);
  EXPECT_NE(limits->sources[2].find("cgroup v2 memory limit 2gb"), std::string::npos)
      << limits->sources[2];
}

TEST_F(HostLimitsTreeTest, CgroupV1AffinityNarrowsTheCpuset) {
  Write("proc/self/status", "Cpus_allowed_list:\t1-2\n");
  Write("proc/self/mountinfo", kHybridMountinfo);
  Write("proc/self/cgroup", "4:memory:/svc\n3:cpuset:/svc\n0::/\n");
  Write("sys/fs/cgroup/cpuset/svc/cpuset.effective_cpus", "0-1\n");
  Write("sys/fs/cgroup/memory/svc/memory.limit_in_bytes", "1073741824\n");
  Write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  auto limits = ReadHostLimits(root_);
  ASSERT_TRUE(limits.ok()) << limits.error().message();
  EXPECT_EQ(limits->cpus, (std::vector<int>{1}));
  EXPECT_EQ(limits->memory_bytes, std::optional<uint64_t>(1073741824));
}

TEST_F(HostLimitsTreeTest, MalformedFilesAreNamed) {
  Write("proc/self/mountinfo", kContainerMountinfo);
  Write("proc/self/cgroup", "0::/\n");
  Write("sys/fs/cgroup/memory.max", "a lot\n");
  auto limits = ReadHostLimits(root_);
  ASSERT_FALSE(limits.ok());
  EXPECT_EQ(limits.error().message(),
            (root_ / "sys/fs/cgroup/memory.max").string() + ": \"a lot\" is not a memory limit");
}

TEST(ApplyHostLimitsTest, KeepsAllowedCpusAndScalesMemory) {
  Topology topology = Host("two-socket-smt");
  ASSERT_GE(topology.nodes.size(), 2u);
  const uint64_t before = topology.total_memory_bytes;
  const int first_of_node1 = topology.nodes[1].cpus.front();
  HostLimits limits{.cpus = std::vector<int>{0, 1, first_of_node1},
                    .memory_bytes = before / 4,
                    .sources = {"test"}};
  ASSERT_TRUE(ApplyHostLimits(topology, limits).ok());
  ASSERT_EQ(topology.cpus.size(), 3u);
  for (const auto& cpu : topology.cpus) {
    for (int sibling : cpu.siblings) {
      EXPECT_TRUE(sibling == 0 || sibling == 1 || sibling == first_of_node1) << sibling;
    }
  }
  ASSERT_EQ(topology.nodes.size(), 2u);
  EXPECT_EQ(topology.nodes[1].cpus, std::vector<int>{first_of_node1});
  EXPECT_LE(topology.total_memory_bytes, before / 4);
  EXPECT_GT(topology.total_memory_bytes, before / 4 - 16);  // rounding only
  ASSERT_GE(topology.limits.size(), 3u);
  EXPECT_EQ(topology.limits.back(), "  from test");

  Topology all = Host("two-socket-smt");
  auto none = ApplyHostLimits(all, {.cpus = std::vector<int>{999}, .memory_bytes = {}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no online CPU"), std::string::npos);

  Topology untouched = Host("laptop-2cpu");
  ASSERT_TRUE(
      ApplyHostLimits(untouched, {.cpus = std::vector<int>{0, 1}, .memory_bytes = {}}).ok());
  EXPECT_TRUE(untouched.limits.empty()) << "nothing was limited";
}

TEST_F(HostLimitsTreeTest, NicInterruptsFromThePciFunctionOfAVirtioNic) {
  // eth0 -> virtio2 under PCI function 0000:00:03.0, which owns MSI IRQs 37-39; lo is virtual.
  const std::string pci = "sys/devices/pci0000:00/0000:00:03.0";
  Write(pci + "/msi_irqs/37", "msix\n");
  Write(pci + "/msi_irqs/38", "msix\n");
  Write(pci + "/msi_irqs/39", "msix\n");
  fs::create_directories(root_ / pci / "virtio2/net/eth0");
  Link(pci + "/virtio2/net/eth0/device", "../../../virtio2");
  Link("sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  fs::create_directories(root_ / "sys/devices/virtual/net/lo");
  Link("sys/class/net/lo", "../../devices/virtual/net/lo");
  Write("proc/irq/37/smp_affinity_list", "3\n");
  Write("proc/irq/38/smp_affinity_list", "2\n");
  Write("proc/irq/39/smp_affinity_list", "3\n");
  auto nic = ReadNicInterrupts(root_);
  ASSERT_TRUE(nic.ok()) << nic.error().message();
  EXPECT_EQ(nic->interfaces, std::vector<std::string>{"eth0"});
  EXPECT_EQ(nic->irqs, (std::vector<int>{37, 38, 39}));
  EXPECT_EQ(nic->cpus, (std::vector<int>{2, 3}));

  std::string why;
  EXPECT_EQ(AutoReservedCpus(*nic, {0, 1, 2, 3, 4, 5, 6, 7}, why), (std::vector<int>{2, 3}));
  EXPECT_EQ(why, "--reserve-cpus auto: CPUs 2-3 reserved for the interrupts of eth0 (3 IRQs)");
  EXPECT_TRUE(AutoReservedCpus(*nic, {2, 3}, why).empty()) << "would leave no CPU";
  EXPECT_NE(why.find("every CPU the shards could use; nothing reserved"), std::string::npos) << why;
  EXPECT_TRUE(AutoReservedCpus(NicInterrupts{}, {0, 1}, why).empty());
  EXPECT_NE(why.find("no physical NIC"), std::string::npos) << why;
}

}  // namespace
}  // namespace shardctl::launcher
