// shardproxy: a slot-routing proxy in front of a Redis Cluster (see proxy/net/worker.h for the data
// path). This file parses flags, reads the first slot map, starts the workers and waits for
// SIGINT/SIGTERM.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "common/secrets.h"
#include "common/tls_check.h"
#include "git_revision.h"  // generated at build time: SHARDCTL_GIT_REVISION
#include "proxy/net/metrics_http.h"
#include "proxy/routing/topology.h"
#include "proxy/server.h"
#include "proxy/services/options.h"

namespace {

using namespace shardctl::proxy;
using shardctl::common::Complete;
using shardctl::common::FormatCompletion;

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

int AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

void Fail(const std::string& message) { std::cerr << "shardproxy: " << message << "\n"; }

// The --auth-file, read and checked; nothing to read gives an empty config.
shardctl::common::Result<AuthConfig> LoadAuth(const ProxyOptions& options) {
  AuthConfig auth;
  if (!options.auth_file.empty()) {
    auto text = shardctl::common::ReadSecretFile(options.auth_file, "--auth-file");
    if (!text) return text.error();
    auto parsed = ParseAuthConfig(*text, options.auth_file);
    if (!parsed) return parsed.error();
    auth = std::move(parsed).value();
  }
  if (!shardctl::common::IsLoopbackHost(options.listen.host) && !auth.required() &&
      !options.allow_no_auth) {
    return shardctl::common::Error(
        "refusing to listen on " + options.listen.ToString() +
        " without a client password (put requirepass in an --auth-file, or pass "
        "--allow-no-auth if the network is trusted)");
  }
  return auth;
}

// --tls-*: the key kept to its owner (as --auth-file), the files loaded once. Null contexts for
// plain RESP.
shardctl::common::Result<ProxyTls> LoadTls(const ProxyOptions& options) {
  using shardctl::common::TlsContext;
  ProxyTls tls;
  if (!options.tls_enabled()) return tls;
  if (auto key = shardctl::common::ReadSecretFile(options.tls.key_file, "--tls-key"); !key) {
    return key.error();
  }
  // As clients will check it: an expired certificate, or one the CA did not sign, loads fine and
  // then no client can connect.
  if (auto checked = shardctl::common::CheckCertificate(options.tls, std::time(nullptr));
      !checked) {
    return checked.error();
  }
  auto clients = TlsContext::ForServer(options.tls, options.tls_auth_clients);
  if (!clients) return clients.error();
  tls.clients = *std::move(clients);
  if (options.tls_to_shards) {
    auto shards = TlsContext::ForClient(options.tls);
    if (!shards) return shards.error();
    tls.shards = *std::move(shards);
  }
  return tls;
}

std::vector<std::string> BackendLogin(const AuthConfig& auth) {
  if (!auth.backend_password) return {};
  std::vector<std::string> login = {"AUTH"};
  if (auth.backend_user) login.push_back(*auth.backend_user);
  login.push_back(*auth.backend_password);
  return login;
}

// SIGHUP: the --tls-* files again (renewed certificates), for connections opened from now on;
// open ones keep theirs. A file that does not load keeps the old contexts and says why.
void ReloadTls(const ProxyOptions& options, ProxyServer& server, ClusterTopology& topology) {
  if (!options.tls_enabled()) return;
  auto tls = LoadTls(options);
  if (!tls) {
    server.stats().tls_reload_failures.fetch_add(1, std::memory_order_relaxed);
    Fail("SIGHUP: TLS not reloaded, still serving the previous certificate: " +
         tls.error().message());
    return;
  }
  topology.UseTls(tls->shards);
  server.ReplaceTls(std::move(tls).value());
  server.stats().tls_reloads.fetch_add(1, std::memory_order_relaxed);
  if (!options.quiet) std::cerr << "shardproxy: SIGHUP: TLS certificates reloaded" << std::endl;
}

int Serve(const ProxyOptions& options, AuthConfig auth, ProxyTls tls) {
  // Signals are taken synchronously by this thread, and blocked before anything else: the
  // workers never see them, and a SIGHUP (reload-tls) while the first slot map is read must not
  // end the process.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Bound first: a taken --metrics-port fails before the cluster is contacted or a client served.
  MetricsEndpoint metrics;
  if (options.metrics_port) {
    if (auto listening = metrics.Listen(options.metrics_bind, *options.metrics_port); !listening) {
      Fail("--metrics-port " + std::to_string(*options.metrics_port) + ": " +
           listening.error().message() +
           " (pick another --metrics-port or stop what listens there)");
      return kExitRuntime;
    }
  }
  ClusterTopology topology(options.cluster, options.refresh_interval, BackendLogin(auth));
  topology.UseTls(tls.shards);
  if (auto first = topology.RefreshNow(); !first) {
    Fail(first.error().message() +
         (options.tls_enabled() && options.tls_to_shards
              ? " (is the cluster up and serving TLS? check --cluster and --tls-ca, or "
                "--tls-to-shards no for shards without TLS)"
              : " (is the cluster up? check --cluster)"));
    return kExitRuntime;
  }

  const int threads = options.threads.value_or(AllowedCpus());
  ProxyServer server(options, topology, threads, std::move(auth), std::move(tls));
  if (auto started = server.Start(); !started) {
    Fail(started.error().message());
    return kExitRuntime;
  }
  topology.Start();
  if (options.metrics_port) metrics.Start([&server] { return server.MetricsText(); });
  if (!options.pidfile.empty()) std::ofstream(options.pidfile) << getpid() << "\n";
  if (!options.quiet) {
    const auto map = topology.Snapshot();
    std::cerr << "shardproxy: listening on " << options.listen.ToString()
              << (options.tls_enabled() ? " (TLS)" : "") << " with " << threads << " thread(s); "
              << map->primaries().size() << " primaries, " << map->Unassigned()
              << " unassigned slots" << std::endl;
    if (options.metrics_port) {
      std::cerr << "shardproxy: metrics on http://"
                << shardctl::common::FormatEndpoint(options.metrics_bind, *options.metrics_port)
                << "/metrics" << std::endl;
    }
  }
  sigdelset(&signals, SIGPIPE);
  int signal = 0;
  for (;;) {
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal != SIGHUP) break;
    ReloadTls(options, server, topology);
  }
  if (!options.quiet) std::cerr << "shardproxy: signal " << signal << ", shutting down\n";
  metrics.Stop();
  server.Stop();
  topology.Stop();
  if (!options.pidfile.empty()) unlink(options.pidfile.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto options = ParseProxyArgs(args);
  if (!options) {
    Fail(options.error().message());
    return kExitUsage;
  }
  if (options->help) {
    std::cout << ProxyHelpText();
    return 0;
  }
  const std::string version_line =
      std::string("shardproxy ") + SHARDCTL_VERSION + " (git " + SHARDCTL_GIT_REVISION + ")";
  if (options->version) {
    std::cout << version_line << "\n";
    return 0;
  }
  if (options->man_page) {
    std::cout << ProxyManPage(version_line);
    return 0;
  }
  if (options->complete) {
    std::cout << FormatCompletion(Complete({.flags = ProxyFlags()}, *options->complete, nullptr));
    return 0;
  }
  auto auth = LoadAuth(*options);
  if (!auth) {
    Fail(auth.error().message());
    return kExitUsage;
  }
  auto tls = LoadTls(*options);
  if (!tls) {
    Fail(tls.error().message());
    return kExitUsage;
  }
  return Serve(*options, std::move(auth).value(), std::move(tls).value());
}
