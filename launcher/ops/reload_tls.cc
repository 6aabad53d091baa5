#include "launcher/ops/reload_tls.h"

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "common/secrets.h"
#include "common/tls.h"
#include "common/tls_check.h"
#include "launcher/cluster/redis_client.h"
#include "launcher/ops/target.h"
#include "launcher/os/files.h"
#include "launcher/os/process.h"
#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/supervisor.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using namespace std::chrono_literals;

// A new TLS connection to host:port answers PING within `within`.
common::Status AnswersOverTls(const Access& access, const std::string& host, int port,
                              std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  std::string last = "no answer";
  while (std::chrono::steady_clock::now() < deadline) {
    auto connection = RedisConnection::Connect(access, host, port, 2s);
    if (connection.ok()) {
      auto pong = connection->Run({"PING"});
      if (pong.ok()) return common::Ok();
      last = pong.error().message();
    } else {
      last = connection.error().message();
    }
    std::this_thread::sleep_for(100ms);
  }
  return Error(last);
}

// shardproxy's SIGHUP counters (INFO proxy).
struct ProxyReloads {
  long long done = -1;
  long long failed = -1;
};

common::Result<ProxyReloads> ReadProxyReloads(const Access& access, const std::string& host,
                                              int port) {
  auto connection = RedisConnection::Connect(access, host, port, 2s);
  if (!connection.ok()) return connection.error();
  auto info = connection->Run({"INFO", "proxy"});
  if (!info.ok()) return info.error();
  return ProxyReloads{.done = InfoNumber<long long>(*info, "tls_reloads", -1),
                      .failed = InfoNumber<long long>(*info, "tls_reload_failures", -1)};
}

// SIGHUP to shardproxy, then its own word that it loaded the files: INFO proxy's tls_reloads
// goes up (tls_reload_failures going up is the error). The old certificate would still answer
// PING, so a PING proves nothing here.
common::Status ReloadProxy(const Access& access, const ProcessId& proxy, const std::string& host,
                           int port) {
  const std::string where = "shardproxy (port " + std::to_string(port) + ")";
  auto before = ReadProxyReloads(access, host, port);
  if (!before.ok()) return Error(where + ": " + before.error().message());
  if (before->done < 0) return Error(where + ": INFO proxy has no tls_reloads (an older build?)");
  if (kill(proxy.pid, SIGHUP) != 0) {
    return Error(where + ": cannot signal pid " + std::to_string(proxy.pid) + ": " +
                 std::strerror(errno));
  }
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto now = ReadProxyReloads(access, host, port);
    if (now.ok() && now->failed > before->failed) {
      return Error(where +
                   ": the files did not load at SIGHUP; it still serves the previous "
                   "certificate");
    }
    if (now.ok() && now->done > before->done) return common::Ok();
    std::this_thread::sleep_for(50ms);
  }
  return Error(where + ": no reload seen within 5s of SIGHUP");
}

// A shard the new files failed goes back to the copies of the files it served before, on the
// connection that is still open (its session predates the reload). Says what happened.
std::string PutBackFilesInUse(RedisConnection& connection, const DeploymentDir& dir) {
  const auto in_use = dir.TlsInUseDir();
  if (!std::filesystem::exists(in_use / "cert.pem"))
    return "no copy of its previous files to put back";
  auto put_back = connection.Run({"CONFIG", "SET", "tls-cert-file", (in_use / "cert.pem").string(),
                                  "tls-key-file", (in_use / "key.pem").string(), "tls-ca-cert-file",
                                  (in_use / "ca.pem").string()});
  if (!put_back.ok())
    return "putting its previous files back failed: " + put_back.error().message();
  return "it is back on its previous certificate (" + in_use.string() +
         "), and no later shard was touched";
}

}  // namespace

common::Status CheckTlsFiles(const DeploymentDir& dir, const TlsConfig& tls) {
  if (auto key = common::ReadSecretFile(tls.key, "--tls-key"); !key.ok()) return key.error();
  const std::time_t now = std::time(nullptr);
  const common::TlsFiles files{.cert_file = tls.cert, .key_file = tls.key, .ca_file = tls.ca};
  if (auto checked = common::CheckCertificate(files, now); !checked.ok()) return checked;
  const auto in_use = dir.TlsInUseDir() / "cert.pem";
  const auto ca_in_use = dir.TlsInUseDir() / "ca.pem";
  if (std::filesystem::exists(in_use)) {
    if (auto trusted =
            common::CaVerifies(tls.ca, in_use.string(), now,
                               "the certificate the shards serve now (" + in_use.string() + ")");
        !trusted.ok()) {
      return Error(trusted.error().message() +
                   ": until every shard is reloaded they present it to each other (put the old "
                   "and the new CA in one --tls-ca file, reload, then drop the old CA and reload "
                   "again)");
    }
  }
  if (std::filesystem::exists(ca_in_use)) {
    // Shards not reloaded yet check the new certificate with the CA they loaded before.
    if (auto trusted =
            common::CaVerifies(ca_in_use.string(), tls.cert, now, "--tls-cert " + tls.cert);
        !trusted.ok()) {
      return Error("the CA the shards use now (" + ca_in_use.string() +
                   ") does not verify --tls-cert " + tls.cert +
                   ": until every shard is reloaded they present it to each other (first "
                   "reload a --tls-ca file holding the old and the new CA with the old "
                   "certificate, then the new certificate)");
    }
  }
  auto clients = common::ParseTlsClientCertificates(tls.auth_clients);
  auto loaded =
      common::TlsContext::ForServer({.cert_file = tls.cert, .key_file = tls.key, .ca_file = tls.ca},
                                    clients.value_or(common::TlsClientCertificates::kYes));
  if (!loaded.ok()) return loaded.error();
  return common::Ok();
}

common::Result<TlsReloadReport> ReloadEveryPeer(const DeploymentDir& dir,
                                                const Deployment& deployment,
                                                const std::function<void(int shard)>& progress) {
  const TlsConfig& tls = deployment.tls;
  // Our own links use the renewed files too (their certificate for shards that ask for one, their
  // CA for the shards' new certificates).
  auto renewed = AccessFor(deployment);
  if (!renewed.ok()) return renewed.error();
  const Access& access = *renewed;
  const Plan& plan = deployment.plan;
  TlsReloadReport report;
  for (const auto& shard : plan.shards) {
    const std::string where =
        "shard " + std::to_string(shard.index) + " (port " + std::to_string(shard.port) + ")";
    const std::string done = std::to_string(report.shards.size()) + " of " +
                             std::to_string(plan.shards.size()) + " shards reloaded before it";
    auto connection = RedisConnection::Connect(access, plan.bind, shard.port, 5s);
    if (!connection.ok()) {
      return Error(where + ": " + connection.error().message() + "; " + done +
                   " (is it running? shardctl status)");
    }
    auto set = connection->Run({"CONFIG", "SET", "tls-cert-file", tls.cert, "tls-key-file", tls.key,
                                "tls-ca-cert-file", tls.ca});
    if (!set.ok()) {
      return Error(where + ": CONFIG SET refused the files (" + set.error().message() + "); " +
                   done);
    }
    if (auto answers = AnswersOverTls(access, plan.bind, shard.port, 5s); !answers.ok()) {
      return Error(where + ": no TLS answer after the reload (" + answers.error().message() +
                   "); " + PutBackFilesInUse(*connection, dir) + "; " + done);
    }
    report.shards.push_back(shard.index);
    if (progress) progress(shard.index);
  }
  if (auto recorded = RecordTlsInUse(dir, tls); !recorded.ok()) return recorded.error();
  if (SupervisorRunning(dir)) {
    auto reply = AskSupervisor(dir, {{"cmd", "reload-tls"}}, 5s);
    if (!reply.ok() || !reply->value("ok", false)) {
      return Error(
          "the supervisor did not reload: " +
          (reply.ok() ? reply->value("error", std::string("refused")) : reply.error().message()) +
          " (every shard did)");
    }
    report.supervisor = true;
  }
  if (deployment.proxy.enabled()) {
    const auto proxy = ReadProcessId(dir.ProxyPidFile());
    if (proxy && IsRunning(*proxy)) {
      if (auto reloaded = ReloadProxy(access, *proxy, plan.bind, deployment.proxy.port);
          !reloaded.ok()) {
        return Error(reloaded.error().message() + " (every shard did; see " +
                     dir.ProxyLog().string() + ")");
      }
      report.proxy = true;
    }
  }
  return report;
}

Outcome<TlsReloadReport> ReloadTls(const Spec& spec, bool dry_run,
                                   const std::function<void(size_t done, size_t total)>& progress) {
  // The files are checked here first, as the user's fault, before anything loads them.
  auto target = LoadTarget(spec, {.access = false});
  if (!target.ok()) return target.error();
  const Deployment& deployment = *target->deployment;
  if (!deployment.tls.enabled()) {
    return Failure::Usage("deployment " + spec.name +
                          " runs without TLS (start it with --tls-cert, --tls-key and --tls-ca)");
  }
  if (auto files = CheckTlsFiles(target->dir, deployment.tls); !files.ok()) {
    return Failure::Usage(files.error().message() + "; nothing was reloaded");
  }
  const auto started = std::chrono::steady_clock::now();
  TlsReloadReport report;
  if (!dry_run) {
    size_t done = 0;
    auto reloaded = ReloadEveryPeer(target->dir, deployment, [&](int) {
      if (progress) progress(++done, deployment.plan.shards.size());
    });
    if (!reloaded.ok()) return reloaded.error();
    report = std::move(reloaded).value();
  }
  report.cert = deployment.tls.cert;
  report.shard_count = deployment.plan.shards.size();
  report.proxy_enabled = deployment.proxy.enabled();
  report.dry_run = dry_run;
  report.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return report;
}

}  // namespace shardctl::launcher
