// Helpers shared by the placement tests: fixture hosts from tests/fixtures/sysfs, specs built
// from flags the way the CLI builds them, and plans or plan errors on a host.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"

namespace shardctl::launcher::plan_fixtures {

using Flags = std::vector<std::pair<std::string, std::string>>;

// The topology of a fixture host, read once per test binary.
inline const Topology& Host(const std::string& host) {
  static std::map<std::string, Topology> cache;
  auto it = cache.find(host);
  if (it == cache.end()) {
    auto topology = ReadTopology(std::string(SHARDCTL_FIXTURES_DIR) + "/sysfs/" + host);
    EXPECT_TRUE(topology.ok()) << host << ": " << topology.error().message();
    it = cache.emplace(host, topology.ok() ? *topology : Topology{}).first;
  }
  return it->second;
}

// Builds the spec as the CLI would from `--key value` flags; the flags must be valid.
inline Spec SpecOf(const Flags& flags) {
  std::vector<Setting> settings;
  for (const auto& [key, value] : flags) settings.push_back({key, value, "--" + key});
  auto spec = BuildSpec(settings);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return spec.ok() ? *spec : Spec{};
}

inline common::Result<Plan> PlanOn(const Topology& topology, const Flags& flags) {
  return MakePlan(topology, SpecOf(flags));
}

inline common::Result<Plan> PlanOn(const std::string& host, const Flags& flags) {
  return PlanOn(Host(host), flags);
}

// A plan that must succeed (the test fails otherwise).
inline Plan MustPlan(const std::string& host, const Flags& flags) {
  auto plan = PlanOn(host, flags);
  EXPECT_TRUE(plan.ok()) << host << ": " << plan.error().message();
  return plan.ok() ? *plan : Plan{};
}

// The error of a plan that must fail.
inline std::string PlanError(const std::string& host, const Flags& flags) {
  auto plan = PlanOn(host, flags);
  EXPECT_FALSE(plan.ok()) << host << ": expected an error";
  return plan.ok() ? "" : plan.error().message();
}

}  // namespace shardctl::launcher::plan_fixtures
