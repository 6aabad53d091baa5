// Which server the proxy fronts, read from a shard's INFO: what HELLO and INFO name, and the rules
// that differ by engine (Valkey 8+ aborts a transaction that met a nested MULTI or WATCH).
#pragma once

#include <string>
#include <string_view>

#include "common/cluster_text.h"
#include "common/numbers.h"

namespace shardctl::proxy {

struct EngineIdentity {
  std::string name = "redis";  // INFO's server_name; Redis has none
  std::string version;         // valkey_version for Valkey, else redis_version; "" until read
  bool valkey() const { return name == "valkey"; }
  int major() const {
    return common::ParseInteger<int>(std::string_view(version).substr(0, version.find('.')))
        .value_or(0);
  }
};

inline EngineIdentity EngineIdentityFromInfo(std::string_view info) {
  EngineIdentity engine;
  if (std::string name = common::InfoField(info, "server_name"); !name.empty()) engine.name = name;
  engine.version = common::InfoField(info, engine.valkey() ? "valkey_version" : "redis_version");
  return engine;
}

}  // namespace shardctl::proxy
