#include "launcher/ops/backup_manifest.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "common/slots.h"

namespace shardctl::launcher {

using common::Error;
using nlohmann::json;

std::string BackupFileName(size_t k) { return "shard-" + std::to_string(k) + ".rdb"; }

namespace {

void AddSlots(const std::vector<common::SlotRange>& ranges, std::set<int>& slots) {
  for (const auto& range : ranges) {
    for (int slot = range.first; slot <= range.last; ++slot) slots.insert(slot);
  }
}

}  // namespace

void NoteMovingSlots(const common::NodeLine& before, const common::NodeLine& at_cut,
                     std::set<int>& moving) {
  for (const auto& migration : at_cut.migrations) moving.insert(migration.slot);
  std::set<int> had;
  std::set<int> has;
  AddSlots(before.slots, had);
  AddSlots(at_cut.slots, has);
  std::set_symmetric_difference(had.begin(), had.end(), has.begin(), has.end(),
                                std::inserter(moving, moving.end()));
}

std::string SlotListText(const std::set<int>& slots) {
  std::vector<common::SlotRange> ranges;
  for (int slot : slots) common::AppendSlot(ranges, slot);
  return common::FormatSlotRanges(ranges);
}

json ManifestFilesJson(const BackupManifest& manifest) {
  json files = json::array();
  for (const auto& file : manifest.files) {
    files.push_back({{"file", file.file},
                     {"slots", file.slots},
                     {"node", file.node},
                     {"keys", file.keys},
                     {"bytes", file.bytes},
                     {"sha256", file.sha256},
                     {"rdb_format", file.rdb_format}});
  }
  return files;
}

std::string ManifestJson(const BackupManifest& manifest) {
  return json{{"format", BackupManifest::kFormat},
              {"deployment", manifest.deployment},
              {"engine", manifest.engine},
              {"engine_version", manifest.engine_version},
              {"created_unix_ms", manifest.created_unix_ms},
              {"write_pause_ms", manifest.write_pause_ms},
              {"shards", manifest.files.size()},
              {"keys", manifest.keys},
              {"moving_slots", manifest.moving_slots},
              {"files", ManifestFilesJson(manifest)}}
             .dump(2) +
         "\n";
}

namespace {

// The field `name` of `object` as T; the error names where it is.
template <typename T>
common::Result<T> Field(const json& object, const char* name, const std::string& where) {
  if (!object.contains(name)) return Error("manifest.json: " + where + name + " missing");
  // A count or size below zero would read as a huge unsigned number.
  if constexpr (std::is_unsigned_v<T>) {
    if (object.at(name).is_number_integer() && !object.at(name).is_number_unsigned()) {
      return Error("manifest.json: " + where + name + " is below zero");
    }
  }
  try {
    return object.at(name).get<T>();
  } catch (const json::exception&) {
    return Error("manifest.json: " + where + name + " has the wrong type");
  }
}

// The first error among `fields`, if any.
template <typename... R>
std::optional<Error> FirstError(const R&... fields) {
  std::optional<Error> first;
  auto note = [&first](const auto& field) {
    if (!first && !field.ok()) first = field.error();
  };
  (note(fields), ...);
  return first;
}

// What the fields must say together: an engine shardctl runs, each file once, no slot in two
// files, the files' keys adding up to the total, as many files as shards. A manifest edited by
// hand that breaks one would restore wrongly (a file listed twice was copied twice and another
// never, then blamed on "keys lost while it ran").
common::Status CheckConsistent(const BackupManifest& manifest, const json& root) {
  if (manifest.engine != "redis" && manifest.engine != "valkey") {
    return Error("manifest.json: engine \"" + manifest.engine + "\" is neither redis nor valkey");
  }
  if (root.contains("shards")) {
    auto shards = Field<uint64_t>(root, "shards", "");
    if (!shards.ok()) return shards.error();
    if (*shards != manifest.files.size()) {
      return Error("manifest.json: shards is " + std::to_string(*shards) + " but files lists " +
                   std::to_string(manifest.files.size()));
    }
  }
  std::set<std::string> names;
  std::vector<int> owner(common::kSlotCount, -1);
  uint64_t keys = 0;
  for (size_t i = 0; i < manifest.files.size(); ++i) {
    const BackupFile& file = manifest.files[i];
    const std::string where = "manifest.json: files[" + std::to_string(i) + "]";
    if (!names.insert(file.file).second) {
      return Error(where + " lists " + file.file + " a second time");
    }
    keys += file.keys;
    if (file.slots.empty()) continue;  // a primary that served no slot (a scale cut short)
    auto ranges = common::ParseSlotRanges(file.slots);
    if (!ranges.ok()) return Error(where + ".slots \"" + file.slots + "\" is not a list of slots");
    for (const auto& range : *ranges) {
      for (int slot = range.first; slot <= range.last; ++slot) {
        if (owner[static_cast<size_t>(slot)] >= 0) {
          return Error(where + ".slots: slot " + std::to_string(slot) + " is also in files[" +
                       std::to_string(owner[static_cast<size_t>(slot)]) + "]");
        }
        owner[static_cast<size_t>(slot)] = static_cast<int>(i);
      }
    }
  }
  if (keys != manifest.keys) {
    return Error("manifest.json: keys is " + std::to_string(manifest.keys) +
                 " but the files' keys add up to " + std::to_string(keys));
  }
  return common::Ok();
}

}  // namespace

common::Result<BackupManifest> ParseManifest(const std::string& text) {
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded() || !root.is_object()) return Error("manifest.json: not a JSON object");
  auto format = Field<int>(root, "format", "");
  if (!format.ok()) return format.error();
  if (*format != BackupManifest::kFormat) {
    return Error("manifest.json: format " + std::to_string(*format) +
                 " is not one this shardctl reads (" + std::to_string(BackupManifest::kFormat) +
                 "): restore it with the shardctl that wrote it");
  }
  BackupManifest manifest;
  auto deployment = Field<std::string>(root, "deployment", "");
  auto engine = Field<std::string>(root, "engine", "");
  auto version = Field<std::string>(root, "engine_version", "");
  auto created = Field<int64_t>(root, "created_unix_ms", "");
  auto pause = Field<int64_t>(root, "write_pause_ms", "");
  auto keys = Field<uint64_t>(root, "keys", "");
  if (auto error = FirstError(deployment, engine, version, created, pause, keys)) return *error;
  manifest = {*deployment, *engine, *version, *created, *pause, *keys, {}, {}};
  // Absent in backups written before it was recorded: those are placed as before.
  if (root.contains("moving_slots")) {
    auto moving = Field<std::string>(root, "moving_slots", "");
    if (!moving.ok()) return moving.error();
    if (!moving->empty() && !common::ParseSlotRanges(*moving).ok()) {
      return Error("manifest.json: moving_slots \"" + *moving + "\" is not a list of slots");
    }
    manifest.moving_slots = *moving;
  }
  if (!root.contains("files") || !root["files"].is_array() || root["files"].empty()) {
    return Error("manifest.json: files missing or empty");
  }
  for (size_t i = 0; i < root["files"].size(); ++i) {
    const json& entry = root["files"][i];
    const std::string where = "files[" + std::to_string(i) + "].";
    auto name = Field<std::string>(entry, "file", where);
    auto slots = Field<std::string>(entry, "slots", where);
    auto node = Field<std::string>(entry, "node", where);
    auto file_keys = Field<uint64_t>(entry, "keys", where);
    auto bytes = Field<uint64_t>(entry, "bytes", where);
    auto sha = Field<std::string>(entry, "sha256", where);
    auto rdb = Field<std::string>(entry, "rdb_format", where);
    if (auto error = FirstError(name, slots, node, file_keys, bytes, sha, rdb)) return *error;
    if (name->empty() || name->find('/') != std::string::npos || name->starts_with(".")) {
      return Error("manifest.json: " + where + "file \"" + *name +
                   "\" is not a file name in the backup directory");
    }
    manifest.files.push_back({*name, *slots, *node, *file_keys, *bytes, *sha, *rdb});
  }
  if (auto consistent = CheckConsistent(manifest, root); !consistent.ok()) {
    return consistent.error();
  }
  return manifest;
}

}  // namespace shardctl::launcher
