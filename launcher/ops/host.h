// The host a plan is made for, and `shardctl plan` itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launcher/model/plan.h"
#include "launcher/model/spec.h"
#include "launcher/model/topology.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

// The host as plan, up and scale see it: sysfs (or the --sysfs-root fixture); on the real host
// narrowed to what this process may use (affinity, cgroup cpuset and memory limit), with
// --reserve-cpus auto resolved from the NICs' interrupts into spec.reserve_cpus. `notes` says what
// limited or reserved what. Errors: reading sysfs (with --sysfs-root: the user's fixture) or the
// limits.
struct HostView {
  Topology topology;
  Spec spec;
  std::vector<std::string> notes;
};
common::Result<HostView> ReadHost(const Spec& spec, const std::optional<std::string>& sysfs_root);

// `shardctl plan`: the placement `spec` gets on this host (or on the --sysfs-root fixture), made
// and checked but nothing started. A wrong spec, or a fixture that does not read, is the user's
// fault; the real host's sysfs that does not read is the environment's.
struct PlanReport {
  Plan plan;
  Topology topology;
  std::vector<std::string> host_notes;
};
Outcome<PlanReport> PlanOnHost(const Spec& spec, const std::optional<std::string>& sysfs_root);

}  // namespace shardctl::launcher
