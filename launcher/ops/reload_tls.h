// What `shardctl reload-tls` does below the command line: certificates renewed on disk (same
// paths as `up --tls-*` recorded) are taken up by every running process without a restart, one
// shard at a time, each checked before the next; then the supervisor's own links and shardproxy.
// Nothing here prints.
//
//   LoadTarget ─▶ TLS enabled? ─▶ CheckTlsFiles ─▶ (dry run stops here) ─▶ ReloadEveryPeer
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/model/spec.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {

struct TlsReloadReport {
  std::string cert;        // the certificate file reloaded
  size_t shard_count = 0;  // shards in the deployment
  bool proxy_enabled = false;
  bool dry_run = false;  // the files were checked; nothing was reloaded
  std::chrono::milliseconds took{0};
  std::vector<int> shards;  // reloaded, in order
  bool supervisor = false;  // its links present the new certificate
  bool proxy = false;       // shardproxy took SIGHUP and serves TLS again
};

// The files are checked first (the key only for its owner, the key matching the certificate,
// the CA loading); a problem there is a usage error and nothing was touched. Then each shard:
// CONFIG SET tls-cert-file/tls-key-file/tls-ca-cert-file (Redis loads them anew even when the
// paths are the same), and a fresh TLS connection must answer PING before the next shard. A
// failure stops there: the shard is put back on the files it served before (the copies in
// dir.TlsInUseDir()), and the error names the shard and how many were done (running it again
// after the fix is safe). After the last shard those copies are replaced by the new files.
// `progress` hears each shard done.
common::Result<TlsReloadReport> ReloadEveryPeer(
    const DeploymentDir& dir, const Deployment& deployment,
    const std::function<void(int shard)>& progress = {});

// The files of `deployment.tls` checked as a TLS peer will (dates, chain to the CA) and loaded
// as a server would load them (the key only for its owner, and the certificate's key), and the
// new CA must still verify the certificate the shards serve now (dir.TlsInUseDir()), which they
// present to each other until every one is reloaded. The error names the flag and file (exit 2).
common::Status CheckTlsFiles(const DeploymentDir& dir, const TlsConfig& tls);

// `shardctl reload-tls [--dry-run]`: a deployment without TLS, or files that would not serve,
// are usage faults and nothing is reloaded; a shard that fails its reload is a runtime fault.
// `progress` hears how many shards of how many are done after each one.
Outcome<TlsReloadReport> ReloadTls(const Spec& spec, bool dry_run,
                                   const std::function<void(size_t done, size_t total)>& progress);

}  // namespace shardctl::launcher
