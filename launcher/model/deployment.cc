#include "launcher/model/deployment.h"

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

}  // namespace shardctl::launcher
