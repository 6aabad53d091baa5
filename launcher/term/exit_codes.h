// The exit codes of every shardctl command: the contract scripts check (documented in --help).
#pragma once

namespace shardctl::launcher {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;  // the environment stopped us: port taken, engine crashed
inline constexpr int kExitUsage = 2;    // the command line or config is wrong
inline constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C or SIGTERM (128 + SIGINT)
// `status` follows the monitoring-plugin convention instead:
inline constexpr int kStatusOk = 0;        // every shard healthy, supervisor running
inline constexpr int kStatusDegraded = 1;  // serving, but something needs attention
inline constexpr int kStatusDown = 2;      // not serving
inline constexpr int kStatusUnknown = 3;   // no such deployment

}  // namespace shardctl::launcher
