// The short CI run of scripts/chaos: under a cluster client's and a proxy client's load, kill -9 a
// primary (it has a replica), the supervisor and the proxy, and read every acknowledged write back.
// With replicas and appendfsync always none may be lost (docs/reliability.md).
#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

class ChaosTest : public ShardctlTest {};

TEST_F(ChaosTest, KillsUnderLoadLoseNoAcknowledgedWrite) {
  const char* python = std::getenv("SHARDCTL_PYTHON");
  CommandResult chaos =
      RunCommand({python ? python : "python3", (SourceDir() / "scripts/lib/chaos.py").string(),
                  "--shardctl", ShardctlBinary(), "--base-port", std::to_string(base_port()),
                  "--faults", "kill-primary,kill-supervisor,kill-proxy,kill-primary", "--json"},
                 240s);
  ASSERT_EQ(chaos.exit_code, 0) << chaos.Describe();
  json result = json::parse(chaos.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(result.is_object()) << chaos.Describe();
  EXPECT_GT(result["acked"].get<int>(), 1000) << chaos.out;
  EXPECT_EQ(result["lost"], 0) << chaos.out;
  EXPECT_EQ(result["wrong"], 0) << chaos.out;
  ASSERT_EQ(result["faults"].size(), 4u) << chaos.out;
  for (const auto& fault : result["faults"]) {
    EXPECT_TRUE(fault["healed"].get<bool>()) << fault.dump();
    EXPECT_EQ(fault["target"].get<std::string>().find("could not inject"), std::string::npos)
        << fault.dump();
  }
  ExpectNothingRunning("after chaos");
}

}  // namespace
}  // namespace shardctl::integration
