#include "launcher/model/plan_json.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;
using nlohmann::json;

json ShardToJson(const ShardPlan& shard) {
  json out = {{"index", shard.index},         {"port", shard.port},
              {"bus_port", shard.bus_port},   {"cpus", shard.cpus},
              {"numa_node", shard.numa_node}, {"maxmemory", shard.maxmemory},
              {"role", RoleName(shard.role)}};
  if (shard.primary) out["primary"] = *shard.primary;
  json slots = json::array();
  for (const auto& range : shard.slots) slots.push_back({range.first, range.last});
  out["slots"] = slots;
  return out;
}

json PlanToJson(const Plan& plan) {
  json shards = json::array();
  for (const auto& shard : plan.shards) shards.push_back(ShardToJson(shard));
  return {{"name", plan.name},
          {"engine", plan.engine},
          {"bind", plan.bind},
          {"announce", plan.announce},
          {"join", plan.join},
          {"cluster_name", plan.cluster_name},
          {"preferred_endpoint", plan.preferred_endpoint},
          {"maxmemory_policy", plan.maxmemory_policy},
          {"usable_cpus", plan.usable_cpus},
          {"usable_cores", plan.usable_cores},
          {"warnings", plan.warnings},
          {"shards", shards}};
}

Result<Plan> PlanFromJson(const json& in) {
  try {
    Plan plan;
    plan.name = in.at("name").get<std::string>();
    plan.engine = in.at("engine").get<std::string>();
    plan.bind = in.at("bind").get<std::string>();
    plan.announce = in.value("announce", "");
    plan.join = in.value("join", "");
    plan.cluster_name = in.value("cluster_name", plan.name);
    plan.preferred_endpoint = in.value("preferred_endpoint", "ip");
    plan.maxmemory_policy = in.at("maxmemory_policy").get<std::string>();
    plan.usable_cpus = in.value("usable_cpus", 0);
    plan.usable_cores = in.value("usable_cores", 0);
    plan.warnings = in.value("warnings", std::vector<std::string>{});
    for (const auto& item : in.at("shards")) {
      ShardPlan shard;
      shard.index = item.at("index").get<int>();
      shard.port = item.at("port").get<int>();
      shard.bus_port = item.at("bus_port").get<int>();
      shard.cpus = item.at("cpus").get<std::vector<int>>();
      shard.numa_node = item.at("numa_node").get<int>();
      shard.maxmemory = item.at("maxmemory").get<uint64_t>();
      shard.role =
          item.at("role").get<std::string>() == "replica" ? Role::kReplica : Role::kPrimary;
      if (item.contains("primary")) shard.primary = item.at("primary").get<int>();
      for (const auto& range : item.value("slots", json::array())) {
        shard.slots.push_back({range.at(0).get<int>(), range.at(1).get<int>()});
      }
      plan.shards.push_back(std::move(shard));
    }
    return plan;
  } catch (const json::exception& error) {
    return Error(std::string("malformed plan: ") + error.what());
  }
}

json DurabilityToJson(const Durability& durability) {
  return {{"persistence", PersistenceName(durability.persistence)},
          {"appendfsync", durability.appendfsync},
          {"save_interval_ms", durability.save_interval.count()},
          {"fork_limit", durability.fork_limit},
          {"cluster_node_timeout_ms", durability.cluster_node_timeout.count()}};
}

Durability DurabilityFromJson(const json& in) {
  Durability durability;
  std::string persistence = in.value("persistence", "none");
  durability.persistence = persistence == "rdb"   ? Persistence::kRdb
                           : persistence == "aof" ? Persistence::kAof
                                                  : Persistence::kNone;
  durability.appendfsync = in.value("appendfsync", durability.appendfsync);
  durability.save_interval =
      std::chrono::milliseconds(in.value("save_interval_ms", durability.save_interval.count()));
  durability.fork_limit = in.value("fork_limit", durability.fork_limit);
  durability.cluster_node_timeout = std::chrono::milliseconds(
      in.value("cluster_node_timeout_ms", durability.cluster_node_timeout.count()));
  return durability;
}

json EngineToJson(const Engine& engine) {
  return {{"kind", engine.Name()}, {"path", engine.path.string()}, {"version", engine.version}};
}

Result<Engine> EngineFromJson(const json& in) {
  try {
    Engine engine;
    engine.kind =
        in.at("kind").get<std::string>() == "valkey" ? EngineKind::kValkey : EngineKind::kRedis;
    engine.path = in.at("path").get<std::string>();
    engine.version = in.at("version").get<std::string>();
    engine.major = VersionMajor(engine.version);
    return engine;
  } catch (const json::exception& e) {
    return Error(std::string("malformed engine (kind, path, version): ") + e.what());
  }
}

json DeploymentToJson(const Deployment& deployment) {
  json out = {{"plan", PlanToJson(deployment.plan)},
              {"engine", EngineToJson(deployment.engine)},
              {"supervision",
               {{"health_timeout_ms", deployment.supervision.health_timeout.count()},
                {"hang_grace_ms", deployment.supervision.hang_grace.count()}}},
              {"durability", DurabilityToJson(deployment.durability)},
              {"proxy",
               {{"port", deployment.proxy.port},
                {"threads", deployment.proxy.threads},
                {"read_from", deployment.proxy.read_from},
                {"binary", deployment.proxy.binary},
                {"metrics_port", deployment.proxy.metrics_port}}},
              {"metrics", {{"port", deployment.metrics.port}, {"bind", deployment.metrics.bind}}},
              {"auth", {{"password", deployment.auth.password_required}}},
              {"tls",
               {{"cert", deployment.tls.cert},
                {"key", deployment.tls.key},
                {"ca", deployment.tls.ca},
                {"auth_clients", deployment.tls.auth_clients},
                {"plain_base_port", deployment.tls.plain_base_port}}}};
  // Only while shards differ: a record without it is read back as every shard on "engine".
  if (!deployment.shard_engines.empty()) {
    json apart = json::array();
    for (const auto& [index, engine] : deployment.shard_engines) {
      json entry = EngineToJson(engine);
      entry["shard"] = index;
      apart.push_back(entry);
    }
    out["shard_engines"] = apart;
  }
  return out;
}

Result<Deployment> DeploymentFromJson(const json& in) {
  if (!in.is_object() || !in.contains("plan") || !in.contains("engine")) {
    return Error("malformed deployment record (no plan or engine)");
  }
  auto plan = PlanFromJson(in.at("plan"));
  if (!plan.ok()) return plan.error();
  Deployment deployment{
      .plan = std::move(plan).value(), .engine = {}, .supervision = {}, .durability = {}};
  try {
    auto engine = EngineFromJson(in.at("engine"));
    if (!engine.ok()) return engine.error();
    deployment.engine = std::move(engine).value();
    for (const auto& apart : in.value("shard_engines", json::array())) {
      auto shard_engine = EngineFromJson(apart);
      if (!shard_engine.ok()) return shard_engine.error();
      deployment.shard_engines[apart.at("shard").get<int>()] = std::move(shard_engine).value();
    }
    if (in.contains("durability")) deployment.durability = DurabilityFromJson(in.at("durability"));
    if (in.contains("supervision")) {
      const auto& supervision = in.at("supervision");
      deployment.supervision.health_timeout =
          std::chrono::milliseconds(supervision.value("health_timeout_ms", 3000));
      deployment.supervision.hang_grace =
          std::chrono::milliseconds(supervision.value("hang_grace_ms", 30000));
    }
    if (in.contains("proxy")) {
      const auto& proxy = in.at("proxy");
      deployment.proxy.port = proxy.value("port", 0);
      deployment.proxy.threads = proxy.value("threads", 0);
      deployment.proxy.read_from = proxy.value("read_from", "primary");
      deployment.proxy.binary = proxy.value("binary", "");
      deployment.proxy.metrics_port = proxy.value("metrics_port", 0);
    }
    if (in.contains("metrics")) {
      const auto& metrics = in.at("metrics");
      deployment.metrics.port = metrics.value("port", 0);
      deployment.metrics.bind = metrics.value("bind", deployment.metrics.bind);
    }
    if (in.contains("auth")) {
      deployment.auth.password_required = in.at("auth").value("password", false);
    }
    if (in.contains("tls")) {
      const auto& tls = in.at("tls");
      deployment.tls = {.cert = tls.value("cert", ""),
                        .key = tls.value("key", ""),
                        .ca = tls.value("ca", ""),
                        .auth_clients = tls.value("auth_clients", "no"),
                        .plain_base_port = tls.value("plain_base_port", 0)};
    }
  } catch (const json::exception& error) {
    return Error(std::string("malformed engine record: ") + error.what());
  }
  return deployment;
}

}  // namespace shardctl::launcher
