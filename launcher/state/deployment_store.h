// A deployment on disk: deployment.json and the shards' pid files in its DeploymentDir.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"
#include "launcher/os/process.h"

namespace shardctl::launcher {

common::Status WriteDeployment(const DeploymentDir& dir, const Deployment& deployment);
// Errors name the file: missing, not JSON, or not a deployment record.
common::Result<Deployment> ReadDeployment(const DeploymentDir& dir);

// Copies the deployment's TLS files (certificate, key, CA) into dir.TlsInUseDir() as cert.pem,
// key.pem and ca.pem, mode 0600: the files the shards serve now. Nothing without TLS.
common::Status RecordTlsInUse(const DeploymentDir& dir, const TlsConfig& tls);

// The names of the deployments under `state_root` (directories holding a deployment.json),
// sorted; none when the directory is missing or unreadable.
std::vector<std::string> ListDeployments(const std::filesystem::path& state_root);

// The shards of `plan` whose pid file names a process still running (same pid and start time).
std::vector<ProcessId> LiveShards(const DeploymentDir& dir, const Plan& plan);

// True when any shard recorded in the pid files is still running (adoptable).
bool AnyShardRunning(const DeploymentDir& dir, const Plan& plan);

}  // namespace shardctl::launcher
