// The host's CPU and memory layout, read from a sysfs tree.
//
// Reading from a root directory (default "/") instead of hard-coded "/sys" paths is what lets tests
// and users plan for another host: point it at a fixture tree copied from a 2-socket server.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

// One online logical CPU (a hardware thread).
struct Cpu {
  int id = 0;
  int core_id = 0;     // topology/core_id: unique only within a package
  int package_id = 0;  // topology/physical_package_id (the socket)
  int node = 0;        // NUMA node holding this CPU
  // All online hardware threads of this CPU's physical core, itself included, sorted.
  std::vector<int> siblings;
};

// One NUMA node that has online CPUs or memory.
struct NumaNode {
  int id = 0;
  std::vector<int> cpus;      // online CPUs of the node, sorted
  uint64_t memory_bytes = 0;  // usable memory of the node (see ReadTopology)
};

struct Topology {
  std::vector<Cpu> cpus;        // online CPUs sorted by id
  std::vector<NumaNode> nodes;  // sorted by id
  // Sum of the nodes' memory.
  uint64_t total_memory_bytes = 0;
  // What ApplyHostLimits (host_limits.h) kept from this process, for people; empty: all of it.
  std::vector<std::string> limits;

  // The online CPU with this id, or nullptr.
  const Cpu* FindCpu(int id) const;
  // Number of distinct physical cores (package_id, core_id) among the online CPUs.
  int PhysicalCoreCount() const;
};

// Reads the topology under `sysfs_root` (the directory that plays the role of "/sys"):
//   devices/system/cpu/online                         online CPU list
//   devices/system/cpu/cpuN/topology/{core_id,physical_package_id,thread_siblings_list}
//   devices/system/node/online, nodeN/cpulist, nodeN/meminfo ("Node N MemTotal: X kB")
//   devices/system/memory/block_size_bytes, memoryK/{online,nodeN}  (optional)
// A node's memory is the larger of its meminfo MemTotal and its online memory blocks x block size
// (some VMs hot-add memory that node meminfo under-reports). Without devices/system/node (a kernel
// built without NUMA) every CPU is on node 0 and memory comes from the memory blocks. A CPU without
// topology files is its own core on package 0. Errors name the file and what was wrong in it.
common::Result<Topology> ReadTopology(const std::filesystem::path& sysfs_root);

}  // namespace shardctl::launcher
