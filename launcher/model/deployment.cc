#include "launcher/model/deployment.h"

#include <algorithm>

#include "common/size.h"

namespace shardctl::launcher {

std::vector<std::string> DiffDeployments(const Deployment& running, const Deployment& requested) {
  std::vector<std::string> diffs = DiffPlans(running.plan, requested.plan);
  if (running.engine.path != requested.engine.path) {
    diffs.push_back("engine binary: " + running.engine.path.string() + " -> " +
                    requested.engine.path.string());
  }
  if (!(running.supervision == requested.supervision)) {
    diffs.push_back("health-timeout / hang-grace differ");
  }
  if (running.proxy.port != requested.proxy.port ||
      running.proxy.threads != requested.proxy.threads ||
      running.proxy.read_from != requested.proxy.read_from) {
    diffs.push_back("proxy-port / proxy-threads: " + std::to_string(running.proxy.port) + " -> " +
                    std::to_string(requested.proxy.port));
  }
  if (!(running.metrics == requested.metrics) ||
      running.proxy.metrics_port != requested.proxy.metrics_port) {
    auto ports = [](const Deployment& d) {
      return std::to_string(d.metrics.port) + "/" + std::to_string(d.proxy.metrics_port) + " on " +
             d.metrics.bind;
    };
    diffs.push_back("metrics-port / proxy-metrics-port / metrics-bind: " + ports(running) + " -> " +
                    ports(requested));
  }
  if (!(running.durability == requested.durability)) {
    diffs.push_back(std::string("persistence / appendfsync / save-interval / fork-limit / "
                                "cluster-node-timeout differ (running: persistence ") +
                    PersistenceName(running.durability.persistence) + ")");
  }
  if (!(running.tls == requested.tls)) {
    auto shown = [](const TlsConfig& tls) {
      return tls.enabled()
                 ? tls.cert + " (auth-clients " + tls.auth_clients +
                       (tls.also_plain() ? ", plain from " + std::to_string(tls.plain_base_port)
                                         : "") +
                       ")"
                 : "none";
    };
    diffs.push_back("tls: " + shown(running.tls) + " -> " + shown(requested.tls));
  }
  if (running.auth.password_required != requested.auth.password_required) {
    diffs.push_back(std::string("password-file: ") +
                    (running.auth.password_required ? "set" : "none") + " -> " +
                    (requested.auth.password_required ? "set" : "none"));
  } else if (running.auth.password != requested.auth.password) {
    diffs.push_back("password-file: holds another password");  // never the passwords themselves
  }
  return diffs;
}

namespace {

size_t Primaries(const Plan& plan) {
  return static_cast<size_t>(std::count_if(plan.shards.begin(), plan.shards.end(),
                                           [](const ShardPlan& s) { return !s.primary; }));
}

}  // namespace

std::string ShapeSummary(const Deployment& deployment) {
  const Plan& plan = deployment.plan;
  const size_t primaries = Primaries(plan);
  std::string ports;
  if (!plan.shards.empty()) {
    ports =
        std::to_string(plan.shards.front().port) + "-" + std::to_string(plan.shards.back().port);
  }
  return std::to_string(primaries) + " shards, " + std::to_string(plan.shards.size() - primaries) +
         " replicas, ports " + ports + ", " + deployment.engine.Name() + " " +
         deployment.engine.version + ", persistence " +
         PersistenceName(deployment.durability.persistence);
}

std::vector<std::string> ShapeDifferences(const Deployment& recorded, const Deployment& requested,
                                          const std::string& target) {
  std::vector<std::string> diffs;
  const Plan& was = recorded.plan;
  const Plan& now = requested.plan;
  const size_t primaries = Primaries(was);
  const size_t wanted_primaries = Primaries(now);
  if (primaries != wanted_primaries) {
    diffs.push_back("shards: " + std::to_string(primaries) + " -> " +
                    std::to_string(wanted_primaries) + " (live: shardctl scale --shards " +
                    std::to_string(wanted_primaries) + target + ")");
  }
  const size_t replicas = was.shards.size() - primaries;
  const size_t wanted_replicas = now.shards.size() - wanted_primaries;
  if (replicas != wanted_replicas) {
    diffs.push_back("replicas: " + std::to_string(replicas) + " -> " +
                    std::to_string(wanted_replicas) +
                    " in all (shardctl cannot add or remove replicas of a deployment with data)");
  }
  if (diffs.empty()) {
    for (size_t i = 0; i < was.shards.size(); ++i) {
      const ShardPlan& a = was.shards[i];
      const ShardPlan& b = now.shards[i];
      if (a.index != b.index || a.port != b.port || a.bus_port != b.bus_port) {
        diffs.push_back("shard " + std::to_string(a.index) + " port/bus port: " +
                        std::to_string(a.port) + "/" + std::to_string(a.bus_port) + " -> " +
                        std::to_string(b.port) + "/" + std::to_string(b.bus_port) +
                        " (the nodes know each other by these ports; keep --base-port and "
                        "--bus-base-port as recorded)");
        break;
      }
    }
  }
  const Persistence was_kept = recorded.durability.persistence;
  const Persistence now_kept = requested.durability.persistence;
  if (was_kept != Persistence::kNone) {
    // The data comes back with the shards: less room, or another policy, evicts keys as they
    // load (or refuses every write), where the record held them.
    const std::string resume = " (the shards load their data into it; resume with shardctl up" +
                               target + " alone, which keeps the recorded settings, or give them)";
    if (was.maxmemory_policy != now.maxmemory_policy) {
      diffs.push_back("maxmemory-policy: " + was.maxmemory_policy + " -> " + now.maxmemory_policy +
                      resume);
    }
    for (size_t i = 0; i < std::min(was.shards.size(), now.shards.size()); ++i) {
      if (now.shards[i].maxmemory >= was.shards[i].maxmemory) continue;
      diffs.push_back("memory: shard " + std::to_string(was.shards[i].index) + " maxmemory " +
                      common::FormatSize(was.shards[i].maxmemory) + " -> " +
                      common::FormatSize(now.shards[i].maxmemory) + resume);
      break;
    }
  }
  // To none, the data files themselves are refused by name (CheckNoStrayData).
  if (was_kept != Persistence::kNone && now_kept != Persistence::kNone && now_kept != was_kept) {
    diffs.push_back(std::string("persistence: ") + PersistenceName(was_kept) + " -> " +
                    PersistenceName(now_kept) + " (the shards would not start from their " +
                    PersistenceName(was_kept) + " data; resume with --persistence " +
                    PersistenceName(was_kept) + ")");
  }
  if (recorded.engine.kind != requested.engine.kind ||
      recorded.engine.major != requested.engine.major) {
    diffs.push_back("engine: " + recorded.engine.Name() + " " + recorded.engine.version + " -> " +
                    requested.engine.Name() + " " + requested.engine.version +
                    " (live: shardctl restart --rolling --engine " +
                    requested.engine.path.string() + target + ")");
  }
  return diffs;
}

const Engine& EngineOf(const Deployment& deployment, int index) {
  const auto apart = deployment.shard_engines.find(index);
  return apart == deployment.shard_engines.end() ? deployment.engine : apart->second;
}

void RecordShardEngine(Deployment& deployment, int index, const Engine& engine) {
  if (engine == deployment.engine) {
    deployment.shard_engines.erase(index);
  } else {
    deployment.shard_engines[index] = engine;
  }
  // Shards no longer in the plan (removed by a scale) run nothing.
  std::erase_if(deployment.shard_engines, [&](const auto& entry) {
    return std::none_of(deployment.plan.shards.begin(), deployment.plan.shards.end(),
                        [&](const ShardPlan& shard) { return shard.index == entry.first; });
  });
  const auto& shards = deployment.plan.shards;
  if (shards.empty() || deployment.shard_engines.size() != shards.size()) return;
  const Engine& first = deployment.shard_engines.begin()->second;
  if (std::all_of(deployment.shard_engines.begin(), deployment.shard_engines.end(),
                  [&](const auto& entry) { return entry.second == first; })) {
    deployment.engine = first;
    deployment.shard_engines.clear();
  }
}

std::string MixedEngines(const Deployment& deployment) {
  if (deployment.shard_engines.empty()) return "";
  std::string listed;
  for (const auto& [index, engine] : deployment.shard_engines) {
    if (!listed.empty()) listed += ", ";
    listed += "shard " + std::to_string(index) + " runs " + engine.Name() + " " + engine.version;
  }
  return listed + ", the others " + deployment.engine.Name() + " " + deployment.engine.version;
}

}  // namespace shardctl::launcher
