// What this process may use of the host, beyond what sysfs says is online: in a container or a
// cgroup-limited service the usable CPUs are online ∩ the process' own affinity ∩ its cgroup's
// cpuset, and the memory is capped by its cgroup's limit. Planning on the whole host there would
// pin shards to CPUs the kernel will not run them on, and size maxmemory past what the OOM killer
// allows.
//
//   /proc/self/status (Cpus_allowed_list) ─┐
//   /proc/self/cgroup + /proc/self/mountinfo ─▶ cgroup v2 (cpuset.cpus.effective, memory.max) or
//                                              v1 (cpuset.effective_cpus, memory.limit_in_bytes)
//                                          └──▶ HostLimits ──ApplyHostLimits──▶ Topology
//
// Also the CPUs that serve the NIC's interrupts, for `--reserve-cpus auto`: each physical network
// interface's device (sys/class/net/IF/device, or its PCI parent) lists its MSI IRQs in msi_irqs/;
// /proc/irq/N/smp_affinity_list says where each may run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "launcher/model/topology.h"

namespace shardctl::launcher {

struct HostLimits {
  std::optional<std::vector<int>> cpus;  // affinity ∩ cgroup cpuset; nullopt: nothing found
  std::optional<uint64_t> memory_bytes;  // the lowest cgroup memory limit on the way up; nullopt:
                                         // unlimited or not found
  std::vector<std::string> sources;      // what limited what, for people ("cgroup cpuset 0-3")
};

// One mount of a cgroup hierarchy, from /proc/self/mountinfo.
struct CgroupMount {
  bool v2 = false;
  std::vector<std::string> controllers;  // v1: from the super options ("cpuset", "memory", ...)
  std::string root;                      // the cgroup path mounted there ("/" unless namespaced)
  std::filesystem::path mount_point;
};

// Pure parsers, tested on captured text.
std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo);
// The process' cgroup path for `controller` ("" asks for the v2 entry "0::/path"); nullopt when
// the file has no such line.
std::optional<std::string> CgroupPathOf(std::string_view proc_cgroup, std::string_view controller);
// A memory limit file's value: "max" (v2) or anything at or above 2^60 (v1's "unlimited") is
// nullopt; errors name the text.
common::Result<std::optional<uint64_t>> ParseMemoryLimit(std::string_view text);

// Reads the limits under `root` ("/" normally: proc/self/..., sys/fs/cgroup/...). Missing files
// are no limit (an old kernel, no cgroup mounted); unreadable or malformed ones are errors naming
// the file.
common::Result<HostLimits> ReadHostLimits(const std::filesystem::path& root);

// Pure: keeps only the allowed CPUs (and the nodes left with CPUs or memory) and scales each node's
// memory so the total is at most the memory limit. Records what it did in topology.limits. Fails
// when no online CPU is allowed.
common::Status ApplyHostLimits(Topology& topology, const HostLimits& limits);

// The CPUs the physical NICs' interrupts may run on (union of their IRQs' smp_affinity_list), and
// which interfaces and IRQs that was, under `root` ("/" normally). Empty when there is no physical
// NIC with MSI IRQs (loopback-only hosts, many VMs' legacy interrupts).
struct NicInterrupts {
  std::vector<std::string> interfaces;
  std::vector<int> irqs;
  std::vector<int> cpus;
};
common::Result<NicInterrupts> ReadNicInterrupts(const std::filesystem::path& root);

// Pure: what `--reserve-cpus auto` keeps shards off, given the NIC's interrupt CPUs and the CPUs
// shards could use: those CPUs when they are a strict subset, else none (interrupts that may run
// anywhere leave nothing to avoid). `why` says which, for `plan`.
std::vector<int> AutoReservedCpus(const NicInterrupts& nic, const std::vector<int>& usable,
                                  std::string& why);

}  // namespace shardctl::launcher
