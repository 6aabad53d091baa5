// Which engine the proxy fronts, from a shard's INFO: Valkey reports redis_version 7.2.4 for old
// clients, and names itself in server_name and valkey_version.
#include <gtest/gtest.h>

#include "proxy/services/engine_identity.h"

namespace shardctl::proxy {
namespace {

TEST(EngineIdentityTest, ValkeyIsToldApartByServerName) {
  const EngineIdentity valkey = EngineIdentityFromInfo(
      "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n");
  EXPECT_TRUE(valkey.valkey());
  EXPECT_EQ(valkey.version, "9.1.2");
  EXPECT_EQ(valkey.major(), 9);
}

TEST(EngineIdentityTest, RedisHasNoServerName) {
  const EngineIdentity redis = EngineIdentityFromInfo("# Server\r\nredis_version:8.2.3\r\n");
  EXPECT_EQ(redis.name, "redis");
  EXPECT_EQ(redis.version, "8.2.3");
  EXPECT_EQ(redis.major(), 8);
  EXPECT_EQ(EngineIdentityFromInfo("").major(), 0);
}

}  // namespace
}  // namespace shardctl::proxy
