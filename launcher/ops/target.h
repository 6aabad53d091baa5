// What every command on an existing deployment starts from: its directory, its record and how to
// reach its nodes, loaded once by the command's entry in ops/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/cluster/access.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct Target {
  Spec spec;
  DeploymentDir dir;
  std::optional<Deployment> deployment;  // always set unless the command carries on without one
  Access access;  // how to reach the deployment's nodes (its password and TLS), when asked for
};

// What a command needs of its deployment.
struct TargetNeeds {
  enum class IfMissing {
    kFail,     // "no deployment …" (check --name and --state-dir), Fault::kRuntime
    kUnknown,  // "no deployment …" (start one with shardctl up), Fault::kUnknown: status' "unknown"
    kCarryOn,  // no record is fine: down stays idempotent, logs shows what a failed up left
  };
  IfMissing if_missing = IfMissing::kFail;
  bool supervisor = false;  // a live supervisor must run the deployment (Fault::kRuntime)
  // Load the deployment's password and TLS into Target::access; reload-tls checks the files
  // itself first, as a usage error.
  bool access = true;
  // Names a command that moves keys between shards or files in one format (backup, restore,
  // import, scale, rebalance, move-slots: an older engine refuses a newer one's DUMP payload):
  // refused while the shards run different engines (a switch under way).
  std::string one_engine_for;
};

// The names of the deployments under `state_root` (the default state directory when nullopt),
// for shell completion; none when it cannot be read.
std::vector<std::string> DeploymentNames(const std::optional<std::filesystem::path>& state_root);

// Reads the deployment record `spec` names, as `needs` says. Errors name the deployment and the
// fix; a TLS file of the record that does not load is a runtime failure.
Outcome<Target> LoadTarget(const Spec& spec, TargetNeeds needs);

}  // namespace shardctl::launcher
