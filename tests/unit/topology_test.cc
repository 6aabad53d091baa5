#include "launcher/model/topology.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/cpu_list.h"

namespace shardctl::launcher {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kGiB = uint64_t{1} << 30;

fs::path FixtureRoot(const std::string& host) {
  return fs::path(SHARDCTL_FIXTURES_DIR) / "sysfs" / host;
}

std::vector<int> Cpus(const char* list) { return common::ParseCpuList(list).value(); }

Topology MustRead(const std::string& host) {
  common::Result<Topology> topology = ReadTopology(FixtureRoot(host));
  EXPECT_TRUE(topology.ok()) << topology.error().message();
  return topology.ok() ? *topology : Topology{};
}

// What each fixture host must read as; node_cpus[i] and node_memory_gib[i] are node i's.
struct HostCase {
  const char* host;
  int cpu_count;
  int core_count;
  std::vector<const char*> node_cpus;
  std::vector<uint64_t> node_memory_gib;
};

class TopologyFixtureTest : public testing::TestWithParam<HostCase> {};

TEST_P(TopologyFixtureTest, ReadsCpusCoresNodesAndMemory) {
  const HostCase& want = GetParam();
  Topology topology = MustRead(want.host);
  EXPECT_EQ(topology.cpus.size(), static_cast<size_t>(want.cpu_count));
  EXPECT_EQ(topology.PhysicalCoreCount(), want.core_count);
  ASSERT_EQ(topology.nodes.size(), want.node_cpus.size());
  uint64_t total = 0;
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    const NumaNode& node = topology.nodes[i];
    EXPECT_EQ(node.id, static_cast<int>(i));
    EXPECT_EQ(node.cpus, Cpus(want.node_cpus[i])) << "node " << i;
    EXPECT_EQ(node.memory_bytes, want.node_memory_gib[i] * kGiB) << "node " << i;
    for (int cpu : node.cpus) {
      ASSERT_NE(topology.FindCpu(cpu), nullptr) << "cpu " << cpu;
      EXPECT_EQ(topology.FindCpu(cpu)->node, node.id) << "cpu " << cpu;
    }
    total += want.node_memory_gib[i] * kGiB;
  }
  EXPECT_EQ(topology.total_memory_bytes, total);
  for (size_t i = 1; i < topology.cpus.size(); ++i) {
    EXPECT_LT(topology.cpus[i - 1].id, topology.cpus[i].id);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Topology, TopologyFixtureTest,
    testing::Values(HostCase{"single-node-64vcpu", 64, 32, {"0-63"}, {256}},
                    HostCase{"two-socket-smt", 64, 32, {"0-15,32-47", "16-31,48-63"}, {192, 192}},
                    HostCase{"four-node",
                             64,
                             32,
                             {"0-7,32-39", "8-15,40-47", "16-23,48-55", "24-31,56-63"},
                             {64, 64, 64, 64}},
                    HostCase{"laptop-2cpu", 2, 2, {"0-1"}, {16}},
                    HostCase{"no-numa-4cpu", 4, 2, {"0-3"}, {8}},
                    HostCase{"hotadd-vm", 2, 2, {"0-1"}, {24}}),
    [](const testing::TestParamInfo<HostCase>& case_info) {
      std::string name = case_info.param.host;
      std::erase(name, '-');
      return name;
    });

TEST(TopologyTest, SingleNodeSiblingsAreIAndIPlus32) {
  Topology topology = MustRead("single-node-64vcpu");
  ASSERT_NE(topology.FindCpu(0), nullptr);
  EXPECT_EQ(topology.FindCpu(0)->siblings, (std::vector<int>{0, 32}));
  EXPECT_EQ(topology.FindCpu(63)->siblings, (std::vector<int>{31, 63}));
  EXPECT_EQ(topology.FindCpu(37)->core_id, 5);
  EXPECT_EQ(topology.FindCpu(37)->package_id, 0);
}

TEST(TopologyTest, OfflineCpuIsLeftOut) {
  // cpu64 has a directory and is in node0's cpulist, but not in cpu/online.
  Topology topology = MustRead("single-node-64vcpu");
  EXPECT_EQ(topology.FindCpu(64), nullptr);
  EXPECT_EQ(topology.nodes[0].cpus.back(), 63);
}

TEST(TopologyTest, TwoSocketCoreIdsRestartPerPackage) {
  Topology topology = MustRead("two-socket-smt");
  const Cpu* cpu16 = topology.FindCpu(16);
  ASSERT_NE(cpu16, nullptr);
  EXPECT_EQ(cpu16->core_id, 0);
  EXPECT_EQ(cpu16->package_id, 1);
  EXPECT_EQ(cpu16->node, 1);
  EXPECT_EQ(cpu16->siblings, (std::vector<int>{16, 48}));
  // Same core_id as cpu16 on the other package: a different physical core.
  EXPECT_EQ(topology.FindCpu(0)->core_id, 0);
  EXPECT_EQ(topology.FindCpu(0)->package_id, 0);
  EXPECT_EQ(topology.FindCpu(47)->node, 0);
  EXPECT_EQ(topology.FindCpu(48)->package_id, 1);
}

TEST(TopologyTest, TwoSocketMemoryBlocksBeatUnderReportingMeminfo) {
  // meminfo says 197899012 kB (~188.7 GiB); 96 online 2 GiB blocks say 192 GiB. The two offline
  // blocks on node1 do not count.
  Topology topology = MustRead("two-socket-smt");
  EXPECT_EQ(topology.nodes[0].memory_bytes, 192 * kGiB);
  EXPECT_EQ(topology.nodes[1].memory_bytes, 192 * kGiB);
}

TEST(TopologyTest, FourNodesShareTwoPackages) {
  Topology topology = MustRead("four-node");
  for (int cpu : {0, 8, 15, 40}) EXPECT_EQ(topology.FindCpu(cpu)->package_id, 0) << cpu;
  for (int cpu : {16, 24, 31, 63}) EXPECT_EQ(topology.FindCpu(cpu)->package_id, 1) << cpu;
  EXPECT_EQ(topology.FindCpu(20)->node, 2);
  EXPECT_EQ(topology.FindCpu(52)->node, 2);
  EXPECT_EQ(topology.FindCpu(20)->siblings, (std::vector<int>{20, 52}));
}

TEST(TopologyTest, LaptopCpusAreTheirOwnCores) {
  Topology topology = MustRead("laptop-2cpu");
  EXPECT_EQ(topology.FindCpu(0)->siblings, std::vector<int>{0});
  EXPECT_EQ(topology.FindCpu(1)->siblings, std::vector<int>{1});
  EXPECT_EQ(topology.FindCpu(1)->core_id, 1);
}

TEST(TopologyTest, WithoutNodeDirectoryEverythingIsNodeZero) {
  Topology topology = MustRead("no-numa-4cpu");
  ASSERT_EQ(topology.nodes.size(), 1u);
  EXPECT_EQ(topology.nodes[0].id, 0);
  for (const Cpu& cpu : topology.cpus) EXPECT_EQ(cpu.node, 0);
  EXPECT_EQ(topology.FindCpu(0)->siblings, (std::vector<int>{0, 2}));
  EXPECT_EQ(topology.FindCpu(3)->siblings, (std::vector<int>{1, 3}));
  // 64 online blocks of 0x8000000 bytes; the 2 offline ones are not memory we can use.
  EXPECT_EQ(topology.total_memory_bytes, 64 * 128 * (uint64_t{1} << 20));
}

TEST(TopologyTest, HotAddedMemoryBeyondMeminfoCounts) {
  // node0/meminfo says MemTotal 4548824 kB; 192 online 128 MiB blocks say 24 GiB.
  Topology topology = MustRead("hotadd-vm");
  ASSERT_EQ(topology.nodes.size(), 1u);
  EXPECT_EQ(topology.nodes[0].memory_bytes, 24 * kGiB);
  EXPECT_EQ(topology.total_memory_bytes, 24 * kGiB);
}

TEST(TopologyTest, FindCpuOfUnknownIdIsNull) {
  Topology topology = MustRead("laptop-2cpu");
  EXPECT_EQ(topology.FindCpu(-1), nullptr);
  EXPECT_EQ(topology.FindCpu(2), nullptr);
  EXPECT_EQ(Topology{}.FindCpu(0), nullptr);
  EXPECT_EQ(Topology{}.PhysicalCoreCount(), 0);
}

TEST(TopologyTest, ReadsThisMachine) {
  // "/sys" is what the contract means; "/" is accepted too, as the whole filesystem holding it.
  for (const char* root : {"/sys", "/"}) {
    common::Result<Topology> topology = ReadTopology(root);
    ASSERT_TRUE(topology.ok()) << root << ": " << topology.error().message();
    EXPECT_GE(topology->cpus.size(), 1u) << root;
    EXPECT_GE(topology->nodes.size(), 1u) << root;
    EXPECT_GE(topology->PhysicalCoreCount(), 1) << root;
    EXPECT_GT(topology->total_memory_bytes, 0u) << root;
  }
}

// Each test gets a copy of the laptop-2cpu tree in a fresh temp dir to break, removed afterwards.
class TopologyBrokenTreeTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "topology_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::copy(FixtureRoot("laptop-2cpu"), root_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }
  // ReadTopology's error message, or a failure if it succeeded.
  std::string ErrorOf() {
    common::Result<Topology> topology = ReadTopology(root_);
    if (topology.ok()) {
      ADD_FAILURE() << "ReadTopology(" << root_ << ") succeeded";
      return "";
    }
    return topology.error().message();
  }

  fs::path root_;
};

TEST_F(TopologyBrokenTreeTest, MissingRootNamesTheOnlineFile) {
  fs::path missing = root_ / "no-such-dir";
  common::Result<Topology> topology = ReadTopology(missing);
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.error().message(), (missing / "devices/system/cpu/online").string() +
                                            ": cannot read (is --sysfs-root a sysfs tree?)");
}

TEST_F(TopologyBrokenTreeTest, CorruptCoreIdNamesFileAndText) {
  Write("devices/system/cpu/cpu1/topology/core_id", "banana\n");
  EXPECT_EQ(ErrorOf(), (root_ / "devices/system/cpu/cpu1/topology/core_id").string() +
                           ": expected a number, got \"banana\"");
}

TEST_F(TopologyBrokenTreeTest, CorruptOnlineListNamesFile) {
  Write("devices/system/cpu/online", "1-0\n");
  std::string error = ErrorOf();
  EXPECT_TRUE(error.starts_with((root_ / "devices/system/cpu/online").string() + ": ")) << error;
  EXPECT_NE(error.find("1-0"), std::string::npos) << error;
}

TEST_F(TopologyBrokenTreeTest, MeminfoWithoutMemTotal) {
  Write("devices/system/node/node0/meminfo", "Node 0 MemFree:  1000 kB\n");
  EXPECT_EQ(ErrorOf(),
            (root_ / "devices/system/node/node0/meminfo").string() + ": no \"MemTotal:\" line");
}

TEST_F(TopologyBrokenTreeTest, MissingNodeCpulist) {
  fs::remove(root_ / "devices/system/node/node0/cpulist");
  EXPECT_EQ(ErrorOf(), (root_ / "devices/system/node/node0/cpulist").string() + ": cannot read");
}

TEST_F(TopologyBrokenTreeTest, OnlineCpuInNoNode) {
  Write("devices/system/node/node0/cpulist", "0\n");
  EXPECT_EQ(ErrorOf(),
            (root_ / "devices/system/node").string() + ": cpu1 is online but in no node's cpulist");
}

TEST_F(TopologyBrokenTreeTest, CorruptBlockSize) {
  fs::create_directories(root_ / "devices/system/memory/memory0");
  Write("devices/system/memory/block_size_bytes", "0x8000000\n");
  Write("devices/system/memory/memory0/online", "1\n");
  EXPECT_EQ(ErrorOf(), (root_ / "devices/system/memory/block_size_bytes").string() +
                           ": expected a hex number, got \"0x8000000\"");
}

TEST_F(TopologyBrokenTreeTest, CpuWithoutTopologyIsItsOwnCore) {
  fs::remove_all(root_ / "devices/system/cpu/cpu1/topology");
  common::Result<Topology> topology = ReadTopology(root_);
  ASSERT_TRUE(topology.ok()) << topology.error().message();
  const Cpu* cpu1 = topology->FindCpu(1);
  ASSERT_NE(cpu1, nullptr);
  EXPECT_EQ(cpu1->package_id, 0);
  EXPECT_EQ(cpu1->siblings, std::vector<int>{1});
  EXPECT_EQ(topology->PhysicalCoreCount(), 2);
}

TEST_F(TopologyBrokenTreeTest, NoNumaWithoutMemoryBlocksSaysWhy) {
  fs::remove_all(root_ / "devices/system/node");
  std::string error = ErrorOf();
  EXPECT_TRUE(error.starts_with((root_ / "devices/system/memory").string() + ": ")) << error;
  EXPECT_NE(error.find("no online memory blocks"), std::string::npos) << error;
}

}  // namespace
}  // namespace shardctl::launcher
