#include "launcher/cluster/slot_migrations.h"

#include <gtest/gtest.h>

namespace shardctl::launcher {
namespace {

TEST(SlotMigrationsTest, JobsAreSplitAtEachName) {
  // Two jobs as RedisConnection joins a RESP2 GETSLOTMIGRATIONS reply, the second with an empty
  // message (an empty field must not shift the pairs).
  const std::string text =
      "name\naaa\noperation\nEXPORT\nslot_ranges\n15495-15495\nstate\nsnapshotting\nmessage\n\n"
      "name\nbbb\noperation\nIMPORT\nslot_ranges\n0-99 200-299\nstate\nsuccess\nmessage\n";
  const auto jobs = ParseSlotMigrationJobs(text);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(JobField(jobs[0], "name"), "aaa");
  EXPECT_EQ(JobField(jobs[0], "state"), "snapshotting");
  EXPECT_EQ(JobField(jobs[0], "message"), "");
  EXPECT_EQ(JobField(jobs[1], "slot_ranges"), "0-99 200-299");
  EXPECT_EQ(JobField(jobs[1], "operation"), "IMPORT");
  EXPECT_EQ(JobField(jobs[1], "no such field"), "");
}

TEST(SlotMigrationsTest, NoJobsIsAnEmptyList) { EXPECT_TRUE(ParseSlotMigrationJobs("").empty()); }

TEST(SlotMigrationsTest, OnlyEndStatesAreFinished) {
  for (const char* state : {"success", "failed", "cancelled", "canceled"}) {
    EXPECT_TRUE(SlotMigrationFinished(state)) << state;
  }
  for (const char* state : {"waiting-to-snapshot", "snapshotting", "receiving-snapshot",
                            "streaming", "waiting-to-pause", ""}) {
    EXPECT_FALSE(SlotMigrationFinished(state)) << state;
  }
}

}  // namespace
}  // namespace shardctl::launcher
