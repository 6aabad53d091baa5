// The integration-test fixture: runs the real `shardctl` binary against real redis-server /
// valkey-server processes on 127.0.0.1, each test in its own temp state dir and its own block of
// ports, and always cleans up.
//
//   test ──RunCommand──▶ shardctl up ──▶ supervisor (setsid) ──▶ N × redis-server
//     │                                       ▲ orphans are re-parented to the test process,
//     │                                       │ which is a child subreaper (prctl)
//     └─ TearDown: shardctl down --purge, then SIGKILL by PID whatever the state dir's pid files
//        or the test's own process tree still hold, and fail the test if anything was left.
//
// Ports: every test process reserves a block of kPortBlock client ports P..P+49 (bus ports
// P+10000..) with bases in 10000-21950, so even bus ports stay below 32768, where the kernel's
// ephemeral range (and its TIME_WAIT sockets) begins. A block is owned through flock() on
// /tmp/shardctl-integration-ports/<P>.lock for the life of the test process, so parallel ctest
// processes never share one, and it is only taken when a bind() probe finds all its ports free.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

struct redisReply;  // hiredis

namespace shardctl::integration {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr int kPortBlock = 50;         // client ports per test; the most a test starts is 40
constexpr int kBusPortOffset = 10000;  // shardctl's default bus port distance

// How a finished (or killed) command ended and what it printed.
struct CommandResult {
  int exit_code = -1;  // exit status; 128+N when killed by signal N
  bool timed_out = false;
  bool output_held_open = false;  // something it started still held its stdout/stderr
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};

  // "exit 2 after 12 ms\nstdout: ...\nstderr: ..." for assertion messages.
  std::string Describe() const;
};

// Runs argv (argv[0] a path, or a name searched in $PATH) with stdin from /dev/null, capturing
// stdout and stderr. `env` entries are added to (or replace in) the inherited environment. A
// command still running after `timeout` is SIGKILLed with its process group.
CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env = {});

// A command started in the background with stdout/stderr going to files. The destructor SIGKILLs
// and reaps it if it is still running.
class BackgroundCommand {
 public:
  BackgroundCommand(const std::vector<std::string>& argv, const std::filesystem::path& out,
                    const std::filesystem::path& err,
                    const std::map<std::string, std::string>& env = {});
  ~BackgroundCommand();
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;

  pid_t pid() const { return pid_; }
  // The exit code (128+N for signal N) once it ended within `timeout`, else nullopt.
  std::optional<int> WaitForExit(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// A process identity as shardctl records it: pid and /proc/PID/stat start time.
struct RecordedProcess {
  pid_t pid = 0;
  uint64_t start_time = 0;
  std::string source;  // the file it was read from
};

// Start time of `pid`, nullopt when it does not exist or is a zombie.
std::optional<uint64_t> StartTimeOf(pid_t pid);
// True when `pid` runs (not a zombie) and, if start_time != 0, is still that same process.
bool IsAlive(pid_t pid, uint64_t start_time = 0);
// "pid start_time" from a pid file; nullopt when missing or malformed.
std::optional<RecordedProcess> ReadPidFile(const std::filesystem::path& path);
// Every <root>/<name>/supervisor.pid, proxy.pid and shards/*/pid under a state root.
std::vector<RecordedProcess> PidFilesUnder(const std::filesystem::path& state_root);

// Makes this process the reaper of orphaned descendants (the supervisor once `up` exits, shards
// whose supervisor died), so LiveDescendants() sees everything a test started.
void BecomeSubreaper();
// Live (non-zombie) processes below this one, as "pid command" pairs. Reaps zombie children and
// remembers those that died of a crash signal (SIGSEGV, SIGABRT, ...) for TakeCrashes().
std::vector<std::pair<pid_t, std::string>> LiveDescendants();
// The crashes LiveDescendants() has reaped since the last call, e.g. "pid 12 (shardctl): signal
// 11".
std::vector<std::string> TakeCrashes();

// Polls `condition` every `interval` until it holds or `timeout` passes; returns the last result.
bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = 20ms);

std::string ReadFileText(const std::filesystem::path& path);
std::vector<std::string> SplitLines(const std::string& text);
// "0-2,5" -> {0, 1, 2, 5}; ADD_FAILUREs and returns what it parsed on malformed input.
std::vector<int> ParseCpuList(const std::string& text);
// The field `key` ("Cpus_allowed_list") of /proc/PID/status, trimmed; "" when absent.
std::string ProcStatusField(pid_t pid, const std::string& key);
// True when the calling thread's effective set holds capability `cap` (CAP_SYS_NICE ...), read
// from /proc/thread-self/status (capabilities are per thread).
bool HasEffectiveCapability(int cap);
// Whether the kernel lets a thread of this process run at SCHED_FIFO, tried on a thread of its
// own (which is then put back): what RealtimeSection should find.
bool KernelAllowsRealtime();

// A listening TCP socket on 127.0.0.1:port (SO_REUSEADDR like Redis). -1 when it cannot bind.
int ListenOn(int port);
// True when 127.0.0.1:port can be bound right now (with SO_REUSEADDR, as Redis binds).
bool PortBindable(int port);

// One HTTP exchange with 127.0.0.1:port: sends `request` as is and reads until the server closes
// (our endpoints always do; 5 s at most per read). "" when nothing answers.
std::string HttpExchange(int port, const std::string& request);

// A reserved block of kPortBlock client ports and their bus ports; see the file comment.
class PortBlock {
 public:
  // Fails the current test (ADD_FAILURE) and returns nullptr when no block is free.
  static std::unique_ptr<PortBlock> Reserve();
  ~PortBlock();
  int base() const { return base_; }

 private:
  PortBlock(int base, int lock_fd) : base_(base), lock_fd_(lock_fd) {}
  int base_;
  int lock_fd_;
};

// A directory from mkdtemp, removed with its contents by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A reply from hiredis, flattened into a tree of strings and arrays.
struct RedisReply {
  enum class Kind { kString, kInteger, kArray, kNil, kError } kind = Kind::kNil;
  std::string text;  // strings, status, errors; integers in decimal
  long long integer = 0;
  std::vector<RedisReply> elements;
};

// Sends one command to 127.0.0.1:port over hiredis (not shardctl's client) and returns the
// reply; nullopt with `error` set when the connection fails.
std::optional<RedisReply> QueryRedis(int port, const std::vector<std::string>& command,
                                     std::string* error = nullptr);
// The same flattening for a reply read on a connection the test keeps itself.
RedisReply ConvertRedisReply(const redisReply* reply);

// The fixture every shardctl integration test uses.
class ShardctlTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Runs shardctl with exactly `args`.
  CommandResult Shardctl(const std::vector<std::string>& args,
                         std::chrono::milliseconds timeout = 90s);
  // Runs `shardctl <command> <args> --name <name> --state-dir <state root>`.
  CommandResult OnDeployment(const std::string& command, const std::vector<std::string>& args = {},
                             std::chrono::milliseconds timeout = 90s);
  // Starts `shardctl <command> <args> --name <name> --state-dir <state root>` in the background,
  // its stdout and stderr going to <scratch dir>/<log>.out and .err.
  std::unique_ptr<BackgroundCommand> StartOnDeployment(const std::string& command,
                                                       const std::vector<std::string>& args,
                                                       const std::string& log);
  // `up --shards N --base-port <base>` plus `extra`, on this test's deployment.
  CommandResult Up(int shards, const std::vector<std::string>& extra = {});
  // `status --json`; `exit_code` receives its exit code. Fails the test on unparsable output.
  json Status(int* exit_code = nullptr);
  // The same without failing: nullopt when it printed no JSON object (e.g. no deployment yet).
  std::optional<json> TryStatus(int* exit_code = nullptr);

  // Data is counted, not assumed: writes `count` keys "key:I" (and "with-ttl", EX 100000)
  // through the cluster with one `redis-cli -c` process, failing the test if it fails.
  void WriteKeys(int count);
  // `commands`, one a line, through one `redis-cli -c` to this test's deployment (base_port()),
  // failing the test if it fails.
  void SendThroughCluster(const std::string& commands);
  // DBSIZE of every primary status lists, by port (-1 where it did not answer).
  std::map<int, long long> KeysOnPrimaries();
  // Their sum.
  static long long TotalKeys(const std::map<int, long long>& keys);

  // A writer (tests/integration/acked_writer.py) writing unique keys until StopAckedWriter():
  // mode "--cluster" (redis-py's cluster client on `port`) or "--plain" (one endpoint: a proxy).
  struct AckedWriter {
    std::unique_ptr<BackgroundCommand> process;
    std::filesystem::path out;
    std::filesystem::path err;
  };
  AckedWriter StartAckedWriter(const std::string& mode, int port, const std::string& prefix);
  // Stops every writer of this test, waits for this one and returns its verdict ({"acked",
  // "lost", "wrong", "errors", ...}), failing the test when it has none.
  json StopAckedWriter(AckedWriter& writer);

  // Fails the test unless no process started by this test is alive and no pid file remains.
  void ExpectNothingRunning(const std::string& context);

  const std::filesystem::path& state_root() const { return state_root_->path(); }
  // A directory for the test's own files (configs, scripts); not a state root.
  const std::filesystem::path& scratch_dir() const { return scratch_->path(); }
  std::filesystem::path deployment_dir() const { return state_root() / name_; }
  int base_port() const { return ports_ ? ports_->base() : 0; }
  const std::string& name() const { return name_; }

 private:
  void KillLeftovers(const std::vector<RecordedProcess>& recorded);

  std::string name_ = "it";
  std::unique_ptr<TempDir> state_root_;
  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<PortBlock> ports_;
};

// Path of the built shardctl and of the repository, from the build.
std::string ShardctlBinary();
std::filesystem::path SourceDir();
std::filesystem::path FixturesDir();

}  // namespace shardctl::integration
