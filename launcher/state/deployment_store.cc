#include "launcher/state/deployment_store.h"

#include <algorithm>

#include "common/secrets.h"
#include "launcher/model/plan_json.h"
#include "launcher/os/files.h"

namespace shardctl::launcher {

using common::Error;
using common::Result;

common::Status WriteDeployment(const DeploymentDir& dir, const Deployment& deployment) {
  if (deployment.auth.password_required) {
    // First the password, so a record that asks for one always finds it.
    auto written = WriteFileAtomically(dir.PasswordFile(), deployment.auth.password + "\n");
    if (!written.ok()) return written;
  }
  return WriteFileAtomically(dir.DeploymentFile(), DeploymentToJson(deployment).dump(2) + "\n");
}

Result<Deployment> ReadDeployment(const DeploymentDir& dir) {
  auto text = ReadWholeFile(dir.DeploymentFile());
  if (!text.ok()) return text.error();
  auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error(dir.DeploymentFile().string() + ": not valid JSON");
  auto deployment = DeploymentFromJson(json).Context(dir.DeploymentFile().string());
  if (!deployment.ok() || !deployment->auth.password_required) return deployment;
  auto password = common::ReadPasswordFile(dir.PasswordFile(), "password file");
  if (!password.ok()) {
    return Error(password.error().message() +
                 "; the shards need it (restore it with the password from --password-file)");
  }
  deployment->auth.password = std::move(password).value();
  return deployment;
}

std::vector<std::string> ListDeployments(const std::filesystem::path& state_root) {
  std::vector<std::string> names;
  std::error_code error;
  // increment(error), not ++: a directory vanishing mid-walk must not throw.
  for (std::filesystem::directory_iterator it(state_root, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code unreadable;
    if (std::filesystem::exists(DeploymentDir(state_root, name).DeploymentFile(), unreadable)) {
      names.push_back(name);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<ProcessId> LiveShards(const DeploymentDir& dir, const Plan& plan) {
  std::vector<ProcessId> live;
  for (const auto& shard : plan.shards) {
    auto process = ReadProcessId(dir.ShardPidFile(shard.index));
    if (process && IsRunning(*process)) live.push_back(*process);
  }
  return live;
}

bool AnyShardRunning(const DeploymentDir& dir, const Plan& plan) {
  return !LiveShards(dir, plan).empty();
}

common::Status RecordTlsInUse(const DeploymentDir& dir, const TlsConfig& tls) {
  if (!tls.enabled()) return common::Ok();
  std::error_code error;
  std::filesystem::create_directories(dir.TlsInUseDir(), error);
  if (error) return Error(dir.TlsInUseDir().string() + ": " + error.message());
  const std::pair<const std::string*, const char*> files[] = {
      {&tls.cert, "cert.pem"}, {&tls.key, "key.pem"}, {&tls.ca, "ca.pem"}};
  for (const auto& [from, name] : files) {
    auto content = ReadWholeFile(*from);
    if (!content.ok()) return content.error();
    if (auto written = WriteFileAtomically(dir.TlsInUseDir() / name, *content); !written.ok()) {
      return written;
    }
  }
  return common::Ok();
}

}  // namespace shardctl::launcher
