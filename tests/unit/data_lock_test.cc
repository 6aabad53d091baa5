#include "launcher/state/data_lock.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace shardctl::launcher {
namespace {

// flock() locks belong to an open file: a second Take(), even in the same process, is refused
// while the first is held, and gets it once the first is gone.
TEST(DataLockTest, OneHolderAtATimeNamedInTheRefusal) {
  char pattern[] = "/tmp/data-lock-test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path root(pattern);
  std::filesystem::create_directories(root / "it");
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
  }
  auto again = DataLock::Take(dir, "restore");
  EXPECT_TRUE(again.ok()) << "the lock outlived its holder";
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace shardctl::launcher
