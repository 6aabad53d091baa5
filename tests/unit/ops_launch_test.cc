// ClassifyExisting: what `up` does about what it finds in the state dir (start, adopt, nothing
// to do, refuse), decided from facts alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/ops/launch.h"

namespace shardctl::launcher {
namespace {

using Kind = Existing::Kind;

Deployment Requested(int shards) {
  Deployment deployment;
  deployment.plan.name = "main";
  deployment.plan.bind = "127.0.0.1";
  for (int i = 0; i < shards; ++i) {
    deployment.plan.shards.push_back({.index = i, .port = 7000 + i, .bus_port = 17000 + i});
  }
  deployment.engine.path = "/usr/bin/redis-server";
  return deployment;
}

struct ExistingCase {
  const char* label;
  int recorded_shards;  // 0: no readable deployment.json
  bool supervised;
  bool live_shards;
  Kind kind;
  std::vector<std::string> differences;
  size_t shards;
};

const ExistingCase kExistingCases[] = {
    {"nothing recorded", 0, false, false, Kind::kNone, {}, 0},
    {"record of a stopped deployment", 3, false, false, Kind::kNone, {}, 0},
    {"record of a stopped deployment with another spec", 4, false, false, Kind::kNone, {}, 0},
    {"same spec, supervised", 3, true, true, Kind::kRunning, {}, 3},
    {"same spec, supervisor still starting shards", 3, true, false, Kind::kRunning, {}, 3},
    {"same spec, shards without a supervisor", 3, false, true, Kind::kAdopt, {}, 0},
    {"another spec, supervised", 4, true, true, Kind::kDifferent, {"shards: 4 -> 3"}, 0},
    {"another spec, shards without a supervisor",
     2,
     false,
     true,
     Kind::kDifferent,
     {"shards: 2 -> 3"},
     0},
};

TEST(ExistingDeploymentTest, ClassifiesWhatUpFinds) {
  for (const ExistingCase& test : kExistingCases) {
    SCOPED_TRACE(test.label);
    ExistingFacts facts{.supervised = test.supervised, .live_shards = test.live_shards};
    if (test.recorded_shards > 0) facts.recorded = Requested(test.recorded_shards);
    Existing existing = ClassifyExisting(facts, Requested(3));
    EXPECT_EQ(existing.kind, test.kind);
    EXPECT_EQ(existing.differences, test.differences);
    EXPECT_EQ(existing.shards, test.shards);
  }
}

}  // namespace
}  // namespace shardctl::launcher
