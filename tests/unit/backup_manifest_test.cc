#include "launcher/ops/backup_manifest.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "launcher/engine/engine.h"

namespace shardctl::launcher {
namespace {

BackupManifest TwoFiles() {
  return {.deployment = "prod",
          .engine = "redis",
          .engine_version = "7.0.15",
          .created_unix_ms = 1764000000000,
          .write_pause_ms = 3,
          .keys = 30,
          .files = {{"shard-0.rdb", "0-8191", "127.0.0.1:7000", 10, 1234, std::string(64, 'a'),
                     "REDIS0010"},
                    {"shard-1.rdb", "8192-16383", "127.0.0.1:7001", 20, 4321, std::string(64, 'b'),
                     "REDIS0010"}}};
}

TEST(BackupManifestTest, RoundTripsEveryField) {
  const BackupManifest written = TwoFiles();
  auto read = ParseManifest(ManifestJson(written));
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->deployment, "prod");
  EXPECT_EQ(read->engine_version, "7.0.15");
  EXPECT_EQ(read->created_unix_ms, 1764000000000);
  EXPECT_EQ(read->write_pause_ms, 3);
  EXPECT_EQ(read->keys, 30u);
  ASSERT_EQ(read->files.size(), 2u);
  EXPECT_EQ(read->files[1].file, "shard-1.rdb");
  EXPECT_EQ(read->files[1].slots, "8192-16383");
  EXPECT_EQ(read->files[1].keys, 20u);
  EXPECT_EQ(read->files[1].bytes, 4321u);
  EXPECT_EQ(read->files[1].sha256, std::string(64, 'b'));
  EXPECT_EQ(read->files[0].rdb_format, "REDIS0010");
}

TEST(BackupManifestTest, NamesWhatIsWrong) {
  EXPECT_EQ(ParseManifest("[1,2]").error().message(), "manifest.json: not a JSON object");
  EXPECT_EQ(ParseManifest(R"({"format": 9})").error().message(),
            "manifest.json: format 9 is not one this shardctl reads (1): restore it with the "
            "shardctl that wrote it");
  std::string text = ManifestJson(TwoFiles());
  std::string no_sha = text;
  no_sha.replace(no_sha.find("\"sha256\""), 8, "\"sha999\"");
  EXPECT_EQ(ParseManifest(no_sha).error().message(), "manifest.json: files[0].sha256 missing");
  std::string escaping = text;
  escaping.replace(escaping.find("shard-1.rdb"), 11, "../etc/pass");
  EXPECT_EQ(ParseManifest(escaping).error().message(),
            "manifest.json: files[1].file \"../etc/pass\" is not a file name in the backup "
            "directory");
  std::string wrong_type = text;
  wrong_type.replace(wrong_type.find("\"keys\": 30"), 10, "\"keys\": \"x\"");
  EXPECT_EQ(ParseManifest(wrong_type).error().message(), "manifest.json: keys has the wrong type");
}

// A manifest edited by hand whose fields disagree is refused, naming what disagrees (before: a
// file listed twice restored one file twice and another never, then blamed lost keys).
TEST(BackupManifestTest, RefusesFieldsThatDisagree) {
  auto refusal = [](const std::function<void(nlohmann::json&)>& edit) {
    auto json = nlohmann::json::parse(ManifestJson(TwoFiles()));
    edit(json);
    auto read = ParseManifest(json.dump());
    return read.ok() ? std::string("accepted") : read.error().message();
  };
  EXPECT_EQ(refusal([](auto& j) { j["files"][1]["file"] = "shard-0.rdb"; }),
            "manifest.json: files[1] lists shard-0.rdb a second time");
  EXPECT_EQ(refusal([](auto& j) { j["files"][1]["slots"] = "8000-16383"; }),
            "manifest.json: files[1].slots: slot 8000 is also in files[0]");
  EXPECT_EQ(refusal([](auto& j) { j["files"][1]["slots"] = "x"; }),
            "manifest.json: files[1].slots \"x\" is not a list of slots");
  EXPECT_EQ(refusal([](auto& j) { j["keys"] = 31; }),
            "manifest.json: keys is 31 but the files' keys add up to 30");
  EXPECT_EQ(refusal([](auto& j) { j["keys"] = -5; }), "manifest.json: keys is below zero");
  EXPECT_EQ(refusal([](auto& j) { j["files"][0]["bytes"] = -1; }),
            "manifest.json: files[0].bytes is below zero");
  EXPECT_EQ(refusal([](auto& j) { j["shards"] = 3; }),
            "manifest.json: shards is 3 but files lists 2");
  EXPECT_EQ(refusal([](auto& j) { j["engine"] = "memcached"; }),
            "manifest.json: engine \"memcached\" is neither redis nor valkey");
  // A primary that served no slot at the cut has a file with none; older manifests have no
  // "shards".
  EXPECT_EQ(refusal([](auto& j) {
              j["files"].push_back(j["files"][1]);
              j["files"][2]["file"] = "shard-2.rdb";
              j["files"][2]["slots"] = "";
              j["files"][2]["keys"] = 0;
              j["shards"] = 3;
            }),
            "accepted");
  EXPECT_EQ(refusal([](auto& j) { j.erase("shards"); }), "accepted");
}

// Slots moving at the cut are kept; a manifest written before they were recorded has none; a
// bad list is named.
TEST(BackupManifestTest, KeepsTheSlotsThatWereMovingAtTheCut) {
  BackupManifest written = TwoFiles();
  written.moving_slots = "93,100-101";
  auto read = ParseManifest(ManifestJson(written));
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->moving_slots, "93,100-101");
  auto json = nlohmann::json::parse(ManifestJson(TwoFiles()));
  json.erase("moving_slots");
  auto older = ParseManifest(json.dump());
  ASSERT_TRUE(older.ok()) << older.error().message();
  EXPECT_EQ(older->moving_slots, "");
  json["moving_slots"] = "93-x";
  EXPECT_EQ(ParseManifest(json.dump()).error().message(),
            "manifest.json: moving_slots \"93-x\" is not a list of slots");
}

common::NodeLine Primary(std::vector<common::SlotRange> slots,
                         std::vector<common::SlotMigration> migrations = {}) {
  common::NodeLine line;
  line.slots = std::move(slots);
  line.migrations = std::move(migrations);
  return line;
}

TEST(BackupManifestTest, MovingSlotsAreMarkedOnesAndOnesThatChangedHands) {
  std::set<int> moving;
  // Nothing moving: nothing noted.
  NoteMovingSlots(Primary({{0, 8191}}), Primary({{0, 8191}}), moving);
  EXPECT_TRUE(moving.empty());
  // Migrating away and importing, as the node's own line marks them.
  NoteMovingSlots(Primary({{0, 8191}}),
                  Primary({{0, 8191}}, {{.slot = 93, .importing = false, .peer_id = "b"}}), moving);
  NoteMovingSlots(Primary({{8192, 16383}}),
                  Primary({{8192, 16383}}, {{.slot = 93, .importing = true, .peer_id = "a"}}),
                  moving);
  // Handed over between the slot map the backup started from and the cut: lost and gained.
  NoteMovingSlots(Primary({{0, 8191}}), Primary({{0, 8189}}), moving);
  NoteMovingSlots(Primary({{8192, 16383}}), Primary({{8190, 16383}}), moving);
  EXPECT_EQ(moving, (std::set<int>{93, 8190, 8191}));
  EXPECT_EQ(SlotListText(moving), "93,8190-8191");
  EXPECT_EQ(SlotListText({}), "");
}

TEST(RdbFormatTest, ParsesTheFileHeader) {
  auto redis = ParseRdbFormat("REDIS0010");
  ASSERT_TRUE(redis);
  EXPECT_FALSE(redis->valkey_signature);
  EXPECT_EQ(redis->version, 10);
  auto valkey = ParseRdbFormat("VALKEY080");
  ASSERT_TRUE(valkey);
  EXPECT_TRUE(valkey->valkey_signature);
  EXPECT_EQ(valkey->version, 80);
  EXPECT_EQ(valkey->ToString(), "VALKEY080");
  EXPECT_FALSE(ParseRdbFormat("REDIS010"));
  EXPECT_FALSE(ParseRdbFormat("MYSQL0010"));
  EXPECT_FALSE(ParseRdbFormat("REDISabcd"));
}

}  // namespace
}  // namespace shardctl::launcher
