// Which engine each shard runs: a `restart SHARD --engine E` switches that shard alone, and a
// rolling switch makes E the deployment's once every shard runs it. The record must survive a
// write and a read, or a crashed shard would come back on another engine.
#include <gtest/gtest.h>

#include "launcher/model/deployment.h"
#include "launcher/model/plan_json.h"

namespace shardctl::launcher {
namespace {

const Engine kRedis7{
    .kind = EngineKind::kRedis, .path = "/usr/bin/redis-server", .version = "7.0.15", .major = 7};
const Engine kValkey9{
    .kind = EngineKind::kValkey, .path = "/opt/valkey-server", .version = "9.1.2", .major = 9};

Deployment ThreeShardsOnRedis7() {
  Deployment deployment;
  deployment.plan.name = "main";
  deployment.plan.engine = "redis";
  deployment.plan.bind = "127.0.0.1";
  for (int i = 0; i < 3; ++i) {
    deployment.plan.shards.push_back({.index = i, .port = 7000 + i, .bus_port = 17000 + i});
  }
  deployment.engine = kRedis7;
  return deployment;
}

TEST(ShardEnginesTest, OneShardSwitchedRunsItsEngineAndTheOthersKeepTheirs) {
  Deployment deployment = ThreeShardsOnRedis7();
  RecordShardEngine(deployment, 1, kValkey9);
  EXPECT_EQ(EngineOf(deployment, 1), kValkey9);
  EXPECT_EQ(EngineOf(deployment, 0), kRedis7);
  EXPECT_EQ(EngineOf(deployment, 2), kRedis7);
  EXPECT_EQ(deployment.engine, kRedis7);
  EXPECT_EQ(MixedEngines(deployment), "shard 1 runs valkey 9.1.2, the others redis 7.0.15");
}

TEST(ShardEnginesTest, EveryShardSwitchedMakesItTheDeploymentsEngine) {
  Deployment deployment = ThreeShardsOnRedis7();
  RecordShardEngine(deployment, 0, kValkey9);
  RecordShardEngine(deployment, 1, kValkey9);
  EXPECT_EQ(deployment.engine, kRedis7);
  RecordShardEngine(deployment, 2, kValkey9);
  EXPECT_EQ(deployment.engine, kValkey9);
  EXPECT_TRUE(deployment.shard_engines.empty());
  EXPECT_EQ(MixedEngines(deployment), "");
}

TEST(ShardEnginesTest, SwitchingAShardBackListsItApartNoMore) {
  Deployment deployment = ThreeShardsOnRedis7();
  RecordShardEngine(deployment, 2, kValkey9);
  RecordShardEngine(deployment, 2, kRedis7);
  EXPECT_TRUE(deployment.shard_engines.empty());
  EXPECT_EQ(EngineOf(deployment, 2), kRedis7);
}

TEST(ShardEnginesTest, ARemovedShardsEngineIsForgotten) {
  Deployment deployment = ThreeShardsOnRedis7();
  RecordShardEngine(deployment, 2, kValkey9);
  deployment.plan.shards.pop_back();  // scale --shards 2
  RecordShardEngine(deployment, 0, kRedis7);
  EXPECT_TRUE(deployment.shard_engines.empty());
}

TEST(ShardEnginesTest, TheRecordKeepsEachShardsEngine) {
  Deployment deployment = ThreeShardsOnRedis7();
  RecordShardEngine(deployment, 1, kValkey9);
  auto read = DeploymentFromJson(DeploymentToJson(deployment));
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_EQ(read->engine, kRedis7);
  ASSERT_EQ(read->shard_engines.size(), 1u);
  EXPECT_EQ(EngineOf(*read, 1), kValkey9);
  EXPECT_EQ(EngineOf(*read, 0), kRedis7);
}

TEST(ShardEnginesTest, ARecordOfOneEngineHasNoShardList) {
  const nlohmann::json written = DeploymentToJson(ThreeShardsOnRedis7());
  EXPECT_FALSE(written.contains("shard_engines"));
  auto read = DeploymentFromJson(written);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_TRUE(read->shard_engines.empty());
}

TEST(ShardEnginesTest, AMalformedShardEngineIsAnError) {
  nlohmann::json written = DeploymentToJson(ThreeShardsOnRedis7());
  written["shard_engines"] = {{{"shard", 1}, {"kind", "valkey"}}};
  auto read = DeploymentFromJson(written);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("malformed engine"), std::string::npos);
}

}  // namespace
}  // namespace shardctl::launcher
