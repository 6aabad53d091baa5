// The short CI run of scripts/chaos: under a cluster client's and a proxy client's load, kill -9 a
// primary (it has a replica), the supervisor and the proxy, and read every acknowledged write back.
// With replicas and appendfsync always none may be lost (docs/reliability.md). And the state dir
// (a tmpfs of the script's own) filling up under the same load: every shard fails its AOF write,
// status reports disk-full, and once the space is freed the cluster heals with every write.
#include <unistd.h>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class ChaosTest : public ShardctlTest {
 protected:
  // Runs scripts/lib/chaos.py with `faults` (and `extra`) on this test's ports; its JSON result,
  // after checking that nothing acknowledged was lost or changed and every fault was injected
  // and healed.
  json RunChaos(const std::string& faults, const std::vector<std::string>& extra = {}) {
    const char* python = std::getenv("SHARDCTL_PYTHON");
    std::vector<std::string> argv = {python ? python : "python3",
                                     (SourceDir() / "scripts/lib/chaos.py").string(),
                                     "--shardctl",
                                     ShardctlBinary(),
                                     "--base-port",
                                     std::to_string(base_port()),
                                     "--faults",
                                     faults,
                                     "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandResult chaos = RunCommand(argv, 240s);
    EXPECT_EQ(chaos.exit_code, 0) << chaos.Describe();
    json result = json::parse(chaos.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(result.is_object()) << chaos.Describe();
    if (!result.is_object()) return json::object();
    EXPECT_EQ(result["lost"], 0) << chaos.out;
    EXPECT_EQ(result["wrong"], 0) << chaos.out;
    for (const auto& fault : result["faults"]) {
      EXPECT_TRUE(fault["healed"].get<bool>()) << fault.dump();
      EXPECT_EQ(fault["target"].get<std::string>().find("could not inject"), std::string::npos)
          << fault.dump();
    }
    return result;
  }
};

TEST_F(ChaosTest, KillsUnderLoadLoseNoAcknowledgedWrite) {
  json result = RunChaos("kill-primary,kill-supervisor,kill-proxy,kill-primary");
  EXPECT_GT(result.value("acked", 0), 1000) << result.dump();
  EXPECT_EQ(result["faults"].size(), 4u) << result.dump();
  ExpectNothingRunning("after chaos");
}

TEST_F(ChaosTest, AFullDiskUnderLoadIsReportedAndHealsLosingNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the fault mounts a tmpfs to fill";
  json result = RunChaos("full-disk", {"--disk-size", "128m"});
  EXPECT_GT(result.value("acked", 0), 500) << result.dump();
  ASSERT_EQ(result["faults"].size(), 1u) << result.dump();
  EXPECT_NE(result["faults"][0]["target"].get<std::string>().find("status showed disk-full"),
            std::string::npos)
      << result.dump();
  ExpectNothingRunning("after chaos");
}

}  // namespace
}  // namespace shardctl::integration
