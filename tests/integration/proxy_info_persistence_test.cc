// INFO's persistence and script counts through shardproxy as one Redis reports them (Redis'
// unit/bitops "SETBIT/BITFIELD only increase dirty when the value changed" and unit/scripting
// "SCRIPTING FLUSH ASYNC"): writes not yet saved summed over every primary, and a script loaded
// on every primary counted once. A real 3-shard cluster behind the real proxy.
#include <string>
#include <vector>

#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

constexpr int kShards = 3;

class ProxyInfoPersistenceTest : public ProxyTest {
 protected:
  void SetUp() override {
    ProxyTest::SetUp();
    UpWithProxy();
  }

  // "field:12" in the proxy's INFO for `section` -> 12; -1 when the field is missing.
  long long InfoField(const std::string& section, const std::string& field) {
    const std::string info = TextOf(Proxy({"INFO", section}));
    const size_t at = info.find("\r\n" + field + ":");
    return at == std::string::npos ? -1 : std::stoll(info.substr(at + field.size() + 3));
  }
};

TEST_F(ProxyInfoPersistenceTest, UnsavedChangesAddUpOverEveryPrimary) {
  ASSERT_EQ(Keys(), 0);
  std::vector<std::string> keys;
  for (int shard = 0; shard < kShards; ++shard) keys.push_back(KeyOn(shard_port(shard), "bits"));
  const long long before = InfoField("persistence", "rdb_changes_since_last_save");
  ASSERT_GE(before, 0);
  // A new key on each primary: one change each, wherever it lives.
  for (const std::string& key : keys) ASSERT_EQ(IntegerOf(Proxy({"SETBIT", key, "0", "1"})), 0);
  EXPECT_EQ(InfoField("persistence", "rdb_changes_since_last_save"), before + kShards);
  // Setting a bit to the value it has changes nothing, on any primary.
  for (const std::string& key : keys) ASSERT_EQ(IntegerOf(Proxy({"SETBIT", key, "0", "1"})), 1);
  EXPECT_EQ(InfoField("persistence", "rdb_changes_since_last_save"), before + kShards);
  EXPECT_EQ(InfoField("persistence", "rdb_bgsave_in_progress"), 0);
  EXPECT_EQ(Keys(), kShards);
  EXPECT_EQ(IntegerOf(Proxy({"DEL", keys[0], keys[1], keys[2]})), kShards);
  EXPECT_EQ(Keys(), 0);
}

TEST_F(ProxyInfoPersistenceTest, ScriptsLoadedOnEveryPrimaryCountOnce) {
  ASSERT_EQ(Keys(), 0);
  ASSERT_EQ(TextOf(Proxy({"SCRIPT", "FLUSH"})), "OK");
  EXPECT_EQ(InfoField("memory", "number_of_cached_scripts"), 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(TextOf(Proxy({"SCRIPT", "LOAD", "return " + std::to_string(i)})).size(), 40u);
  }
  EXPECT_EQ(InfoField("memory", "number_of_cached_scripts"), 10);
  ASSERT_EQ(TextOf(Proxy({"SCRIPT", "FLUSH", "ASYNC"})), "OK");
  EXPECT_EQ(InfoField("memory", "number_of_cached_scripts"), 0);
  EXPECT_EQ(Keys(), 0);
}

}  // namespace
}  // namespace shardctl::integration
