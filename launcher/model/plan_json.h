// The JSON shape of plans and deployments. Field names are a contract with users' scripts:
// name, engine, shards[] with index, port, bus_port, cpus, numa_node, maxmemory, role, primary.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {

nlohmann::json ShardToJson(const ShardPlan& shard);
nlohmann::json PlanToJson(const Plan& plan);
common::Result<Plan> PlanFromJson(const nlohmann::json& json);

nlohmann::json DurabilityToJson(const Durability& durability);
Durability DurabilityFromJson(const nlohmann::json& json);

// {"kind": "redis", "path": ..., "version": "7.0.15"}: the record's, and a restart request's.
nlohmann::json EngineToJson(const Engine& engine);
common::Result<Engine> EngineFromJson(const nlohmann::json& json);

nlohmann::json DeploymentToJson(const Deployment& deployment);
common::Result<Deployment> DeploymentFromJson(const nlohmann::json& json);

}  // namespace shardctl::launcher
