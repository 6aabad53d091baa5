// `shardctl reload-tls`: renewed certificates (the files `up --tls-*` named, replaced in place)
// taken up by every shard, one at a time, then by the supervisor and shardproxy; no restart, no
// dropped connection (open ones keep their session). ops/reload_tls.h does the work.
#include "launcher/ops/reload_tls.h"

#include <iostream>

#include "launcher/cli/commands.h"
#include "launcher/term/output.h"
#include "launcher/term/progress.h"

namespace shardctl::launcher {

int RunReloadTls(const Invocation& invocation) {
  auto loaded = LoadTarget(invocation, {.access = false});
  if (auto* code = std::get_if<int>(&loaded)) return *code;
  const auto& [spec, dir, deployment] = std::get<Target>(loaded);
  if (!deployment->tls.enabled()) {
    PrintError("reload-tls: deployment " + spec.name +
               " runs without TLS (start it with --tls-cert, --tls-key and --tls-ca)");
    return kExitUsage;
  }
  if (auto files = CheckTlsFiles(dir, deployment->tls); !files.ok()) {
    PrintError("reload-tls: " + files.error().message() + "; nothing was reloaded");
    return kExitUsage;
  }
  if (invocation.dry_run) {
    if (invocation.json) {
      std::cout << nlohmann::json{{"name", spec.name},
                                  {"dry_run", true},
                                  {"cert", deployment->tls.cert},
                                  {"shards", deployment->plan.shards.size()},
                                  {"proxy", deployment->proxy.enabled()}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "would reload " << deployment->tls.cert << " on "
                << deployment->plan.shards.size() << " shards, one at a time"
                << (deployment->proxy.enabled() ? ", then shardproxy" : "")
                << " (the files load: certificate, key and CA)\n";
    }
    return kExitOk;
  }
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  size_t done = 0;
  const auto started = std::chrono::steady_clock::now();
  auto report = ReloadTls(dir, *deployment, [&](int) {
    progress.Show("reloading TLS, shards done", ++done, deployment->plan.shards.size());
  });
  progress.Clear();
  if (!report.ok()) {
    PrintError("reload-tls: " + report.error().message());
    return kExitRuntime;
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - started)
                      .count();
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec.name},
                                {"cert", deployment->tls.cert},
                                {"reloaded_shards", report->shards},
                                {"supervisor", report->supervisor},
                                {"proxy", report->proxy},
                                {"ms", ms}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "reloaded " << deployment->tls.cert << " on " << report->shards.size() << " shards"
              << (report->supervisor ? ", the supervisor" : "")
              << (report->proxy ? " and shardproxy" : "") << " in " << ms
              << " ms; every shard answered over TLS after its reload\n";
    // What was not running reads the new files when it starts; say so rather than stay silent.
    if (!report->supervisor) std::cout << "  no supervisor runs: it loads them when it starts\n";
    if (deployment->proxy.enabled() && !report->proxy) {
      std::cout << "  shardproxy is not running: it loads them when it starts\n";
    }
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
