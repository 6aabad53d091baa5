#include "launcher/model/host_limits.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "common/cpu_list.h"
#include "common/numbers.h"
#include "common/size.h"
#include "common/text.h"

namespace shardctl::launcher {

namespace fs = std::filesystem;
using common::Error;
using common::Result;
using common::TrimSpace;

namespace {

// v1 reports "no limit" as the largest page-aligned 63-bit number (9223372036854771712).
constexpr uint64_t kUnlimitedFrom = uint64_t{1} << 60;

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The file's text; nullopt when it does not exist (no limit of that kind), an error when it
// exists but cannot be read.
Result<std::optional<std::string>> ReadIfPresent(const fs::path& file) {
  std::error_code error;
  if (!fs::exists(file, error)) return std::optional<std::string>();
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return Error(file.string() + ": cannot read");
  return std::optional<std::string>(text.str());
}

std::vector<int> Intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both;
}

// The directory of the process' cgroup in `mount`, or nullopt when it is not below the mount's
// root (another namespace's view).
std::optional<fs::path> CgroupDir(const fs::path& root, const CgroupMount& mount,
                                  const std::string& path) {
  if (!path.starts_with(mount.root)) return std::nullopt;
  std::string relative = path.substr(mount.root == "/" ? 1 : mount.root.size());
  while (relative.starts_with("/")) relative.erase(0, 1);
  const fs::path top = root / mount.mount_point.relative_path();
  return relative.empty() ? top : top / relative;
}

const CgroupMount* FindMount(const std::vector<CgroupMount>& mounts, bool v2,
                             std::string_view controller) {
  for (const auto& mount : mounts) {
    if (mount.v2 != v2) continue;
    if (v2 || std::find(mount.controllers.begin(), mount.controllers.end(), controller) !=
                  mount.controllers.end()) {
      return &mount;
    }
  }
  return nullptr;
}

// The cpuset and memory limit of one hierarchy: `cpus_file` in the process' own cgroup; the
// lowest `memory_file` from there up to the mount's root (a parent's limit binds its children).
struct CgroupFiles {
  const char* cpus_file;
  const char* memory_file;
};

Result<bool> ReadCpuset(const fs::path& dir, const char* file, HostLimits& limits,
                        const char* label) {
  auto text = ReadIfPresent(dir / file);
  if (!text.ok()) return text.error();
  if (!*text || TrimSpace(**text).empty()) return false;
  auto cpus = common::ParseCpuList(TrimSpace(**text));
  if (!cpus.ok()) return cpus.error().Context((dir / file).string());
  limits.cpus = limits.cpus ? Intersect(*limits.cpus, *cpus) : *cpus;
  limits.sources.push_back(std::string(label) + " cpuset " + common::FormatCpuList(*cpus) + " (" +
                           (dir / file).string() + ")");
  return true;
}

common::Status ReadMemoryUpwards(fs::path dir, const fs::path& top, const char* file,
                                 HostLimits& limits, const char* label) {
  std::optional<uint64_t> lowest;
  fs::path lowest_file;
  while (true) {
    auto text = ReadIfPresent(dir / file);
    if (!text.ok()) return text.error();
    if (*text) {
      auto limit = ParseMemoryLimit(**text);
      if (!limit.ok()) return limit.error().Context((dir / file).string());
      if (*limit && (!lowest || **limit < *lowest)) lowest = **limit, lowest_file = dir / file;
    }
    if (dir == top || !dir.has_relative_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  if (!lowest) return common::Ok();
  if (!limits.memory_bytes || *lowest < *limits.memory_bytes) limits.memory_bytes = lowest;
  limits.sources.push_back(std::string(label) + " memory limit " + common::FormatSize(*lowest) +
                           " (" + lowest_file.string() + ")");
  return common::Ok();
}

}  // namespace

std::vector<CgroupMount> ParseCgroupMounts(std::string_view mountinfo) {
  std::vector<CgroupMount> mounts;
  for (std::string_view line : Split(mountinfo, '\n')) {
    // "36 35 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu"
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    auto before = Split(line.substr(0, dash), ' ');
    auto after = Split(line.substr(dash + 3), ' ');
    if (before.size() < 5 || after.size() < 3) continue;
    if (after[0] != "cgroup" && after[0] != "cgroup2") continue;
    CgroupMount mount{.v2 = after[0] == "cgroup2",
                      .controllers = {},
                      .root = std::string(before[3]),
                      .mount_point = std::string(before[4])};
    if (!mount.v2) {
      for (std::string_view option : Split(after[2], ',')) mount.controllers.emplace_back(option);
    }
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

std::optional<std::string> CgroupPathOf(std::string_view proc_cgroup, std::string_view controller) {
  for (std::string_view line : Split(proc_cgroup, '\n')) {
    // "4:memory:/docker/abc" (v1), "0::/system.slice/x.service" (v2)
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    const auto names = Split(controllers, ',');
    const bool match = controller.empty()
                           ? controllers.empty()
                           : std::find(names.begin(), names.end(), controller) != names.end();
    if (match) return std::string(TrimSpace(line.substr(second + 1)));
  }
  return std::nullopt;
}

Result<std::optional<uint64_t>> ParseMemoryLimit(std::string_view text) {
  text = TrimSpace(text);
  if (text == "max") return std::optional<uint64_t>();
  auto value = common::ParseInteger<uint64_t>(text);
  if (!value) return Error("\"" + std::string(text) + "\" is not a memory limit");
  if (*value >= kUnlimitedFrom) return std::optional<uint64_t>();
  return std::optional<uint64_t>(*value);
}

Result<HostLimits> ReadHostLimits(const fs::path& root) {
  HostLimits limits;
  auto status = ReadIfPresent(root / "proc/self/status");
  if (!status.ok()) return status.error();
  if (*status) {
    for (std::string_view line : Split(**status, '\n')) {
      if (!line.starts_with("Cpus_allowed_list:")) continue;
      auto cpus = common::ParseCpuList(TrimSpace(line.substr(line.find(':') + 1)));
      if (!cpus.ok()) return cpus.error().Context((root / "proc/self/status").string());
      limits.cpus = *cpus;
      limits.sources.push_back("CPU affinity " + common::FormatCpuList(*cpus));
    }
  }
  auto mountinfo = ReadIfPresent(root / "proc/self/mountinfo");
  auto cgroup = ReadIfPresent(root / "proc/self/cgroup");
  if (!mountinfo.ok()) return mountinfo.error();
  if (!cgroup.ok()) return cgroup.error();
  if (!*mountinfo || !*cgroup) return limits;
  const auto mounts = ParseCgroupMounts(**mountinfo);
  // v2 first: on a hybrid host the v1 controllers, when mounted, are the ones in force; a v2
  // file that is absent (controller not enabled) limits nothing.
  struct Source {
    bool v2;
    std::string_view controller;
    const char* file;
    bool memory;
  };
  for (const Source& source :
       {Source{true, "", "cpuset.cpus.effective", false}, Source{true, "", "memory.max", true},
        Source{false, "cpuset", "cpuset.effective_cpus", false},
        Source{false, "memory", "memory.limit_in_bytes", true}}) {
    const CgroupMount* mount = FindMount(mounts, source.v2, source.controller);
    auto path = CgroupPathOf(**cgroup, source.controller);
    if (mount == nullptr || !path) continue;
    auto dir = CgroupDir(root, *mount, *path);
    if (!dir) continue;
    const char* label = source.v2 ? "cgroup v2" : "cgroup v1";
    if (source.memory) {
      const fs::path top = root / mount->mount_point.relative_path();
      if (auto read = ReadMemoryUpwards(*dir, top, source.file, limits, label); !read.ok()) {
        return read.error();
      }
    } else if (auto read = ReadCpuset(*dir, source.file, limits, label); !read.ok()) {
      return read.error();
    }
  }
  return limits;
}

common::Status ApplyHostLimits(Topology& topology, const HostLimits& limits) {
  std::vector<int> online;
  for (const auto& cpu : topology.cpus) online.push_back(cpu.id);
  if (limits.cpus) {
    const std::vector<int> allowed = Intersect(online, *limits.cpus);
    if (allowed.empty()) {
      return Error("no online CPU (" + common::FormatCpuList(online) +
                   ") is allowed for this process (" + common::FormatCpuList(*limits.cpus) +
                   "): check its CPU affinity and cgroup cpuset");
    }
    if (allowed != online) {
      std::erase_if(topology.cpus, [&](const Cpu& cpu) {
        return !std::binary_search(allowed.begin(), allowed.end(), cpu.id);
      });
      for (auto& cpu : topology.cpus) cpu.siblings = Intersect(cpu.siblings, allowed);
      for (auto& node : topology.nodes) node.cpus = Intersect(node.cpus, allowed);
      std::erase_if(topology.nodes, [](const NumaNode& node) { return node.cpus.empty(); });
      topology.limits.push_back("CPUs " + common::FormatCpuList(allowed) + " of online " +
                                common::FormatCpuList(online));
    }
  }
  uint64_t total = 0;
  for (const auto& node : topology.nodes) total += node.memory_bytes;
  if (limits.memory_bytes && *limits.memory_bytes < total) {
    const double share = static_cast<double>(*limits.memory_bytes) / static_cast<double>(total);
    for (auto& node : topology.nodes) {
      node.memory_bytes = static_cast<uint64_t>(static_cast<double>(node.memory_bytes) * share);
    }
    topology.limits.push_back("memory " + common::FormatSize(*limits.memory_bytes) + " of " +
                              common::FormatSize(total));
    total = 0;
    for (const auto& node : topology.nodes) total += node.memory_bytes;
  }
  topology.total_memory_bytes = total;
  if (!topology.limits.empty()) {
    for (const auto& source : limits.sources) topology.limits.push_back("  from " + source);
  }
  return common::Ok();
}

Result<NicInterrupts> ReadNicInterrupts(const fs::path& root) {
  NicInterrupts nic;
  std::error_code error;
  const fs::path net = root / "sys/class/net";
  std::set<int> irqs;
  for (const auto& entry : fs::directory_iterator(net, error)) {
    const fs::path device = entry.path() / "device";
    if (!fs::exists(device, error)) continue;  // virtual: lo, bridges, veth, ifb
    // A virtio NIC's device is the virtio node; its MSI IRQs belong to the PCI function above.
    bool found = false;
    const fs::path start = fs::canonical(device, error);
    if (error) continue;
    // (is_directory of a missing path sets its error code: each check gets its own.)
    for (fs::path dir = start; !found && dir.has_relative_path(); dir = dir.parent_path()) {
      const fs::path msi = dir / "msi_irqs";
      std::error_code missing;
      if (!fs::is_directory(msi, missing)) {
        if (dir.parent_path().filename() == "devices") break;
        continue;
      }
      std::error_code unreadable;
      for (const auto& irq : fs::directory_iterator(msi, unreadable)) {
        if (auto number = common::ParseInteger<int>(irq.path().filename().string())) {
          irqs.insert(*number);
        }
      }
      found = true;
    }
    if (found) nic.interfaces.push_back(entry.path().filename().string());
  }
  std::sort(nic.interfaces.begin(), nic.interfaces.end());
  std::set<int> cpus;
  for (int irq : irqs) {
    const fs::path file = root / "proc/irq" / std::to_string(irq) / "smp_affinity_list";
    auto text = ReadIfPresent(file);
    if (!text.ok()) return text.error();
    if (!*text) continue;
    auto list = common::ParseCpuList(TrimSpace(**text));
    if (!list.ok()) return list.error().Context(file.string());
    nic.irqs.push_back(irq);
    cpus.insert(list->begin(), list->end());
  }
  nic.cpus.assign(cpus.begin(), cpus.end());
  return nic;
}

std::vector<int> AutoReservedCpus(const NicInterrupts& nic, const std::vector<int>& usable,
                                  std::string& why) {
  if (nic.irqs.empty()) {
    why = "--reserve-cpus auto: no physical NIC with MSI interrupts found; nothing reserved";
    return {};
  }
  std::string names;
  for (const auto& name : nic.interfaces) names += (names.empty() ? "" : ",") + name;
  const std::vector<int> serving = Intersect(usable, nic.cpus);
  if (serving.empty() || serving.size() == usable.size()) {
    why = "--reserve-cpus auto: the interrupts of " + names + " (" +
          std::to_string(nic.irqs.size()) + " IRQs) may run on CPUs " +
          common::FormatCpuList(nic.cpus) +
          (serving.empty() ? ", none of the shards' CPUs" : ", every CPU the shards could use") +
          "; nothing reserved (pin them to a few cores, e.g. /proc/irq/N/smp_affinity_list, to "
          "keep shards off those)";
    return {};
  }
  why = "--reserve-cpus auto: CPUs " + common::FormatCpuList(serving) +
        " reserved for the interrupts of " + names + " (" + std::to_string(nic.irqs.size()) +
        " IRQs)";
  return serving;
}

}  // namespace shardctl::launcher
