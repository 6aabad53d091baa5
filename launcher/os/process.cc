#include "launcher/os/process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <numaif.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/cpu_list.h"
#include "common/numbers.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

// In the child between fork and exec only async-signal-safe calls are allowed: report a failed
// step through the pipe as "step: errno" and leave.
[[noreturn]] void ChildFail(int error_fd, const char* step) {
  int saved = errno;
  char message[256];
  int length = snprintf(message, sizeof message, "%s: %s", step, strerror(saved));
  if (length > 0) (void)!write(error_fd, message, static_cast<size_t>(length));
  _exit(127);
}

struct PreparedChild {
  pid_t parent = 0;
  std::vector<char*> argv;
  cpu_set_t cpus;
  std::vector<unsigned long> node_mask;
  int output_fd = -1;
};

[[noreturn]] void RunChild(const SpawnOptions& options, PreparedChild& child, int error_fd) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  signal(SIGPIPE, SIG_DFL);
  if (options.new_session && setsid() < 0) ChildFail(error_fd, "setsid");
  // The parent may have died between fork and prctl: then nothing would send the signal.
  if (options.die_with_parent &&
      (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != child.parent)) {
    ChildFail(error_fd, "PR_SET_PDEATHSIG");
  }
  if (!options.cpus.empty() && sched_setaffinity(0, sizeof child.cpus, &child.cpus) != 0) {
    ChildFail(error_fd, "sched_setaffinity");
  }
  if (options.membind_node &&
      set_mempolicy(MPOL_BIND, child.node_mask.data(), child.node_mask.size() * 64 + 1) != 0 &&
      errno != ENOSYS) {  // ENOSYS: a kernel without NUMA, where binding means nothing
    ChildFail(error_fd, "set_mempolicy");
  }
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, 0) < 0) ChildFail(error_fd, "open /dev/null");
  int out = child.output_fd >= 0 ? child.output_fd : null_fd;
  if (dup2(out, 1) < 0 || dup2(out, 2) < 0) ChildFail(error_fd, "redirect output");
  if (!options.working_dir.empty() && chdir(options.working_dir.c_str()) != 0) {
    ChildFail(error_fd, "chdir");
  }
  // Nothing the parent holds (its log file, sockets, locks) may leak into the program.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  for (int fd : options.keep_fds) {
    int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
  }
  execv(options.program.empty() ? child.argv[0] : options.program.c_str(), child.argv.data());
  ChildFail(error_fd, "exec");
}

// The fields of /proc/PID/stat from field 3 (the state) on: fields[0] is field 3, fields[i] is
// field i + 3. Empty when there is no such process. The command name (field 2) may hold spaces and
// parentheses, so the fields resume after the last ')'.
std::vector<std::string> ReadStatFields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return {};
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 > stat.size()) return {};
  std::istringstream stream(stat.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string field; stream >> field;) fields.push_back(std::move(field));
  return fields;
}

// Field `number` (1-based, as proc(5) counts) of `fields` from ReadStatFields, "" when absent.
std::string StatField(const std::vector<std::string>& fields, size_t number) {
  return number >= 3 && number - 3 < fields.size() ? fields[number - 3] : std::string();
}

// Field 22 of /proc/PID/stat; nullopt when there is no such process, or it is a zombie and
// `allow_zombie` is false.
std::optional<uint64_t> ReadStartTime(pid_t pid, bool allow_zombie) {
  const auto fields = ReadStatFields(pid);
  if (fields.empty()) return std::nullopt;
  const std::string state = StatField(fields, 3);
  if (!allow_zombie && (state == "Z" || state == "X")) return std::nullopt;
  return common::ParseInteger<uint64_t>(StatField(fields, 22));
}

}  // namespace

std::optional<double> ReadCpuSeconds(const ProcessId& process) {
  const auto fields = ReadStatFields(process.pid);
  const auto start = common::ParseInteger<uint64_t>(StatField(fields, 22));
  if (!start || *start != process.start_time) return std::nullopt;
  // utime (14) + stime (15), in clock ticks.
  const uint64_t ticks = common::ParseInteger<uint64_t>(StatField(fields, 14)).value_or(0) +
                         common::ParseInteger<uint64_t>(StatField(fields, 15)).value_or(0);
  return static_cast<double>(ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

Result<ProcessId> SpawnPinned(const SpawnOptions& options) {
  if (options.argv.empty()) return Error("spawn: no program given");
  PreparedChild child;
  for (const auto& arg : options.argv) child.argv.push_back(const_cast<char*>(arg.c_str()));
  child.argv.push_back(nullptr);
  CPU_ZERO(&child.cpus);
  for (int cpu : options.cpus) CPU_SET(cpu, &child.cpus);
  if (options.membind_node) {
    int node = *options.membind_node;
    child.node_mask.assign(node / 64 + 1, 0);
    child.node_mask[node / 64] |= 1ul << (node % 64);
  }
  if (!options.output.empty()) {
    child.output_fd = open(options.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (child.output_fd < 0) {
      return Error("cannot open " + options.output.string() + ": " + strerror(errno));
    }
  }
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return Error(std::string("pipe: ") + strerror(errno));
  child.parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    close(error_pipe[0]);
    RunChild(options, child, error_pipe[1]);
  }
  close(error_pipe[1]);
  if (child.output_fd >= 0) close(child.output_fd);
  char message[256];
  ssize_t length;
  do {
    length = read(error_pipe[0], message, sizeof message - 1);
  } while (length < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (length > 0) {  // the child failed before exec: reap it and report why
    waitpid(pid, nullptr, 0);
    return Error(options.argv[0] + ": " + std::string(message, static_cast<size_t>(length)));
  }
  // Our unreaped child keeps its /proc entry even when it already exited (a quick `--version`
  // often has): identify it anyway and let the caller collect its output and exit status.
  auto start = ReadStartTime(pid, /*allow_zombie=*/true);
  if (!start) {
    auto how = ReapIfExited(pid);
    return Error(options.argv[0] + ": " + how.value_or("ended") + " right after start");
  }
  return ProcessId{pid, *start};
}

Result<FinishedRun> RunToEnd(const std::vector<std::string>& argv,
                             std::chrono::milliseconds timeout,
                             const std::filesystem::path& program) {
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Error(std::string("pipe: ") + strerror(errno));
  SpawnOptions options{.argv = argv, .program = program, .new_session = false, .keep_fds = {}};
  options.output = "/proc/self/fd/" + std::to_string(out_pipe[1]);
  auto child = SpawnPinned(options);
  close(out_pipe[1]);
  if (!child.ok()) {
    close(out_pipe[0]);
    return child.error();
  }
  FinishedRun run;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd poller{.fd = out_pipe[0], .events = POLLIN, .revents = 0};
    if (left.count() <= 0 || poll(&poller, 1, static_cast<int>(left.count())) == 0) {
      kill(child->pid, SIGKILL);
      waitpid(child->pid, nullptr, 0);
      close(out_pipe[0]);
      return Error(argv[0] + ": no answer within " + std::to_string(timeout.count()) + " ms");
    }
    ssize_t n = read(out_pipe[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    run.output.append(buffer, static_cast<size_t>(n));
  }
  close(out_pipe[0]);
  int status = 0;
  waitpid(child->pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

Result<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
  auto run = RunToEnd(argv, timeout);
  if (!run.ok()) return run.error();
  if (run->exit_code != 0) {
    return Error(argv[0] + ": failed: " + run->output.substr(0, run->output.find('\n')));
  }
  return std::move(run->output);
}

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  return ReadStartTime(pid, /*allow_zombie=*/false);
}

bool IsStopped(pid_t pid) {
  const std::string state = StatField(ReadStatFields(pid), 3);
  return state == "T" || state == "t";
}

bool IsRunning(const ProcessId& process) {
  if (process.pid <= 0) return false;
  auto start = ProcessStartTime(process.pid);
  return start && *start == process.start_time;
}

std::optional<ProcessId> IdentifyProcess(pid_t pid) {
  auto start = ProcessStartTime(pid);
  if (!start) return std::nullopt;
  return ProcessId{pid, *start};
}

namespace {

Result<std::string> ReadProcFile(pid_t pid, const char* name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + name);
  if (!in) return Error("/proc/" + std::to_string(pid) + "/" + name + ": cannot read");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

Result<std::vector<int>> ReadAllowedCpus(pid_t pid) {
  auto status = ReadProcFile(pid, "status");
  if (!status.ok()) return status.error();
  const std::string key = "Cpus_allowed_list:";
  size_t at = status->find(key);
  if (at == std::string::npos) return Error("no Cpus_allowed_list in /proc/PID/status");
  size_t end = status->find('\n', at);
  return common::ParseCpuList(status->substr(at + key.size(), end - at - key.size()));
}

Result<std::vector<int>> ReadBoundNodes(pid_t pid) {
  auto maps = ReadProcFile(pid, "numa_maps");
  if (!maps.ok()) return maps.error();
  std::vector<int> nodes;
  size_t at = maps->find(" bind:");
  if (at == std::string::npos) return nodes;
  size_t end = maps->find_first_of(" \n", at + 6);
  auto parsed = common::ParseCpuList(maps->substr(at + 6, end - at - 6));  // same list syntax
  if (!parsed.ok()) return parsed.error();
  return *parsed;
}

std::optional<std::string> ReapIfExited(pid_t pid) {
  int status = 0;
  pid_t reaped = waitpid(pid, &status, WNOHANG);
  if (reaped != pid) return std::nullopt;
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "ended";
}

Result<std::filesystem::path> FindExecutable(const std::string& name_or_path) {
  auto check = [](const std::filesystem::path& path) -> Result<std::filesystem::path> {
    struct stat info;
    if (stat(path.c_str(), &info) != 0) return Error(path.string() + ": no such file");
    if (!S_ISREG(info.st_mode)) return Error(path.string() + ": not a regular file");
    if (access(path.c_str(), X_OK) != 0) {
      return Error(path.string() + ": not executable (chmod +x it, or pick another binary)");
    }
    return std::filesystem::absolute(path);
  };
  if (name_or_path.find('/') != std::string::npos) return check(name_or_path);
  const char* path_env = std::getenv("PATH");
  std::istringstream dirs(path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    auto candidate = std::filesystem::path(dir) / name_or_path;
    if (access(candidate.c_str(), X_OK) == 0) return check(candidate);
  }
  return Error(name_or_path + ": not found in $PATH");
}

std::vector<pid_t> SessionMembers(const std::vector<ProcessId>& leaders) {
  std::vector<pid_t> members;
  if (leaders.empty()) return members;
  const pid_t own_session = getsid(0);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const auto pid = common::ParseInteger<pid_t>(entry.path().filename().string());
    if (!pid) continue;
    const auto fields = ReadStatFields(*pid);
    const auto session = common::ParseInteger<pid_t>(StatField(fields, 6));
    const auto started = common::ParseInteger<uint64_t>(StatField(fields, 22));
    if (!session || !started || *session == own_session || StatField(fields, 3) == "Z") continue;
    for (const auto& leader : leaders) {
      // Forked by the leader, so started no earlier: an older process in a session of that
      // number belongs to someone else (the pid was reused).
      if (*session == leader.pid && *pid != leader.pid && *started >= leader.start_time) {
        members.push_back(*pid);
      }
    }
  }
  return members;
}

int StopProcesses(const std::vector<ProcessId>& processes, std::chrono::milliseconds grace) {
  using Clock = std::chrono::steady_clock;
  // Processes we spawned lead their own session (setsid): whatever they forked and left behind
  // (an engine that forks and does not exec, a wrapper script) is stopped with them.
  std::vector<ProcessId> sessions;
  for (const auto& process : processes) {
    if (IsRunning(process) && getsid(process.pid) == process.pid) sessions.push_back(process);
  }
  auto alive = [](const ProcessId& process) {
    // Our child is alive until reaped: a multithreaded engine's main thread can have exited (its
    // /proc entry a zombie, so IsRunning says no) while its other threads still run, and a child
    // left unreaped then stays a zombie under us for good (seen after `scale` removed a shard).
    int status = 0;
    const pid_t reaped = waitpid(process.pid, &status, WNOHANG);
    if (reaped == process.pid) return false;
    if (reaped == 0) return true;
    return IsRunning(process);  // not our child: its start time says
  };
  for (const auto& process : processes) {
    if (alive(process)) kill(process.pid, SIGTERM);
  }
  auto deadline = Clock::now() + grace;
  auto any_alive = [&] {
    for (const auto& process : processes) {
      if (alive(process)) return true;
    }
    return false;
  };
  while (any_alive() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int killed = 0;
  for (const auto& process : processes) {
    if (alive(process)) {
      kill(process.pid, SIGKILL);
      ++killed;
    }
  }
  auto kill_deadline = Clock::now() + std::chrono::seconds(5);
  while (killed > 0 && any_alive() && Clock::now() < kill_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (pid_t left : SessionMembers(sessions)) kill(left, SIGKILL);
  return killed;
}

std::vector<pid_t> ChildrenOf(const ProcessId& process) {
  std::vector<pid_t> children;
  if (!IsRunning(process)) return children;
  const std::string pid = std::to_string(process.pid);
  std::ifstream list("/proc/" + pid + "/task/" + pid + "/children");
  pid_t child = 0;
  while (list >> child) children.push_back(child);
  return children;
}

void ContinueStoppedChildren(const std::vector<ProcessId>& parents) {
  for (const auto& parent : parents) {
    for (pid_t child : ChildrenOf(parent)) {
      if (IsStopped(child)) ::kill(child, SIGCONT);
    }
  }
}

}  // namespace shardctl::launcher
