// The proxy's hot keys on a real cluster (issue 31): a seeded hotkeys:10:50 load through
// shardproxy, and PROXY HOTKEYS names the generator's 10 hottest keys (known from its seed);
// PROXY SLOTS adds up to the requests sent; `shardctl top --keys` shows them for a deployment
// with a supervised proxy and refuses one without.
#include <algorithm>
#include <set>

#include "launcher/bench/key_distribution.h"
#include "launcher/bench/split_mix.h"
#include "launcher/bench/workload.h"
#include "tests/integration/proxy_fixture.h"

namespace shardctl::integration {
namespace {

using launcher::KeyBuffer;
using launcher::KeyDistribution;
using launcher::KeyPicker;
using launcher::SplitMix64;

constexpr uint64_t kKeyspace = 100000;
constexpr uint64_t kSeed = 31;
const KeyDistribution kHotKeys{
    .kind = KeyDistribution::Kind::kHotKeys, .hot_keys = 10, .hot_percent = 50};

std::string KeyOf(uint64_t n) {
  KeyBuffer buffer;
  return std::string(launcher::KeyName(n, buffer));
}

// The generator's hottest keys: ranks 0..9 through the seed's permutation.
std::set<std::string> GeneratorHotKeys() {
  const KeyPicker picker(kHotKeys, kKeyspace, kSeed);
  std::set<std::string> keys;
  for (uint64_t rank = 0; rank < kHotKeys.hot_keys; ++rank)
    keys.insert(KeyOf(picker.KeyOfRank(rank)));
  return keys;
}

// `requests` GETs of keys drawn from the seeded hotkeys:10:50 picker over one connection to
// `port`, 100 at a time; false (with a test failure) when a reply is missing.
bool DriveLoad(int port, int requests) {
  std::string error;
  auto connection = RedisConnection::Open(port, &error);
  if (!connection) {
    ADD_FAILURE() << error;
    return false;
  }
  const KeyPicker picker(kHotKeys, kKeyspace, kSeed);
  SplitMix64 random(kSeed);
  for (int sent = 0; sent < requests;) {
    const int batch = std::min(100, requests - sent);
    for (int i = 0; i < batch; ++i) connection->Append({"GET", KeyOf(picker.Pick(random))});
    for (int i = 0; i < batch; ++i) {
      if (!connection->GetReply()) {
        ADD_FAILURE() << "GET through the proxy: " << connection->error();
        return false;
      }
    }
    sent += batch;
  }
  return true;
}

long long SlotRequests(int port) {
  auto slots = QueryRedis(port, {"PROXY", "SLOTS"});
  long long sum = 0;
  for (size_t i = 1; slots && i < slots->elements.size(); i += 2) sum += slots->elements[i].integer;
  return sum;
}

class ProxyHotKeysTest : public ProxyTest {};

TEST_F(ProxyHotKeysTest, FindsTheGeneratorsHotKeysAndCountsEverySlotRequest) {
  UpWithProxy({"--hot-keys", "64"});
  const long long keys_before = TotalKeys(KeysOnPrimaries());
  constexpr int kRequests = 20000;
  ASSERT_TRUE(DriveLoad(proxy_port(), kRequests));
  // The workers publish about once a second.
  ASSERT_TRUE(WaitUntil([&] { return SlotRequests(proxy_port()) == kRequests; }, 5s))
      << "PROXY SLOTS adds up to " << SlotRequests(proxy_port()) << ", not " << kRequests;

  auto hot = QueryRedis(proxy_port(), {"PROXY", "HOTKEYS", "COUNT", "10"});
  ASSERT_TRUE(hot);
  ASSERT_EQ(hot->elements.size(), 10u) << TextOf(hot);
  const std::set<std::string> expected = GeneratorHotKeys();
  int found = 0;
  for (const RedisReply& entry : hot->elements) {
    ASSERT_EQ(entry.elements.size(), 4u);
    if (!expected.contains(entry.elements[0].text)) continue;
    ++found;
    // Every request was a GET: all reads. ~1000 each (5% of 20000), never fewer than counted.
    EXPECT_EQ(entry.elements[2].integer, entry.elements[1].integer) << entry.elements[0].text;
    EXPECT_GT(entry.elements[1].integer, 700) << entry.elements[0].text;
  }
  EXPECT_GE(found, 9) << "of the generator's 10 hottest keys, PROXY HOTKEYS COUNT 10 names "
                      << found;

  auto info = QueryRedis(proxy_port(), {"INFO", "hotkeys"});
  ASSERT_TRUE(info);
  EXPECT_NE(info->text.find("hotkeys_requests:" + std::to_string(kRequests)), std::string::npos)
      << info->text;
  // INFO proxy carries them too (the proxy's own view); the default INFO does not.
  auto proxy_info = QueryRedis(proxy_port(), {"INFO", "proxy"});
  ASSERT_TRUE(proxy_info);
  EXPECT_NE(proxy_info->text.find("# Proxy"), std::string::npos) << proxy_info->text;
  EXPECT_NE(proxy_info->text.find("hotkey0:key="), std::string::npos) << proxy_info->text;
  auto plain_info = QueryRedis(proxy_port(), {"INFO"});
  ASSERT_TRUE(plain_info);
  EXPECT_EQ(plain_info->text.find("hotkeys_requests:"), std::string::npos) << plain_info->text;
  auto unknown = QueryRedis(proxy_port(), {"PROXY", "NOPE"});
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->text, "ERR unknown subcommand 'NOPE'. Try PROXY HELP.");
  // Reads only: the keyspace is as it was.
  EXPECT_EQ(TotalKeys(KeysOnPrimaries()), keys_before);
}

TEST_F(ProxyHotKeysTest, CountingOffAnswersWithTheFlag) {
  UpWithProxy({"--hot-keys", "0"});
  ASSERT_TRUE(DriveLoad(proxy_port(), 100));
  auto hot = QueryRedis(proxy_port(), {"PROXY", "HOTKEYS"});
  ASSERT_TRUE(hot);
  EXPECT_EQ(hot->text, "ERR key and slot counting is off (shardproxy --hot-keys 0)");
}

class TopKeysTest : public ShardctlTest {};

TEST_F(TopKeysTest, ShowsTheSupervisedProxysHottestKey) {
  const int proxy_port = base_port() + 45;
  auto up = Up(3, {"--proxy-port", std::to_string(proxy_port), "--proxy-threads", "1"});
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  ASSERT_TRUE(DriveLoad(proxy_port, 5000));
  ASSERT_TRUE(WaitUntil([&] { return SlotRequests(proxy_port) == 5000; }, 5s));
  auto hot = QueryRedis(proxy_port, {"PROXY", "HOTKEYS", "COUNT", "1"});
  ASSERT_TRUE(hot);
  ASSERT_EQ(hot->elements.size(), 1u);
  const std::string hottest = hot->elements[0].elements[0].text;
  EXPECT_TRUE(GeneratorHotKeys().contains(hottest)) << hottest;

  auto top = OnDeployment("top", {"--keys", "--count", "1"});
  ASSERT_EQ(top.exit_code, 0) << top.Describe();
  // Plain lines: a stamp and headline, the header, then the hottest key first.
  const size_t header = top.out.find("KEY");
  ASSERT_NE(header, std::string::npos) << top.out;
  const size_t first_row = top.out.find('\n', header) + 1;
  EXPECT_EQ(top.out.compare(first_row, hottest.size(), hottest), 0) << top.out;
}

TEST_F(TopKeysTest, ADeploymentWithoutAProxyIsRefused) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  auto top = OnDeployment("top", {"--keys", "--count", "1"});
  EXPECT_EQ(top.exit_code, 1) << top.Describe();
  EXPECT_NE(top.err.find("shardctl: top --keys: "), std::string::npos) << top.err;
  EXPECT_NE(top.err.find("(start the deployment with --proxy-port PORT)"), std::string::npos)
      << top.err;
  EXPECT_EQ(std::count(top.err.begin(), top.err.end(), '\n'), 1) << top.err;
}

}  // namespace
}  // namespace shardctl::integration
