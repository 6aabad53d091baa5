#include "launcher/model/topology.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/cpu_list.h"
#include "common/numbers.h"
#include "common/text.h"

namespace shardctl::launcher {

namespace fs = std::filesystem;
using common::Error;
using common::Result;
using common::Status;
using common::TrimSpace;

const Cpu* Topology::FindCpu(int id) const {
  auto it = std::lower_bound(cpus.begin(), cpus.end(), id,
                             [](const Cpu& cpu, int wanted) { return cpu.id < wanted; });
  return it != cpus.end() && it->id == id ? &*it : nullptr;
}

int Topology::PhysicalCoreCount() const {
  std::set<std::pair<int, int>> cores;
  for (const Cpu& cpu : cpus) cores.emplace(cpu.package_id, cpu.core_id);
  return static_cast<int>(cores.size());
}

namespace {

constexpr uint64_t kKiB = 1024;

Error FileError(const fs::path& file, std::string_view what) {
  return Error(file.string() + ": " + std::string(what));
}

Result<std::string> ReadText(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return FileError(file, "cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return FileError(file, "cannot read");
  return text.str();
}

// Parses the whole of `text` (surrounding whitespace allowed) as an integer in `base`.
template <typename Int>
Result<Int> ParseNumber(const fs::path& file, std::string_view text, int base = 10) {
  std::string_view trimmed = TrimSpace(text);
  std::optional<Int> value = common::ParseInteger<Int>(trimmed, base);
  if (!value) {
    return FileError(file, std::string(base == 16 ? "expected a hex number" : "expected a number") +
                               ", got \"" + std::string(trimmed) + "\"");
  }
  return *value;
}

Result<int> ReadInt(const fs::path& file) {
  Result<std::string> text = ReadText(file);
  if (!text) return text.error();
  return ParseNumber<int>(file, *text);
}

Result<std::vector<int>> ReadCpuList(const fs::path& file) {
  Result<std::string> text = ReadText(file);
  if (!text) return text.error();
  return common::ParseCpuList(*text).Context(file.string());
}

// Returns the bytes of the "Node N MemTotal:   X kB" line of a node's meminfo.
Result<uint64_t> ReadMemTotal(const fs::path& file) {
  Result<std::string> text = ReadText(file);
  if (!text) return text.error();
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    size_t key = line.find("MemTotal:");
    if (key == std::string::npos) continue;
    std::string_view value = TrimSpace(std::string_view(line).substr(key + 9));
    if (!value.ends_with("kB")) return FileError(file, "MemTotal is not in kB: \"" + line + "\"");
    Result<uint64_t> kib = ParseNumber<uint64_t>(file, value.substr(0, value.size() - 2));
    if (!kib) return kib.error();
    return *kib * kKiB;
  }
  return FileError(file, "no \"MemTotal:\" line");
}

// Keeps the ids of `cpus` that are in the sorted `online`.
std::vector<int> OnlyOnline(const std::vector<int>& cpus, const std::vector<int>& online) {
  std::vector<int> kept;
  for (int cpu : cpus) {
    if (std::binary_search(online.begin(), online.end(), cpu)) kept.push_back(cpu);
  }
  return kept;
}

Result<Cpu> ReadCpu(const fs::path& cpu_dir, int id, const std::vector<int>& online) {
  Cpu cpu;
  cpu.id = id;
  const fs::path topology = cpu_dir / ("cpu" + std::to_string(id)) / "topology";
  std::error_code ec;
  if (!fs::exists(topology / "core_id", ec)) {
    // Some architectures and minimal VMs export no topology: treat the CPU as a whole core.
    cpu.core_id = id;
    cpu.siblings = {id};
    return cpu;
  }
  Result<int> core_id = ReadInt(topology / "core_id");
  if (!core_id) return core_id.error();
  Result<int> package_id = ReadInt(topology / "physical_package_id");
  if (!package_id) return package_id.error();
  Result<std::vector<int>> siblings = ReadCpuList(topology / "thread_siblings_list");
  if (!siblings) return siblings.error();
  cpu.core_id = *core_id;
  cpu.package_id = *package_id;
  cpu.siblings = OnlyOnline(*siblings, online);
  if (!std::binary_search(cpu.siblings.begin(), cpu.siblings.end(), id)) {
    cpu.siblings.insert(std::upper_bound(cpu.siblings.begin(), cpu.siblings.end(), id), id);
  }
  return cpu;
}

Result<std::vector<Cpu>> ReadCpus(const fs::path& cpu_dir) {
  const fs::path online_file = cpu_dir / "online";
  Result<std::string> online_text = ReadText(online_file);
  if (!online_text) {
    return FileError(online_file, "cannot read (is --sysfs-root a sysfs tree?)");
  }
  Result<std::vector<int>> online = common::ParseCpuList(*online_text);
  if (!online) return online.error().Context(online_file.string());
  if (online->empty()) return FileError(online_file, "lists no online CPU");
  std::vector<Cpu> cpus;
  for (int id : *online) {
    Result<Cpu> cpu = ReadCpu(cpu_dir, id, *online);
    if (!cpu) return cpu.error();
    cpus.push_back(std::move(*cpu));
  }
  return cpus;
}

// Online memory blocks (devices/system/memory/memoryK) counted per node.
struct MemoryBlocks {
  uint64_t block_bytes = 0;
  uint64_t online = 0;               // all online blocks, with or without a node entry
  std::map<int, uint64_t> per_node;  // online blocks with a nodeN entry
};

// Returns N of a directory entry named `prefix`N ("node3", "memory17"), or -1 for other names.
int IndexAfter(std::string_view prefix, std::string_view name) {
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return -1;
  return common::ParseInteger<int>(name.substr(prefix.size())).value_or(-1);
}

// Names of the entries of `dir`. Iterates with error codes: sysfs can fail mid-listing, and
// directory_iterator's operator++ would throw.
Result<std::vector<std::string>> ListDir(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return FileError(dir, "cannot list: " + ec.message());
  return names;
}

// Adds one memoryK block to `blocks` if its online file says "1".
Status CountBlock(const fs::path& block, MemoryBlocks& blocks) {
  Result<int> online = ReadInt(block / "online");
  if (!online) return online.error();
  if (*online != 1) return common::Ok();
  ++blocks.online;
  Result<std::vector<std::string>> names = ListDir(block);
  if (!names) return names.error();
  for (const std::string& name : *names) {
    // In real sysfs memoryK/nodeN is a symlink to the node; only its name matters.
    int node = IndexAfter("node", name);
    if (node >= 0) ++blocks.per_node[node];
  }
  return common::Ok();
}

// Reads devices/system/memory; a kernel without memory hotplug has none, which gives no blocks.
Result<MemoryBlocks> ReadMemoryBlocks(const fs::path& memory_dir) {
  MemoryBlocks blocks;
  std::error_code ec;
  if (!fs::is_directory(memory_dir, ec)) return blocks;
  Result<std::string> size_text = ReadText(memory_dir / "block_size_bytes");
  if (!size_text) return size_text.error();
  Result<uint64_t> block_bytes =
      ParseNumber<uint64_t>(memory_dir / "block_size_bytes", *size_text, 16);
  if (!block_bytes) return block_bytes.error();
  blocks.block_bytes = *block_bytes;
  Result<std::vector<std::string>> names = ListDir(memory_dir);
  if (!names) return names.error();
  for (const std::string& name : *names) {
    if (IndexAfter("memory", name) < 0) continue;
    if (Status counted = CountBlock(memory_dir / name, blocks); !counted) return counted.error();
  }
  return blocks;
}

Result<NumaNode> ReadNode(const fs::path& node_dir, int id, const std::vector<int>& online_cpus,
                          const MemoryBlocks& blocks) {
  const fs::path dir = node_dir / ("node" + std::to_string(id));
  Result<std::vector<int>> cpus = ReadCpuList(dir / "cpulist");
  if (!cpus) return cpus.error();
  Result<uint64_t> mem_total = ReadMemTotal(dir / "meminfo");
  if (!mem_total) return mem_total.error();
  NumaNode node;
  node.id = id;
  node.cpus = OnlyOnline(*cpus, online_cpus);
  auto in_blocks = blocks.per_node.find(id);
  uint64_t block_bytes =
      in_blocks == blocks.per_node.end() ? 0 : in_blocks->second * blocks.block_bytes;
  // Hot-added memory shows in the online blocks before (or instead of) node meminfo.
  node.memory_bytes = std::max(*mem_total, block_bytes);
  return node;
}

Result<std::vector<NumaNode>> ReadNodes(const fs::path& node_dir,
                                        const std::vector<int>& online_cpus,
                                        const MemoryBlocks& blocks) {
  Result<std::vector<int>> online = ReadCpuList(node_dir / "online");  // same list notation
  if (!online) return online.error();
  std::vector<NumaNode> nodes;
  for (int id : *online) {
    Result<NumaNode> node = ReadNode(node_dir, id, online_cpus, blocks);
    if (!node) return node.error();
    if (node->cpus.empty() && node->memory_bytes == 0) continue;
    nodes.push_back(std::move(*node));
  }
  if (nodes.empty()) return FileError(node_dir / "online", "no online node has CPUs or memory");
  return nodes;
}

// Sets each CPU's node from the nodes' CPU lists; every online CPU must be in exactly one.
Status AssignNodes(const fs::path& node_dir, std::vector<Cpu>& cpus,
                   const std::vector<NumaNode>& nodes) {
  std::map<int, int> node_of;
  for (const NumaNode& node : nodes) {
    for (int cpu : node.cpus) {
      auto [it, inserted] = node_of.emplace(cpu, node.id);
      if (!inserted) {
        return FileError(node_dir, "cpu" + std::to_string(cpu) + " is in the cpulist of both node" +
                                       std::to_string(it->second) + " and node" +
                                       std::to_string(node.id));
      }
    }
  }
  for (Cpu& cpu : cpus) {
    auto it = node_of.find(cpu.id);
    if (it == node_of.end()) {
      return FileError(node_dir,
                       "cpu" + std::to_string(cpu.id) + " is online but in no node's cpulist");
    }
    cpu.node = it->second;
  }
  return common::Ok();
}

// Without CONFIG_NUMA there is no devices/system/node: one node 0 holding everything.
Result<NumaNode> SingleNode(const fs::path& memory_dir, const std::vector<Cpu>& cpus,
                            const MemoryBlocks& blocks) {
  if (blocks.online == 0) {
    return FileError(memory_dir,
                     "no online memory blocks, and no devices/system/node to read memory from "
                     "(a kernel needs NUMA or memory hotplug support for shardctl to size memory)");
  }
  NumaNode node;
  for (const Cpu& cpu : cpus) node.cpus.push_back(cpu.id);
  node.memory_bytes = blocks.online * blocks.block_bytes;
  return node;
}

// The tree to read: `root` itself, or `root`/sys when given the filesystem root ("/") instead.
fs::path SystemDir(const fs::path& root) {
  std::error_code ec;
  fs::path system = root / "devices" / "system";
  if (!fs::exists(system / "cpu" / "online", ec) &&
      fs::exists(root / "sys" / "devices" / "system" / "cpu" / "online", ec)) {
    return root / "sys" / "devices" / "system";
  }
  return system;
}

}  // namespace

Result<Topology> ReadTopology(const fs::path& sysfs_root) {
  const fs::path system = SystemDir(sysfs_root);
  Topology topology;
  Result<std::vector<Cpu>> cpus = ReadCpus(system / "cpu");
  if (!cpus) return cpus.error();
  topology.cpus = std::move(*cpus);
  std::vector<int> online_cpus;
  for (const Cpu& cpu : topology.cpus) online_cpus.push_back(cpu.id);

  Result<MemoryBlocks> blocks = ReadMemoryBlocks(system / "memory");
  if (!blocks) return blocks.error();
  const fs::path node_dir = system / "node";
  std::error_code ec;
  if (fs::is_directory(node_dir, ec)) {
    Result<std::vector<NumaNode>> nodes = ReadNodes(node_dir, online_cpus, *blocks);
    if (!nodes) return nodes.error();
    topology.nodes = std::move(*nodes);
    if (Status assigned = AssignNodes(node_dir, topology.cpus, topology.nodes); !assigned) {
      return assigned.error();
    }
  } else {
    Result<NumaNode> node = SingleNode(system / "memory", topology.cpus, *blocks);
    if (!node) return node.error();
    topology.nodes.push_back(std::move(*node));
  }
  for (const NumaNode& node : topology.nodes) topology.total_memory_bytes += node.memory_bytes;
  return topology;
}

}  // namespace shardctl::launcher
