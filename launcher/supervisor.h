// The supervisor: one process per deployment that owns the shard processes.
//
//   shardctl up ──fork/exec──▶ shardctl supervise ──spawns──▶ shards (pinned, own sessions)
//        ▲                         │   libuv loop: SIGTERM/SIGINT, SIGCHLD, control socket
//        └──── events (JSON lines on the ready pipe): progress, ready | failed
//   shardctl status/down ──control.sock (JSON lines)──▶ supervisor
//
// Shards run in their own sessions and are not killed when the supervisor dies: a crashed
// supervisor must never take the data with it. Healing (restarts, adoption) builds on this loop.
//
// Control protocol: a client writes one JSON object per line and reads one JSON object per line
// back. Requests: {"cmd":"ping"}, {"cmd":"status"}, {"cmd":"down"}. Every reply has "ok" (bool)
// and, when false, "error". "down" replies after every shard has stopped; the supervisor then exits.
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "launcher/state.h"

namespace shardctl::launcher {

// Receives the supervisor's start-up events: {"event":"progress","message":...},
// {"event":"ready", ...timings...} or {"event":"failed","error":...}.
using EventSink = std::function<void(const nlohmann::json&)>;

// Runs the supervisor of the deployment in `dir` until it is told to stop. Returns the process
// exit code: 0 after a clean stop, 1 when start-up failed (everything started was stopped).
int RunSupervisor(const DeploymentDir& dir, const EventSink& events);

// Sends one request to the deployment's supervisor and returns its reply. Errors when no
// supervisor listens (the caller then probes the shards directly) or it does not answer in time.
common::Result<nlohmann::json> AskSupervisor(const DeploymentDir& dir,
                                             const nlohmann::json& request,
                                             std::chrono::milliseconds timeout);

// True when a live supervisor holds the deployment's lock.
bool SupervisorRunning(const DeploymentDir& dir);

}  // namespace shardctl::launcher
