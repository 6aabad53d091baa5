// Starting and identifying OS processes: pinned spawns, PID identity, /proc readers.
//
// A PID alone is not an identity: PIDs are recycled. Everywhere shardctl remembers a process it
// keeps (pid, start time) — the start time from /proc/PID/stat field 22 — and treats a PID whose
// start time differs as somebody else's process, never to be signalled.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace shardctl::launcher {

// A process we started, identified beyond its PID.
struct ProcessId {
  pid_t pid = 0;
  uint64_t start_time = 0;  // clock ticks since boot, /proc/PID/stat field 22
  friend bool operator==(const ProcessId&, const ProcessId&) = default;
};

struct SpawnOptions {
  std::vector<std::string> argv;      // argv[0] is the executable's path, unless `program` is set
  std::filesystem::path program;      // what to execute, when argv[0] is another name for it
  std::vector<int> cpus;              // empty: inherit the affinity
  std::optional<int> membind_node;    // bind memory allocations to this NUMA node
  std::filesystem::path output;       // stdout and stderr are appended here; empty: /dev/null
  std::filesystem::path working_dir;  // empty: inherit
  bool new_session = true;            // setsid(): terminal signals reach only the supervisor
  std::vector<int> keep_fds;          // descriptors (besides 0-2) the child keeps open
  // SIGKILL the child when the thread that spawned it ends (the whole process, kill -9 included):
  // for helpers of one command (a restore's scratch servers), never for shards. The kernel ties it
  // to the spawning thread, so the child must not outlive that thread's work.
  bool die_with_parent = false;
};

// Forks and execs with the CPU affinity and memory policy applied in the child before exec, so
// the program never runs a single instruction unpinned. Failures in the child (bad path, affinity
// refused) come back as an error naming the step; a successful return means exec happened.
common::Result<ProcessId> SpawnPinned(const SpawnOptions& options);

// Runs argv to completion and returns its stdout; errors when it cannot start, exceeds `timeout`
// (it is killed) or exits non-zero (the message includes the output's first line).
common::Result<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout);

// How a program run to its end ended: its exit code (128 + the signal when a signal ended it)
// and its stdout and stderr together.
struct FinishedRun {
  int exit_code = 0;
  std::string output;
};

// Runs argv to completion; errors only when it cannot start or exceeds `timeout` (it is killed).
// `program`, when given, is executed with argv[0] as its name (a multi-call binary choosing what
// to be).
common::Result<FinishedRun> RunToEnd(const std::vector<std::string>& argv,
                                     std::chrono::milliseconds timeout,
                                     const std::filesystem::path& program = {});

// The start time of `pid`, or nullopt when no such process exists (or it is a zombie).
std::optional<uint64_t> ProcessStartTime(pid_t pid);

// True when the process is still the one recorded (same PID and start time) and not a zombie.
bool IsRunning(const ProcessId& process);

// Identity of a live PID (e.g. one we just spawned), or nullopt when it is gone.
std::optional<ProcessId> IdentifyProcess(pid_t pid);

// CPU time the process has used (user + system, /proc/PID/stat fields 14 and 15) in seconds;
// nullopt when it is gone or is no longer that process (another start time).
std::optional<double> ReadCpuSeconds(const ProcessId& process);

// Cpus_allowed_list of /proc/PID/status as ids.
common::Result<std::vector<int>> ReadAllowedCpus(pid_t pid);

// The NUMA nodes named by "bind:" policies in /proc/PID/numa_maps (empty when unbound).
common::Result<std::vector<int>> ReadBoundNodes(pid_t pid);

// Reaps `pid` if it is our exited child. Returns a description of how it ended ("exited with
// status 1", "killed by signal 9"), or nullopt when it is still running or not our child.
std::optional<std::string> ReapIfExited(pid_t pid);

// SIGTERM to every live process (Redis shuts down cleanly on it, saving if persistence is on),
// then SIGKILL to those still alive after `grace`. Reaps our children. Returns how many needed
// SIGKILL. Processes that are not what was recorded (recycled PIDs) are never signalled. A
// process that leads its own session (all we spawn do) takes the rest of its session with it:
// whatever it forked and left running is SIGKILLed at the end.
int StopProcesses(const std::vector<ProcessId>& processes, std::chrono::milliseconds grace);

// The live processes in the sessions `leaders` lead (/proc/PID/stat field 6), the leaders left
// out, and only those started no earlier than their leader (so a reused pid's session is never
// counted) and never this process' own session.
std::vector<pid_t> SessionMembers(const std::vector<ProcessId>& leaders);

// The children of `process` (/proc/PID/task/PID/children), none when it is not that process.
std::vector<pid_t> ChildrenOf(const ProcessId& process);

// Continues (SIGCONT) every stopped child of `parents`.
void ContinueStoppedChildren(const std::vector<ProcessId>& parents);

// True when `pid` is stopped (SIGSTOP, a debugger): state T or t in /proc/PID/stat.
bool IsStopped(pid_t pid);

// Finds an executable: a name with '/' is checked as is, otherwise searched in $PATH. Returns the
// path, or an error saying whether it is missing or not executable.
common::Result<std::filesystem::path> FindExecutable(const std::string& name_or_path);

}  // namespace shardctl::launcher
