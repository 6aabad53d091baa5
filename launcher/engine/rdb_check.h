// Whether an engine can load an RDB file, asked of the engine itself: its server binary run as
// redis-check-rdb (the same binary; argv[0] chooses). It reads the whole file the way a load
// does, object by object, without keeping the keys, so a file that would stop a shard at start
// (damaged but carrying matching checksums, or a data type this build lacks) is found before any
// shard is given it, and a file cut or written wrong is found while its backup can be taken
// again. shardctl parses no RDB itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

// What the checker said of a file.
struct RdbFileCheck {
  // Why the engine would not load it ("at offset 8388864: Unexpected EOF reading RDB file
  // (reading key 'k:87590')"); "" when the checker read it to its end.
  std::string finding;
  // The keys it read (those whose TTL had run out included), when it said.
  std::optional<uint64_t> keys;
};

// The server binary to run as the checker: the engine's path when it is the binary itself, else
// (a wrapper script, which would lose the name the binary goes by) the one a running shard of
// `deployment` on this host executes, read from /proc/PID/exe.
std::filesystem::path CheckerBinary(const Deployment& deployment, const DeploymentDir& dir);

// `checker` (a server binary, CheckerBinary) run as redis-check-rdb on `file`. An error when
// nothing is known of the file: the checker could not start, ran past `timeout`, was killed by a
// signal, or did not act as a checker.
common::Result<RdbFileCheck> CheckRdbFile(const std::filesystem::path& checker,
                                          const std::filesystem::path& file,
                                          std::chrono::milliseconds timeout);

// CheckRdbFile of each of `files`, in order, at most `at_once` at a time (a check holds one key
// at a time, but takes a CPU). Once `stop` is set no further check starts: those left out are
// errors ("not checked").
std::vector<common::Result<RdbFileCheck>> CheckRdbFiles(
    const std::filesystem::path& checker, const std::vector<std::filesystem::path>& files,
    std::chrono::milliseconds timeout, size_t at_once, const std::atomic<bool>* stop = nullptr);

// Pure: what is wrong with a checked file that should hold `expected_keys` keys: the checker's
// finding, else "it holds N keys, not M" when the checker counted another number; "" when
// nothing is.
std::string RdbFileProblem(const RdbFileCheck& check, uint64_t expected_keys);

// Pure: the finding in a failed check's output (the line after "--- RDB ERROR DETECTED ---",
// its offset and the key it was reading), or "" when the output holds none.
std::string RdbCheckFinding(std::string_view output);

// Pure: N of the checker's "[info] N keys read" line, or nullopt when there is none.
std::optional<uint64_t> RdbCheckKeysRead(std::string_view output);

}  // namespace shardctl::launcher
