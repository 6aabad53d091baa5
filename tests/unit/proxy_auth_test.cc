#include <gtest/gtest.h>

#include "proxy/services/auth.h"

namespace shardctl::proxy {
namespace {

TEST(AuthConfigTest, ReadsUsersAndTheBackendLogin) {
  auto config = ParseAuthConfig(
      "# comment\n\nrequirepass s3cret\nuser app  app-pw # trailing comment\r\n"
      "backend-user proxy\nbackend-password hunter2\n",
      "auth.conf");
  ASSERT_TRUE(config) << config.error().message();
  EXPECT_TRUE(config->required());
  EXPECT_TRUE(config->Check("default", "s3cret"));
  EXPECT_TRUE(config->Check("app", "app-pw"));
  EXPECT_FALSE(config->Check("app", "s3cret"));
  EXPECT_FALSE(config->Check("default", "s3cre"));
  EXPECT_FALSE(config->Check("default", "s3crett"));
  EXPECT_FALSE(config->Check("nobody", ""));
  EXPECT_EQ(config->backend_user, "proxy");
  EXPECT_EQ(config->backend_password, "hunter2");
}

TEST(AuthConfigTest, OnlyABackendPasswordLeavesClientsOpen) {
  auto config = ParseAuthConfig("backend-password x\n", "a");
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->required());
  EXPECT_FALSE(config->Check("default", ""));
}

TEST(AuthConfigTest, EveryBadLineIsNamed) {
  auto config = ParseAuthConfig("requirepass\nuser onlyname\nfrobnicate 1\nbackend-user proxy\n",
                                "auth.conf");
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().message(),
            "auth.conf:1: requirepass takes exactly one value (no spaces)\n"
            "auth.conf:2: user needs a name and a password: user NAME PASSWORD\n"
            "auth.conf:3: unknown setting \"frobnicate\" (use requirepass, user, backend-user, "
            "backend-password)\n"
            "auth.conf: backend-user needs a backend-password");
}

}  // namespace
}  // namespace shardctl::proxy
