// The supervisor: one process per deployment that owns the shard processes and keeps them alive.
//
//   shardctl up ──fork/exec──▶ shardctl supervise ──spawns──▶ shards (pinned, own sessions)
//        ▲                         │                  ──spawns──▶ shardproxy (ProxyKeeper)
//        │                         │ libuv loop:
//        │                         │   ProcessWatcher per shard (pidfd: exit) ─▶ failover of a
//        │                         │     dead primary to its replica ─▶ RestartPolicy ─▶ respawn
//        │                         │   health timer ◀── HealthChecker thread (PING every 250 ms)
//        │                         │   ForkScheduler thread: BGSAVE/BGREWRITEAOF under fork-limit
//        │                         │   SIGTERM/SIGINT ─▶ stop the proxy, then all shards, exit 0
//        │                         │   control.sock (JSON lines) ◀── status / down / restart / save
//        │                         │   /metrics (--metrics-port) ◀── MetricsPoller thread's cache
//        └──── events (JSON lines on the ready pipe): progress, ready | failed
//
// Shards run in their own sessions and are not killed when the supervisor dies: a crashed
// supervisor must never take the data with it. A new supervisor adopts running shards (pid file
// plus start time, so a recycled PID is never mistaken for a shard) and restarts missing ones.
//
// Control protocol: a client writes one JSON object per line and reads one JSON object per line
// back, every reply with "ok" (bool) and, when false, "error". Requests:
//   {"cmd":"ping"}                        -> {"ok":true,"pid":N}
//   {"cmd":"status"}                      -> {"ok":true,"pid":N,"shards":[{index,pid,state,...}]}
//   {"cmd":"restart","shard":I}           -> {"ok":true,"old_pid":P}; the shard is stopped
//       (SIGTERM) and started again at once; "engine":{kind,path,version} switches its binary
//   {"cmd":"save"}                        -> {"ok":true,"fork_limit":N}; every shard is saved
//                                            (BGSAVE, or BGREWRITEAOF with aof) under the limit
//   {"cmd":"down"}                        -> {"ok":true,"stopped":N} after every shard stopped;
//                                            the supervisor then exits
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>

#include "launcher/model/deployment.h"
#include "launcher/model/deployment_dir.h"

namespace shardctl::launcher {

// Receives the supervisor's start-up events: {"event":"progress","message":...},
// {"event":"ready", ...timings...} or {"event":"failed","error":...}.
using EventSink = std::function<void(const nlohmann::json&)>;

// Runs the supervisor of the deployment in `dir` until it is told to stop. Returns the process
// exit code: 0 after a clean stop, 1 when start-up failed (a fresh start stops everything it
// started; an adoption leaves the running shards alone).
int RunSupervisor(const DeploymentDir& dir, const EventSink& events);

// Sends one request to the deployment's supervisor and returns its reply. Errors when no
// supervisor listens (the caller then probes the shards directly) or it does not answer in time.
common::Result<nlohmann::json> AskSupervisor(const DeploymentDir& dir,
                                             const nlohmann::json& request,
                                             std::chrono::milliseconds timeout);

// True when a live supervisor holds the deployment's lock.
bool SupervisorRunning(const DeploymentDir& dir);

}  // namespace shardctl::launcher
