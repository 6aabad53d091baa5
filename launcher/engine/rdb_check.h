// Whether an engine can load an RDB file, asked of the engine itself: its server binary run as
// redis-check-rdb (the same binary; argv[0] chooses). It reads the whole file the way a load
// does, object by object, without keeping the keys, so a file that would stop a shard at start
// (damaged but carrying matching checksums, or a data type this build lacks) is found before any
// shard is given it. shardctl parses no RDB itself.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {

// What `engine`'s checker found wrong in `file` ("at offset 8388864: Unexpected EOF reading RDB
// file (reading key 'k:87590')"), or "" when it read the file to its end. An error only when the
// checker could not be run to its end (a missing binary, `timeout`): nothing is known of the file.
common::Result<std::string> FindWhyRdbWouldNotLoad(const Engine& engine,
                                                   const std::filesystem::path& file,
                                                   std::chrono::milliseconds timeout);

// Pure: the finding in a failed check's output (the line after "--- RDB ERROR DETECTED ---",
// its offset and the key it was reading), or "" when the output holds none.
std::string RdbCheckFinding(std::string_view output);

}  // namespace shardctl::launcher
