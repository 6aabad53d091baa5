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
  auto spec = ResolveSpec(invocation);
  if (!spec.ok()) {
    PrintError(spec.error().message());
    return kExitUsage;
  }
  ProgressDisplay progress(ProgressAllowed(invocation.json));
  auto report = ReloadTls(*spec, invocation.dry_run, [&](size_t done, size_t total) {
    progress.Show("reloading TLS, shards done", done, total);
  });
  progress.Clear();
  if (!report.ok()) return Fail(report.error().Context("reload-tls"));
  if (report->dry_run) {
    if (invocation.json) {
      std::cout << nlohmann::json{{"name", spec->name},
                                  {"dry_run", true},
                                  {"cert", report->cert},
                                  {"shards", report->shard_count},
                                  {"proxy", report->proxy_enabled}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "would reload " << report->cert << " on " << report->shard_count
                << " shards, one at a time" << (report->proxy_enabled ? ", then shardproxy" : "")
                << " (the files load: certificate, key and CA)\n";
    }
    return kExitOk;
  }
  if (invocation.json) {
    std::cout << nlohmann::json{{"name", spec->name},
                                {"cert", report->cert},
                                {"reloaded_shards", report->shards},
                                {"supervisor", report->supervisor},
                                {"proxy", report->proxy},
                                {"ms", report->took.count()}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "reloaded " << report->cert << " on " << report->shards.size() << " shards"
              << (report->supervisor ? ", the supervisor" : "")
              << (report->proxy ? " and shardproxy" : "") << " in " << report->took.count()
              << " ms; every shard answered over TLS after its reload\n";
    // What was not running reads the new files when it starts; say so rather than stay silent.
    if (!report->supervisor) std::cout << "  no supervisor runs: it loads them when it starts\n";
    if (report->proxy_enabled && !report->proxy) {
      std::cout << "  shardproxy is not running: it loads them when it starts\n";
    }
  }
  return kExitOk;
}

}  // namespace shardctl::launcher
