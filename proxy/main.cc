// shardproxy: a slot-routing proxy in front of a Redis Cluster (see proxy/worker.h for the data
// path). This file parses flags, reads the first slot map, starts the workers and waits for
// SIGINT/SIGTERM.
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "proxy/options.h"
#include "proxy/server.h"
#include "proxy/topology.h"

namespace {

using namespace shardctl::proxy;

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

int AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

void Fail(const std::string& message) { std::cerr << "shardproxy: " << message << "\n"; }

int Serve(const ProxyOptions& options) {
  ClusterTopology topology(options.cluster, options.refresh_interval);
  if (auto first = topology.RefreshNow(); !first) {
    Fail(first.error().message() + " (is the cluster up? check --cluster)");
    return kExitRuntime;
  }
  // Signals are taken synchronously by this thread; the workers never see them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const int threads = options.threads.value_or(AllowedCpus());
  ProxyServer server(options, topology, threads);
  if (auto started = server.Start(); !started) {
    Fail(started.error().message());
    return kExitRuntime;
  }
  topology.Start();
  if (!options.pidfile.empty()) std::ofstream(options.pidfile) << getpid() << "\n";
  if (!options.quiet) {
    const auto map = topology.Snapshot();
    std::cerr << "shardproxy: listening on " << options.listen.ToString() << " with " << threads
              << " thread(s); " << map->backends().size() << " primaries, "
              << map->UnassignedSlots() << " unassigned slots" << std::endl;
  }
  sigdelset(&signals, SIGPIPE);
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  if (!options.quiet) std::cerr << "shardproxy: signal " << signal << ", shutting down\n";
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
  if (options->version) {
    std::cout << "shardproxy " << SHARDCTL_VERSION << "\n";
    return 0;
  }
  return Serve(*options);
}
