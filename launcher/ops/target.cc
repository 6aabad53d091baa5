#include "launcher/ops/target.h"

#include <filesystem>
#include <string>

#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

// The record, or nullopt when it is missing or unreadable and `missing` allows that.
Outcome<std::optional<Deployment>> ReadRecord(const Spec& spec, const DeploymentDir& dir,
                                              TargetNeeds::IfMissing missing) {
  using IfMissing = TargetNeeds::IfMissing;
  const std::string where =
      "no deployment \"" + spec.name + "\" in " + dir.root().parent_path().string();
  if (missing == IfMissing::kUnknown && !std::filesystem::exists(dir.DeploymentFile())) {
    return Failure(Fault::kUnknown,
                   where + " (start one with shardctl up, or pass --name / --state-dir)");
  }
  auto deployment = ReadDeployment(dir);
  if (deployment.ok()) return std::optional<Deployment>(std::move(deployment).value());
  switch (missing) {
    case IfMissing::kCarryOn:
      return std::optional<Deployment>();
    case IfMissing::kUnknown:
      return Failure(Fault::kUnknown, deployment.error().message());
    case IfMissing::kFail:
      break;
  }
  return Failure(Fault::kRuntime, where + " (check --name and --state-dir)");
}

}  // namespace

std::vector<std::string> DeploymentNames(const std::optional<std::filesystem::path>& state_root) {
  return ListDeployments(state_root.value_or(DefaultStateDir()));
}

Outcome<Target> LoadTarget(const Spec& spec, TargetNeeds needs) {
  DeploymentDir dir = DirOf(spec);
  auto deployment = ReadRecord(spec, dir, needs.if_missing);
  if (!deployment.ok()) return deployment.error();
  if (needs.supervisor && !SupervisorRunning(dir)) {
    return Failure(Fault::kRuntime, "no supervisor runs deployment \"" + spec.name +
                                        "\" (start one with shardctl up" + StateDirHint(spec) +
                                        "; it adopts the running shards as recorded)");
  }
  if (*deployment && !needs.one_engine_for.empty() && !(*deployment)->shard_engines.empty()) {
    return Failure::Usage(
        needs.one_engine_for + " needs every shard on one engine (keys go " +
        "between shards and files in one format), and they differ: " + MixedEngines(**deployment) +
        "; finish the switch first (shardctl restart --rolling --engine E" + StateDirHint(spec) +
        "), nothing was changed");
  }
  Access access;
  if (*deployment && needs.access) {  // what every connection of this command uses
    auto loaded = AccessFor(**deployment);
    if (!loaded.ok()) return loaded.error();
    access = std::move(loaded).value();
  }
  return Target{.spec = spec,
                .dir = std::move(dir),
                .deployment = std::move(deployment).value(),
                .access = std::move(access)};
}

}  // namespace shardctl::launcher
