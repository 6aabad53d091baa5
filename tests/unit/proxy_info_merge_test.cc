// INFO merged from every primary's own INFO (proxy/merge/info_merge.h): what one Redis would
// report for the whole keyspace, with the proxy's own sections laid over it.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "proxy/merge/info_merge.h"

namespace shardctl::proxy {
namespace {

std::string Bulk(std::string_view text) {
  return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}

TEST(InfoMergeTest, ParseAndRenderKeepSectionsAndFields) {
  const std::string text =
      "# Server\r\nredis_version:7.0.15\r\nx:a:b\r\n\r\n# CPU\r\nused_cpu_sys:1.5\r\n";
  const auto sections = ParseInfo(text);
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(sections[0].name, "Server");
  ASSERT_EQ(sections[0].fields.size(), 2u);
  EXPECT_EQ(sections[0].fields[1].second, "a:b");  // only the first ':' separates
  EXPECT_EQ(RenderInfo(sections), text);
}

TEST(InfoMergeTest, CountingSectionsAreSummedAndOthersAreTheFirstShards) {
  const std::string shard0 =
      "# Server\r\nredis_version:7.0.15\r\ntcp_port:7000\r\n\r\n"
      "# Stats\r\ntotal_error_replies:2\r\ninstantaneous_input_kbps:0.50\r\n\r\n"
      "# Commandstats\r\ncmdstat_get:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,"
      "failed_calls=1\r\n";
  const std::string shard1 =
      "# Server\r\nredis_version:7.0.15\r\ntcp_port:7001\r\n\r\n"
      "# Stats\r\ntotal_error_replies:5\r\ninstantaneous_input_kbps:0.25\r\n\r\n"
      "# Commandstats\r\ncmdstat_get:calls=1,usec=2,usec_per_call=2.00,rejected_calls=1,"
      "failed_calls=0\r\ncmdstat_geoadd:calls=1,usec=7,usec_per_call=7.00,rejected_calls=0,"
      "failed_calls=0\r\n";
  const std::vector<std::string_view> texts = {shard0, shard1};
  const std::vector<std::string> names = {"h:1", "h:2"};
  EXPECT_EQ(MergeInfo(texts, names, ""),
            "# Server\r\nredis_version:7.0.15\r\ntcp_port:7000\r\n\r\n"
            "# Stats\r\ntotal_error_replies:7\r\ninstantaneous_input_kbps:0.50\r\n\r\n"
            "# Commandstats\r\ncmdstat_get:calls=4,usec=32,usec_per_call=8.00,rejected_calls=1,"
            "failed_calls=1\r\ncmdstat_geoadd:calls=1,usec=7,usec_per_call=7.00,"
            "rejected_calls=0,failed_calls=0\r\n");
}

TEST(InfoMergeTest, TrackingClientsAndPrefixesAreTheLargestNotTheSum) {
  // Each tracking client of the proxy tracks on every primary, with the same prefixes; the keys
  // each primary tracks are its own.
  const std::string shard0 =
      "# Stats\r\ntracking_keys:2\r\ntracking_clients:2\r\ntracking_total_prefixes:1\r\n";
  const std::string shard1 =
      "# Stats\r\ntracking_keys:3\r\ntracking_clients:1\r\ntracking_total_prefixes:1\r\n";
  const std::vector<std::string_view> texts = {shard0, shard1};
  const std::vector<std::string> names = {"h:1", "h:2"};
  EXPECT_EQ(MergeInfo(texts, names, ""),
            "# Stats\r\ntracking_keys:5\r\ntracking_clients:2\r\ntracking_total_prefixes:1\r\n");
}

TEST(InfoMergeTest, TheProxysOwnFiguresOverlayTheShardsAndItsSectionsFollow) {
  const std::string shard =
      "# Clients\r\nconnected_clients:9\r\nblocked_clients:4\r\nmaxclients:10000\r\n";
  const std::vector<std::string_view> texts = {shard, shard};
  const std::vector<std::string> names = {"h:1", "h:2"};
  const std::string own =
      "# Clients\r\nconnected_clients:2\r\nblocked_clients:1\r\n\r\n# Proxy\r\nretries:0\r\n";
  EXPECT_EQ(MergeInfo(texts, names, own),
            "# Clients\r\nconnected_clients:2\r\nblocked_clients:1\r\nmaxclients:20000\r\n\r\n"
            "# Proxy\r\nretries:0\r\n");
}

TEST(InfoMergeTest, KeyspaceIsSummedAndEachShardListedWithItsErrorIfAny) {
  const std::string shard0 = "# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=5\r\n";
  const std::string shard1 = "# Keyspace\r\ndb0:keys=4,expires=0,avg_ttl=9\r\n";
  const std::string empty = "# Keyspace\r\n";
  const std::vector<std::string_view> texts = {shard0, shard1, empty, "-ERR down\r\n"};
  const std::vector<std::string> names = {"h:1", "h:2", "h:3", "h:4"};
  EXPECT_EQ(MergeInfo(texts, names, ""),
            "# Keyspace\r\ndb0:keys=7,expires=1,avg_ttl=9\r\n\r\n# Shards\r\n"
            "shard0:addr=h:1,keys=3,expires=1\r\nshard1:addr=h:2,keys=4,expires=0\r\n"
            "shard2:addr=h:3,keys=0,expires=0\r\nshard3:addr=h:4,error=-ERR down\r\n");
}

// SCRIPT LOAD and FUNCTION LOAD go to every primary: 100 scripts loaded through the proxy are 100
// (scripting: "SCRIPTING FLUSH ASYNC"), while the memory they take adds up.
TEST(InfoMergeTest, ScriptsAndFunctionsEveryPrimaryHoldsCountOnce) {
  const std::string shard0 =
      "# Memory\r\nused_memory_scripts:800\r\nnumber_of_cached_scripts:100\r\n"
      "number_of_functions:2\r\nnumber_of_libraries:1\r\n";
  const std::string shard1 =
      "# Memory\r\nused_memory_scripts:900\r\nnumber_of_cached_scripts:101\r\n"
      "number_of_functions:2\r\nnumber_of_libraries:1\r\n";
  const std::vector<std::string_view> texts = {shard0, shard1};
  const std::vector<std::string> names = {"h:1", "h:2"};
  EXPECT_EQ(MergeInfo(texts, names, ""),
            "# Memory\r\nused_memory_scripts:1700\r\nnumber_of_cached_scripts:101\r\n"
            "number_of_functions:2\r\nnumber_of_libraries:1\r\n");
}

// Redis' suite reads rdb_changes_since_last_save as the count of writes (bitops: "SETBIT/BITFIELD
// only increase dirty when the value changed"); its waitForBgsave polls rdb_bgsave_in_progress.
TEST(InfoMergeTest, PersistenceHoldsForEveryShard) {
  const std::string shard0 =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:5\r\n"
      "rdb_bgsave_in_progress:0\r\nrdb_last_save_time:1700000100\r\n"
      "rdb_last_bgsave_status:ok\r\naof_enabled:0\r\nrdb_saves:1\r\n";
  const std::string shard1 =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:2\r\n"
      "rdb_bgsave_in_progress:1\r\nrdb_last_save_time:1700000000\r\n"
      "rdb_last_bgsave_status:err\r\naof_enabled:1\r\nrdb_saves:3\r\n";
  const std::string shard2 =
      "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\n"
      "rdb_bgsave_in_progress:0\r\nrdb_last_save_time:1700000200\r\n"
      "rdb_last_bgsave_status:ok\r\naof_enabled:0\r\nrdb_saves:0\r\n";
  const std::vector<std::string_view> texts = {shard0, shard1, shard2};
  const std::vector<std::string> names = {"h:1", "h:2", "h:3"};
  EXPECT_EQ(MergeInfo(texts, names, ""),
            "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:7\r\n"
            "rdb_bgsave_in_progress:1\r\nrdb_last_save_time:1700000000\r\n"
            "rdb_last_bgsave_status:err\r\naof_enabled:0\r\nrdb_saves:4\r\n");
}

TEST(InfoMergeTest, AssemblyFramesForTheProtocolAndPassesAnErrorWhenNoShardAnswered) {
  const std::string text = "# Stats\r\nexpired_keys:1\r\n";
  auto bulk = InfoAssembly("", {"h:1", "h:2"}, 2);
  EXPECT_FALSE(bulk->Add(0, Bulk(text)));
  EXPECT_EQ(bulk->Add(1, "=" + std::to_string(text.size() + 4) + "\r\ntxt:" + text + "\r\n"),
            Bulk("# Stats\r\nexpired_keys:2\r\n"));
  auto verbatim = InfoAssembly("", {"h:1"}, 3);
  const std::string merged = "txt:# Stats\r\nexpired_keys:1\r\n";
  EXPECT_EQ(verbatim->Add(0, Bulk(text)),
            "=" + std::to_string(merged.size()) + "\r\n" + merged + "\r\n");
  auto failed = InfoAssembly("", {"h:1", "h:2"}, 2);
  failed->Add(0, "-ERR down\r\n");
  EXPECT_EQ(failed->Add(1, "-LOADING x\r\n"), "-ERR down\r\n");
}

}  // namespace
}  // namespace shardctl::proxy
