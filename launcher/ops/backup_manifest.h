// What a backup directory holds, in its manifest.json: enough to check every file before
// anything changes and to put the keys back onto a cluster of any shape. Pure: JSON in and out.
//
//   DIR/manifest.json   written last, so a directory without one is an unfinished backup
//   DIR/shard-<k>.rdb   primary k's snapshot (k in slot order), as the engine wrote it
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/result.h"

namespace shardctl::launcher {

struct BackupFile {
  std::string file;        // "shard-0.rdb", relative to the directory
  std::string slots;       // the ranges its primary served: "0-5460"
  std::string node;        // host:port it was taken from
  uint64_t keys = 0;       // DBSIZE at the cut
  uint64_t bytes = 0;      // file size
  std::string sha256;      // lowercase hex of the file
  std::string rdb_format;  // "REDIS0010", "VALKEY080"
};

struct BackupManifest {
  static constexpr int kFormat = 1;  // bumped when a field changes meaning
  std::string deployment;
  std::string engine;          // "redis" or "valkey"
  std::string engine_version;  // "7.0.15"
  int64_t created_unix_ms = 0;
  int64_t write_pause_ms = 0;
  uint64_t keys = 0;
  std::vector<BackupFile> files;
  // Slots in the middle of a move at the cut ("93,100-101"; "" for none): their keys may sit in
  // either primary's file, so a restore copies them key by key instead of placing files.
  std::string moving_slots;
};

std::string ManifestJson(const BackupManifest& manifest);
// Its files as a JSON array (the manifest's "files", also in `backup --json`).
nlohmann::json ManifestFilesJson(const BackupManifest& manifest);
// Errors name the field that is missing or wrong ("manifest.json: files[2].sha256 missing").
common::Result<BackupManifest> ParseManifest(const std::string& json);

// The name of primary k's file.
std::string BackupFileName(size_t k);

// The slots a primary had in motion at the cut, as its own CLUSTER NODES line then says
// (`at_cut`): those marked migrating or importing, and those it gained or lost since the slot map
// the backup started from (`before`). Added to `moving`.
void NoteMovingSlots(const common::NodeLine& before, const common::NodeLine& at_cut,
                     std::set<int>& moving);
// "93,100-101" for {93, 100, 101}.
std::string SlotListText(const std::set<int>& slots);

}  // namespace shardctl::launcher
