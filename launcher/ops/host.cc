#include "launcher/ops/host.h"

#include <algorithm>

#include "launcher/model/host_limits.h"

namespace shardctl::launcher {

common::Result<HostView> ReadHost(const Spec& spec, const std::optional<std::string>& sysfs_root) {
  auto topology = ReadTopology(sysfs_root.value_or("/"));
  if (!topology.ok()) return topology.error();
  HostView host{.topology = std::move(topology).value(), .spec = spec, .notes = {}};
  // A --sysfs-root fixture stands for another host: this process' limits and NICs are not its.
  if (!sysfs_root) {
    auto limits = ReadHostLimits("/");
    if (!limits.ok()) return limits.error();
    if (auto applied = ApplyHostLimits(host.topology, *limits); !applied.ok()) {
      return applied.error();
    }
    for (const auto& limit : host.topology.limits) {
      host.notes.push_back(limit.starts_with(" ") ? limit : "limited to " + limit);
    }
  }
  if (spec.reserve_cpus_auto) {
    NicInterrupts nic;
    if (!sysfs_root) {
      auto read = ReadNicInterrupts("/");
      if (!read.ok()) return read.error();
      nic = std::move(read).value();
    }
    std::vector<int> usable;
    for (const auto& cpu : host.topology.cpus) {
      if (!spec.cpus || std::count(spec.cpus->begin(), spec.cpus->end(), cpu.id)) {
        usable.push_back(cpu.id);
      }
    }
    std::string why;
    host.spec.reserve_cpus = AutoReservedCpus(nic, usable, why);
    host.notes.push_back(why);
  }
  return host;
}

Outcome<PlanReport> PlanOnHost(const Spec& spec, const std::optional<std::string>& sysfs_root) {
  auto host = ReadHost(spec, sysfs_root);
  if (!host.ok())
    return Failure(sysfs_root ? Fault::kUsage : Fault::kRuntime, host.error().message());
  auto plan = MakePlan(host->topology, host->spec);
  if (!plan.ok()) return Failure::Usage(plan.error());
  return PlanReport{.plan = std::move(plan).value(),
                    .topology = std::move(host->topology),
                    .host_notes = std::move(host->notes)};
}

}  // namespace shardctl::launcher
