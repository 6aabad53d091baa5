#include "tests/integration/harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

extern char** environ;

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kFirstBase = 10000;
constexpr int kBaseCount = 240;  // bases 10000, 10050, ..., 21950
static_assert(kFirstBase + kBaseCount * kPortBlock - 1 + kBusPortOffset < 32768,
              "bus ports must stay below the kernel's ephemeral port range");
constexpr const char* kPortLockDir = "/tmp/shardctl-integration-ports";
constexpr auto kHeldOpenGrace = 2s;

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

std::vector<std::string> BuildEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> entries;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    if (!extra.count(text.substr(0, text.find('=')))) entries.push_back(text);
  }
  for (const auto& [key, value] : extra) entries.push_back(key + "=" + value);
  return entries;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// In the child: own process group (so a timeout can kill the whole group), given stdio, exec.
// Only async-signal-safe calls between fork and exec.
[[noreturn]] void ExecChild(char** argv, char** envp, int out_fd, int err_fd) {
  setpgid(0, 0);
  int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  execvpe(argv[0], argv, envp);
  const char message[] = "harness: exec failed\n";
  (void)!write(2, message, sizeof message - 1);
  _exit(127);
}

// Reads what is available on `fd` into `into`; returns false once the write end is closed.
bool Drain(int fd, std::string& into) {
  char buffer[8192];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    return errno == EAGAIN || errno == EINTR;
  }
}

struct ProcEntry {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';
  std::string comm;
};

std::optional<ProcEntry> ReadProcEntry(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  size_t open = stat.find('(');
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  ProcEntry entry;
  entry.pid = pid;
  entry.comm = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 2));
  fields >> entry.state >> entry.ppid;
  return entry;
}

std::vector<ProcEntry> AllProcesses() {
  std::vector<ProcEntry> entries;
  std::error_code error;
  for (const auto& item : fs::directory_iterator("/proc", error)) {
    const std::string name = item.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (auto entry = ReadProcEntry(std::stoi(name))) entries.push_back(*entry);
  }
  return entries;
}

RedisReply ConvertReply(const redisReply* reply) {
  RedisReply out;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.kind = RedisReply::Kind::kString;
      out.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_ERROR:
      out.kind = RedisReply::Kind::kError;
      out.text.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::kInteger;
      out.integer = reply->integer;
      out.text = std::to_string(reply->integer);
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::kArray;
      for (size_t i = 0; i < reply->elements; ++i) {
        out.elements.push_back(ConvertReply(reply->element[i]));
      }
      break;
    default:
      out.kind = RedisReply::Kind::kNil;
  }
  return out;
}

}  // namespace

std::string CommandResult::Describe() const {
  std::ostringstream text;
  text << (timed_out ? "TIMED OUT, " : "") << "exit " << exit_code << " after " << elapsed.count()
       << " ms" << (output_held_open ? " (output held open)" : "") << "\n--- stdout ---\n"
       << out << "--- stderr ---\n"
       << err << "---";
  return text.str();
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env) {
  CommandResult result;
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = BuildEnvironment(env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(environment);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << strerror(errno);
    return result;
  }
  auto started = Clock::now();
  pid_t pid = fork();
  if (pid == 0) ExecChild(c_args.data(), c_env.data(), out_pipe[1], err_pipe[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << strerror(errno);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return result;
  }
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
  bool out_open = true, err_open = true;
  std::optional<Clock::time_point> exited_at;
  for (;;) {
    if (!exited_at) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        result.exit_code = DecodeWaitStatus(status);
        exited_at = Clock::now();
      } else if (Clock::now() - started > timeout) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        result.exit_code = DecodeWaitStatus(status);
        result.timed_out = true;
        break;
      }
    }
    if (exited_at && !out_open && !err_open) break;
    if (exited_at && Clock::now() - *exited_at > kHeldOpenGrace) {
      result.output_held_open = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {err_open ? err_pipe[0] : -1, POLLIN, 0}};
    poll(fds, 2, 10);
    if (out_open) out_open = Drain(out_pipe[0], result.out);
    if (err_open) err_open = Drain(err_pipe[0], result.err);
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return result;
}

BackgroundCommand::BackgroundCommand(const std::vector<std::string>& argv, const fs::path& out,
                                     const fs::path& err,
                                     const std::map<std::string, std::string>& env) {
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = BuildEnvironment(env);
  std::vector<char*> c_args = CStrings(args);
  std::vector<char*> c_env = CStrings(environment);
  int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    ADD_FAILURE() << "cannot create " << out << " / " << err << ": " << strerror(errno);
    return;
  }
  pid_ = fork();
  if (pid_ == 0) ExecChild(c_args.data(), c_env.data(), out_fd, err_fd);
  if (pid_ < 0) ADD_FAILURE() << "fork: " << strerror(errno);
  close(out_fd);
  close(err_fd);
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ <= 0 || exit_code_) return;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
}

std::optional<int> BackgroundCommand::WaitForExit(std::chrono::milliseconds timeout) {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  WaitUntil(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        exit_code_ = DecodeWaitStatus(status);
        return true;
      },
      timeout, 10ms);
  return exit_code_;
}

std::optional<uint64_t> StartTimeOf(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  fields >> field;  // field 3: state
  if (field == "Z" || field == "X") return std::nullopt;
  for (int i = 4; i <= 22; ++i) fields >> field;
  return std::strtoull(field.c_str(), nullptr, 10);
}

bool IsAlive(pid_t pid, uint64_t start_time) {
  auto start = StartTimeOf(pid);
  return start && (start_time == 0 || *start == start_time);
}

std::optional<RecordedProcess> ReadPidFile(const fs::path& path) {
  std::ifstream in(path);
  RecordedProcess process;
  if (!(in >> process.pid >> process.start_time) || process.pid <= 0) return std::nullopt;
  process.source = path.string();
  return process;
}

std::vector<RecordedProcess> PidFilesUnder(const fs::path& state_root) {
  std::vector<RecordedProcess> found;
  std::error_code error;
  for (const auto& deployment : fs::directory_iterator(state_root, error)) {
    if (!deployment.is_directory(error)) continue;
    if (auto supervisor = ReadPidFile(deployment.path() / "supervisor.pid")) {
      found.push_back(*supervisor);
    }
    if (auto proxy = ReadPidFile(deployment.path() / "proxy.pid")) found.push_back(*proxy);
    for (const auto& shard : fs::directory_iterator(deployment.path() / "shards", error)) {
      if (auto process = ReadPidFile(shard.path() / "pid")) found.push_back(*process);
    }
  }
  return found;
}

void BecomeSubreaper() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    ADD_FAILURE() << "prctl(PR_SET_CHILD_SUBREAPER): " << strerror(errno);
  }
}

namespace {

std::vector<std::string>& Crashes() {
  static std::vector<std::string> crashes;
  return crashes;
}

void ReapZombie(const ProcEntry& zombie) {
  int status = 0;
  if (waitpid(zombie.pid, &status, WNOHANG) != zombie.pid || !WIFSIGNALED(status)) return;
  int number = WTERMSIG(status);
  if (number == SIGSEGV || number == SIGABRT || number == SIGBUS || number == SIGFPE ||
      number == SIGILL) {
    Crashes().push_back("pid " + std::to_string(zombie.pid) + " (" + zombie.comm +
                        "): " + strsignal(number));
  }
}

}  // namespace

std::vector<std::string> TakeCrashes() { return std::exchange(Crashes(), {}); }

std::vector<std::pair<pid_t, std::string>> LiveDescendants() {
  std::vector<ProcEntry> all = AllProcesses();
  std::multimap<pid_t, const ProcEntry*> children;
  for (const auto& entry : all) children.emplace(entry.ppid, &entry);
  std::vector<std::pair<pid_t, std::string>> live;
  std::vector<pid_t> pending = {getpid()};
  while (!pending.empty()) {
    pid_t parent = pending.back();
    pending.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      const ProcEntry& child = *it->second;
      pending.push_back(child.pid);
      if (child.state == 'Z' || child.state == 'X') {
        if (child.ppid == getpid()) ReapZombie(child);
        continue;
      }
      live.emplace_back(child.pid, child.comm);
    }
  }
  return live;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

std::string ReadFileText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<int> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) continue;
    size_t dash = part.find('-');
    char* end = nullptr;
    long first = std::strtol(part.c_str(), &end, 10);
    long last = dash == std::string::npos ? first : std::strtol(part.c_str() + dash + 1, &end, 10);
    if (end == nullptr || *end != '\0' || last < first) {
      ADD_FAILURE() << "malformed CPU list \"" << text << "\"";
      return cpus;
    }
    for (long cpu = first; cpu <= last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

std::string ProcStatusField(pid_t pid, const std::string& key) {
  for (const auto& line : SplitLines(ReadFileText("/proc/" + std::to_string(pid) + "/status"))) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::string value = line.substr(key.size() + 1);
    size_t first = value.find_first_not_of(" \t");
    return first == std::string::npos ? "" : value.substr(first);
  }
  return "";
}

bool HasEffectiveCapability(int cap) {
  for (const auto& line : SplitLines(ReadFileText("/proc/thread-self/status"))) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const uint64_t effective = std::stoull(line.substr(7), nullptr, 16);
    return (effective >> cap) & 1;
  }
  ADD_FAILURE() << "no CapEff line in /proc/thread-self/status";
  return false;
}

bool KernelAllowsRealtime() {
  bool allowed = false;
  std::thread probe([&] {
    sched_param lowest{};
    lowest.sched_priority = sched_get_priority_min(SCHED_FIFO);
    allowed = sched_setscheduler(0, SCHED_FIFO, &lowest) == 0;
    sched_param fair{};
    if (allowed) sched_setscheduler(0, SCHED_OTHER, &fair);
  });
  probe.join();
  return allowed;
}

namespace {

int BoundSocket(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int ListenOn(int port) {
  int fd = BoundSocket(port);
  if (fd >= 0 && listen(fd, 16) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string HttpExchange(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buffer[16384];
    for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;) response.append(buffer, n);
  }
  close(fd);
  return response;
}

bool PortBindable(int port) {
  int fd = BoundSocket(port);
  if (fd < 0) return false;
  close(fd);
  return true;
}

std::unique_ptr<PortBlock> PortBlock::Reserve() {
  if (mkdir(kPortLockDir, 0777) != 0 && errno != EEXIST) {
    ADD_FAILURE() << "mkdir " << kPortLockDir << ": " << strerror(errno);
    return nullptr;
  }
  // Parallel ctest processes have nearby pids, so starting at pid % count spreads them out; the
  // lock, not the arithmetic, is what makes a block ours.
  int start = static_cast<int>(getpid() % kBaseCount);
  for (int k = 0; k < kBaseCount; ++k) {
    int base = kFirstBase + ((start + k) % kBaseCount) * kPortBlock;
    std::string lock = std::string(kPortLockDir) + "/" + std::to_string(base) + ".lock";
    int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) continue;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      continue;
    }
    bool all_free = true;
    for (int i = 0; i < kPortBlock && all_free; ++i) {
      all_free = PortBindable(base + i) && PortBindable(base + kBusPortOffset + i);
    }
    if (all_free) return std::unique_ptr<PortBlock>(new PortBlock(base, fd));
    close(fd);
  }
  ADD_FAILURE() << "no free block of " << kPortBlock << " ports (and bus ports) in " << kFirstBase
                << "-" << kFirstBase + kBaseCount * kPortBlock - 1;
  return nullptr;
}

PortBlock::~PortBlock() { close(lock_fd_); }

TempDir::TempDir() {
  char pattern[] = "/tmp/shardctl-it.XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << strerror(errno);
    return;
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code error;
  fs::remove_all(path_, error);
}

std::optional<RedisReply> QueryRedis(int port, const std::vector<std::string>& command,
                                     std::string* error) {
  timeval timeout{.tv_sec = 2, .tv_usec = 0};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, timeout);
  if (context == nullptr || context->err) {
    if (error) *error = context ? context->errstr : "cannot allocate a hiredis context";
    if (context) redisFree(context);
    return std::nullopt;
  }
  redisSetTimeout(context, timeout);
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const auto& arg : command) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (reply == nullptr) {
    if (error) *error = context->errstr;
    redisFree(context);
    return std::nullopt;
  }
  RedisReply converted = ConvertReply(reply);
  freeReplyObject(reply);
  redisFree(context);
  return converted;
}

RedisReply ConvertRedisReply(const redisReply* reply) { return ConvertReply(reply); }

std::string ShardctlBinary() { return SHARDCTL_BINARY; }
fs::path SourceDir() { return SHARDCTL_SOURCE_DIR; }
fs::path FixturesDir() { return SHARDCTL_FIXTURES_DIR; }

// ---- the fixture ----

void ShardctlTest::SetUp() {
  BecomeSubreaper();
  // A missing server is a failure, not a skip: CI must notice it.
  auto redis = RunCommand({"redis-server", "--version"}, 10s);
  ASSERT_EQ(redis.exit_code, 0) << "redis-server must be installed: " << redis.Describe();
  auto cli = RunCommand({"redis-cli", "--version"}, 10s);
  ASSERT_EQ(cli.exit_code, 0) << "redis-cli must be installed: " << cli.Describe();
  ASSERT_TRUE(fs::exists(ShardctlBinary())) << ShardctlBinary();
  state_root_ = std::make_unique<TempDir>();
  ASSERT_FALSE(state_root().empty());
  scratch_ = std::make_unique<TempDir>();
  ASSERT_FALSE(scratch_dir().empty());
  ports_ = PortBlock::Reserve();
  ASSERT_NE(ports_, nullptr);
}

void ShardctlTest::TearDown() {
  if (!state_root_ || state_root().empty()) return;
  // Read the pid files first: `down --purge` deletes them.
  std::vector<RecordedProcess> recorded = PidFilesUnder(state_root());
  std::set<std::string> names = {name_};
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(state_root(), error)) {
    if (fs::exists(entry.path() / "deployment.json"))
      names.insert(entry.path().filename().string());
  }
  // A supervised shardproxy is stopped first, so its log holds any sanitizer report made at
  // exit (leaks): the proxy must shut down clean.
  for (const auto& name : names) {
    const fs::path proxy_log = state_root() / name / "proxy.log";
    if (!fs::exists(proxy_log)) continue;
    Shardctl({"down", "--name", name, "--state-dir", state_root().string()}, 90s);
    const std::string text = ReadFileText(proxy_log);
    EXPECT_EQ(text.find("Sanitizer"), std::string::npos) << proxy_log << ":\n" << text;
  }
  for (const auto& name : names) {
    auto down =
        Shardctl({"down", "--purge", "--name", name, "--state-dir", state_root().string()}, 90s);
    EXPECT_EQ(down.exit_code, 0) << "teardown: shardctl down --purge --name " << name << ": "
                                 << down.Describe();
    EXPECT_FALSE(fs::exists(state_root() / name)) << "down --purge left " << state_root() / name;
  }
  KillLeftovers(recorded);
  state_root_.reset();
  scratch_.reset();
  ports_.reset();
}

void ShardctlTest::KillLeftovers(const std::vector<RecordedProcess>& recorded) {
  std::vector<std::string> leaks;
  for (const auto& process : recorded) {
    if (!IsAlive(process.pid, process.start_time)) continue;
    leaks.push_back("pid " + std::to_string(process.pid) + " from " + process.source);
    kill(process.pid, SIGKILL);
  }
  for (const auto& [pid, command] : LiveDescendants()) {
    leaks.push_back("pid " + std::to_string(pid) + " (" + command + ")");
    kill(pid, SIGKILL);
  }
  bool gone = WaitUntil(
      [&] {
        for (const auto& process : recorded) {
          if (IsAlive(process.pid, process.start_time)) return false;
        }
        return LiveDescendants().empty();
      },
      10s);
  EXPECT_TRUE(gone) << "processes survived SIGKILL";
  std::string list;
  for (const auto& leak : leaks) list += "\n  " + leak;
  EXPECT_TRUE(leaks.empty()) << "still running after shardctl down --purge (now SIGKILLed):"
                             << list;
  std::string crashes;
  for (const auto& crash : TakeCrashes()) crashes += "\n  " + crash;
  EXPECT_TRUE(crashes.empty()) << "processes this test started crashed:" << crashes;
}

CommandResult ShardctlTest::Shardctl(const std::vector<std::string>& args,
                                     std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {ShardctlBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  // The variable keeps any command that forgets --state-dir away from the real default.
  return RunCommand(argv, timeout, {{"SHARDCTL_STATE_DIR", state_root().string()}});
}

CommandResult ShardctlTest::OnDeployment(const std::string& command,
                                         const std::vector<std::string>& args,
                                         std::chrono::milliseconds timeout) {
  std::vector<std::string> all = {command};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--name", name_, "--state-dir", state_root().string()});
  return Shardctl(all, timeout);
}

std::unique_ptr<BackgroundCommand> ShardctlTest::StartOnDeployment(
    const std::string& command, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {ShardctlBinary(), command};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--name", name_, "--state-dir", state_root().string()});
  return std::make_unique<BackgroundCommand>(
      argv, scratch_dir() / (log + ".out"), scratch_dir() / (log + ".err"),
      std::map<std::string, std::string>{{"SHARDCTL_STATE_DIR", state_root().string()}});
}

CommandResult ShardctlTest::Up(int shards, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--shards", std::to_string(shards), "--base-port",
                                   std::to_string(base_port())};
  args.insert(args.end(), extra.begin(), extra.end());
  return OnDeployment("up", args);
}

std::optional<json> ShardctlTest::TryStatus(int* exit_code) {
  auto status = OnDeployment("status", {"--json"}, 30s);
  if (exit_code) *exit_code = status.exit_code;
  json parsed = json::parse(status.out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

json ShardctlTest::Status(int* exit_code) {
  auto status = OnDeployment("status", {"--json"}, 30s);
  if (exit_code) *exit_code = status.exit_code;
  json parsed = json::parse(status.out, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    ADD_FAILURE() << "status --json did not print a JSON object: " << status.Describe();
    return json::object();
  }
  return parsed;
}

void ShardctlTest::WriteKeys(int count) {
  std::string script;
  for (int i = 0; i < count; ++i) {
    script += "SET key:" + std::to_string(i) + " value-" + std::to_string(i) + "\n";
  }
  script += "SET with-ttl kept EX 100000\n";
  SendThroughCluster(script);
}

void ShardctlTest::SendThroughCluster(const std::string& commands) {
  const auto file = scratch_dir() / "commands.txt";
  std::ofstream(file) << commands;
  auto sent = RunCommand(
      {"sh", "-c",
       "redis-cli -c -p " + std::to_string(base_port()) + " < " + file.string() + " > /dev/null"},
      120s);
  ASSERT_EQ(sent.exit_code, 0) << sent.Describe();
}

std::map<int, long long> ShardctlTest::KeysOnPrimaries() {
  std::map<int, long long> keys;
  const json status = Status();
  for (const auto& shard : status.value("shards", json::array())) {
    if (shard.value("role", "") != "primary") continue;
    const int port = shard["port"].get<int>();
    auto size = QueryRedis(port, {"DBSIZE"});
    keys[port] = size ? size->integer : -1;
  }
  return keys;
}

long long ShardctlTest::TotalKeys(const std::map<int, long long>& keys) {
  long long total = 0;
  for (const auto& [port, count] : keys) total += count;
  return total;
}

ShardctlTest::AckedWriter ShardctlTest::StartAckedWriter(const std::string& mode, int port,
                                                         const std::string& prefix) {
  const char* python = std::getenv("SHARDCTL_PYTHON");
  AckedWriter writer;
  writer.out = scratch_dir() / (prefix + ".out");
  writer.err = scratch_dir() / (prefix + ".err");
  writer.process = std::make_unique<BackgroundCommand>(
      std::vector<std::string>{python ? python : "python3",
                               (SourceDir() / "tests/integration/acked_writer.py").string(),
                               "--port", std::to_string(port), mode, "--prefix", prefix,
                               "--stop-file", (scratch_dir() / "stop-writers").string()},
      writer.out, writer.err);
  return writer;
}

json ShardctlTest::StopAckedWriter(AckedWriter& writer) {
  std::ofstream(scratch_dir() / "stop-writers").put('\n');
  auto code = writer.process->WaitForExit(120s);
  EXPECT_EQ(code, std::optional<int>(0)) << ReadFileText(writer.out) << ReadFileText(writer.err);
  json verdict = json::parse(ReadFileText(writer.out), nullptr, false);
  EXPECT_TRUE(verdict.is_object()) << ReadFileText(writer.out);
  return verdict.is_object() ? verdict : json::object();
}

void ShardctlTest::ExpectNothingRunning(const std::string& context) {
  std::string leaks;
  for (const auto& [pid, command] : LiveDescendants()) {
    leaks += "\n  pid " + std::to_string(pid) + " (" + command + ")";
  }
  for (const auto& process : PidFilesUnder(state_root())) {
    if (IsAlive(process.pid, process.start_time)) {
      leaks += "\n  pid " + std::to_string(process.pid) + " from " + process.source;
    }
  }
  EXPECT_TRUE(leaks.empty()) << context << ": processes left running:" << leaks;
}

}  // namespace shardctl::integration
