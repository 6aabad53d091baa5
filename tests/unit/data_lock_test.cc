#include "launcher/state/data_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace shardctl::launcher {
namespace {

// A fresh state root under /tmp holding deployment "it"'s directory.
std::filesystem::path NewStateRoot() {
  char pattern[] = "/tmp/data-lock-test.XXXXXX";
  const char* made = mkdtemp(pattern);
  EXPECT_NE(made, nullptr);
  const std::filesystem::path root(made != nullptr ? made : "/tmp/data-lock-test.failed");
  std::filesystem::create_directories(root / "it");
  return root;
}

// flock() locks belong to an open file: a second Take(), even in the same process, is refused
// while the first is held, and gets it once the first is gone.
TEST(DataLockTest, OneHolderAtATimeNamedInTheRefusal) {
  const std::filesystem::path root = NewStateRoot();
  const DeploymentDir dir(root, "it");
  {
    auto first = DataLock::Take(dir, "import --live");
    ASSERT_TRUE(first.ok()) << first.error().message();
    auto second = DataLock::Take(dir, "restore");
    ASSERT_FALSE(second.ok());
    const std::string& message = second.error().message();
    EXPECT_NE(message.find("pid " + std::to_string(getpid()) + ", shardctl import --live"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.rfind("usage: ", 0), 0u) << "the user's to fix: " << message;
    // A live import ends at its cutover: that is what the refusal points to.
    EXPECT_NE(message.find("shardctl import --cutover"), std::string::npos) << message;
    // Snapshots have their own lock: a save may run during the import.
    auto save = DataLock::Take(dir, "save", DataLock::Kind::kSnapshots);
    EXPECT_TRUE(save.ok()) << save.error().message();
    auto backup = DataLock::Take(dir, "backup", DataLock::Kind::kSnapshots);
    ASSERT_FALSE(backup.ok());
    EXPECT_NE(backup.error().message().find("shardctl save"), std::string::npos)
        << backup.error().message();
    EXPECT_NE(backup.error().message().find("wait for it to end"), std::string::npos)
        << backup.error().message();
  }
  auto again = DataLock::Take(dir, "restore");
  EXPECT_TRUE(again.ok()) << "the lock outlived its holder";
  // A note naming a process that is gone (an earlier holder's, left in the file) is not named
  // as the holder.
  std::ofstream(root / "it" / "data.lock") << "pid 2147483646, shardctl scale\n";
  auto stale = DataLock::Take(dir, "import");
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.error().message().find("its pid unknown"), std::string::npos)
      << stale.error().message();
  std::filesystem::remove_all(root);
}

// HolderOf names a holder only while it holds the lock: its note stays in the file after it lets
// go, and the holder (this process here) lives on. The supervisor asks it whether a restore runs.
TEST(DataLockTest, HolderOfNamesOnlyAHolderThatStillHoldsIt) {
  const std::filesystem::path root = NewStateRoot();
  const DeploymentDir dir(root, "it");
  EXPECT_EQ(DataLock::HolderOf(dir, DataLock::Kind::kRestarts), "");
  {
    auto held = DataLock::Take(dir, "restore", DataLock::Kind::kRestarts);
    ASSERT_TRUE(held.ok()) << held.error().message();
    EXPECT_EQ(DataLock::HolderOf(dir, DataLock::Kind::kRestarts),
              "pid " + std::to_string(getpid()) + ", shardctl restore");
    EXPECT_EQ(DataLock::HolderOf(dir), "") << "another kind's lock";
  }
  EXPECT_EQ(DataLock::HolderOf(dir, DataLock::Kind::kRestarts), "");
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace shardctl::launcher
