#include "launcher/cli/top_view.h"

#include <cstdio>
#include <functional>
#include <sstream>

#include "common/size.h"
#include "launcher/term/output.h"

namespace shardctl::launcher {
namespace {

std::string Fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string LastFork(const TopRow& row) {
  if (row.forks == 0) return "never";
  std::string text = Fixed(static_cast<double>(row.last_fork_usec) / 1000.0) + "ms";
  if (row.last_save_age_seconds)
    text += ", saved " + FormatAge(*row.last_save_age_seconds) + " ago";
  return text;
}

std::vector<std::string> Cells(const TopRow& row) {
  if (!row.up) {
    return {std::to_string(row.shard),
            std::to_string(row.port),
            "DOWN",
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            row.cpu_percent ? Fixed(*row.cpu_percent) : "-",
            "-"};
  }
  return {std::to_string(row.shard),
          std::to_string(row.port),
          row.role,
          FormatRate(row.ops_per_second),
          row.hit_ratio ? Fixed(*row.hit_ratio * 100) : "-",
          common::FormatSize(row.used_memory),
          row.maxmemory ? common::FormatSize(row.maxmemory) : "none",
          row.maxmemory ? Fixed(100.0 * static_cast<double>(row.used_memory) /
                                static_cast<double>(row.maxmemory))
                        : "-",
          std::to_string(row.clients),
          row.cpu_percent ? Fixed(*row.cpu_percent) : "-",
          LastFork(row)};
}

std::string Optional(const std::optional<double>& value,
                     const std::function<std::string(double)>& format) {
  return value ? format(*value) : "-";
}

nlohmann::json OrNull(const auto& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

}  // namespace

std::string SlotTopHeadline(const std::string& name, const SlotTopFrame& frame) {
  std::ostringstream line;
  line << "shardctl top --slots: \"" << name << "\", the hottest " << frame.slots.size()
       << " slots over " << Fixed(frame.seconds) << "s, by CPU";
  if (!frame.slot_stats) line << " (no CLUSTER SLOT-STATS on this engine: requests only)";
  if (!frame.proxy) line << " (ops/s: no proxy answered PROXY SLOTS)";
  return line.str();
}

std::vector<std::string> SlotTopTable(const SlotTopFrame& frame) {
  const auto bytes = [](double value) {
    return common::FormatSize(static_cast<uint64_t>(value + 0.5));
  };
  std::vector<std::vector<std::string>> cells = {
      {"SLOT", "SHARD", "OPS/S", "CPU%", "KEYS", "IN/S", "OUT/S"}};
  for (const auto& slot : frame.slots) {
    cells.push_back({std::to_string(slot.slot), slot.shard < 0 ? "?" : std::to_string(slot.shard),
                     Optional(slot.ops_per_second, FormatRate),
                     Optional(slot.cpu_share, [](double share) { return Fixed(share * 100); }),
                     slot.keys ? std::to_string(*slot.keys) : "-",
                     Optional(slot.bytes_in_per_second, bytes),
                     Optional(slot.bytes_out_per_second, bytes)});
  }
  std::vector<std::string> lines;
  std::istringstream table(FormatTable(cells));
  for (std::string line; std::getline(table, line);) lines.push_back(line);
  return lines;
}

nlohmann::json SlotTopJson(const std::string& name, const SlotTopFrame& frame) {
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& slot : frame.slots) {
    slots.push_back({{"slot", slot.slot},
                     {"shard", slot.shard < 0 ? nlohmann::json() : nlohmann::json(slot.shard)},
                     {"ops_per_second", OrNull(slot.ops_per_second)},
                     {"cpu_share", OrNull(slot.cpu_share)},
                     {"keys", OrNull(slot.keys)},
                     {"network_bytes_in_per_second", OrNull(slot.bytes_in_per_second)},
                     {"network_bytes_out_per_second", OrNull(slot.bytes_out_per_second)}});
  }
  return {{"name", name},
          {"seconds", frame.seconds},
          {"slot_stats", frame.slot_stats},
          {"proxy", frame.proxy},
          {"slots", std::move(slots)}};
}

std::string FormatRate(double per_second) {
  if (per_second < 1000) return std::to_string(static_cast<int64_t>(per_second + 0.5));
  if (per_second < 1e6) return Fixed(per_second / 1e3) + "k";
  return Fixed(per_second / 1e6) + "M";
}

std::string FormatAge(int64_t seconds) {
  if (seconds < 120) return std::to_string(seconds) + "s";
  if (seconds < 2 * 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 2 * 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

std::string TopHeadline(const std::string& name, const std::vector<TopRow>& rows, TopSort sort,
                        bool keys) {
  double ops = 0;
  size_t down = 0;
  for (const auto& row : rows) {
    ops += row.up ? row.ops_per_second : 0;
    down += !row.up;
  }
  std::ostringstream line;
  line << "shardctl top: \"" << name << "\", " << rows.size() << " shards";
  if (down > 0) line << " (" << down << " DOWN)";
  line << ", " << FormatRate(ops) << " ops/s, sorted by " << TopSortName(sort);
  if (keys) line << "   (keys: o ops, m mem, c cpu, l clients, h hits, s shard; q quits)";
  return line.str();
}

std::vector<std::string> TopTable(const std::vector<TopRow>& rows) {
  std::vector<std::vector<std::string>> cells = {{"SHARD", "PORT", "ROLE", "OPS/S", "HIT%",
                                                  "MEMORY", "CAP", "MEM%", "CLIENTS", "CPU%",
                                                  "LAST FORK"}};
  for (const auto& row : rows) cells.push_back(Cells(row));
  std::vector<std::string> lines;
  std::istringstream table(FormatTable(cells));
  for (std::string line; std::getline(table, line);) lines.push_back(line);
  return lines;
}

}  // namespace shardctl::launcher
