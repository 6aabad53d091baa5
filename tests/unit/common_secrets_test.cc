// common/secrets.h: which addresses need a password, the password file's text and its mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "common/secrets.h"

namespace shardctl::common {
namespace {

namespace fs = std::filesystem;

TEST(IsLoopbackHostTest, OnlyAddressesNoOtherHostCanReach) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]",
                           "0:0:0:0:0:0:0:1", "localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host :
       {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "127.0.0", "127.0.0.1.5", "127.0.0.256",
        "127.example.com", "localhost.example.com", "", "[::2]", "1270.0.0.1"}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(ParsePasswordTest, OneLineWithCommentsAndBlankLinesAround) {
  EXPECT_EQ(ParsePassword("s3cret\n", "f").value(), "s3cret");
  EXPECT_EQ(ParsePassword("# shardctl password\n\n  s3cret  \r\n\n", "f").value(), "s3cret");
  EXPECT_EQ(ParsePassword("a1!$%&()*+,-./:;<=>?@[]^_`{|}~", "f").value(),
            "a1!$%&()*+,-./:;<=>?@[]^_`{|}~");
}

TEST(ParsePasswordTest, RefusalsNameTheFileAndTheFixButNeverThePassword) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "pass: holds no password (write the password on one line)"},
      {"# only a comment\n\n", "pass: holds no password"},
      {"one\ntwo\n", "pass: holds 2 lines (write only the password"},
      {"with space\n", "pass: the password may only hold printable ASCII without spaces"},
      {"quo\"te\n", "without spaces, quotes or backslashes"},
      {"back\\slash\n", "without spaces, quotes or backslashes"},
      {"tab\there\n", "without spaces"},
      {std::string(513, 'x'), "pass: the password is longer than 512 characters"},
  };
  for (const auto& [text, message] : cases) {
    auto parsed = ParsePassword(text, "pass");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message().find(message), std::string::npos)
        << parsed.error().message();
    if (text.size() > 3 && text.size() < 20) {
      EXPECT_EQ(parsed.error().message().find(text.substr(0, text.size() - 1)), std::string::npos)
          << "the password was shown: " << parsed.error().message();
    }
  }
}

class SecretFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("shardctl-secrets-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& text, fs::perms perms) {
    fs::path path = dir_ / "pass";
    std::ofstream(path) << text;
    fs::permissions(path, perms);
    return path;
  }

  fs::path dir_;
};

TEST_F(SecretFileTest, OwnerOnlyFilesAreRead) {
  auto path = Write("hunter2\n", fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(ReadPasswordFile(path, "--password-file").value(), "hunter2");
  fs::permissions(path, fs::perms::owner_read);
  EXPECT_EQ(ReadPasswordFile(path, "--password-file").value(), "hunter2");
}

TEST_F(SecretFileTest, GroupOrOtherAccessIsRefusedWithTheChmodToRun) {
  for (fs::perms extra : {fs::perms::group_read, fs::perms::others_read, fs::perms::group_write,
                          fs::perms::others_exec}) {
    auto path = Write("hunter2\n", fs::perms::owner_read | fs::perms::owner_write | extra);
    auto read = ReadPasswordFile(path, "--password-file");
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().message(),
              "--password-file " + path.string() +
                  ": the group or others may access it (it holds a password: chmod 600 " +
                  path.string() + ")");
  }
}

TEST_F(SecretFileTest, MissingFilesAndDirectoriesAreRefused) {
  auto missing = ReadSecretFile(dir_ / "absent", "--auth-file");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message().rfind(
                "--auth-file " + (dir_ / "absent").string() + ": cannot read it", 0),
            0u)
      << missing.error().message();
  auto directory = ReadSecretFile(dir_, "--auth-file");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message().find("is not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace shardctl::common
