#include "tests/integration/proxy_fixture.h"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "common/slots.h"

namespace shardctl::integration {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string ShardproxyBinary() { return SHARDPROXY_BINARY; }

std::string TextOf(const std::optional<RedisReply>& reply) {
  return reply ? reply->text : "<no reply>";
}

long long IntegerOf(const std::optional<RedisReply>& reply) { return reply ? reply->integer : -1; }

// ---- RedisConnection ----

std::unique_ptr<RedisConnection> RedisConnection::Open(int port, std::string* error,
                                                       std::chrono::milliseconds timeout) {
  const timeval tv{.tv_sec = static_cast<time_t>(timeout.count() / 1000),
                   .tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (context == nullptr || context->err) {
    if (error) *error = context ? context->errstr : "cannot allocate a hiredis context";
    if (context) redisFree(context);
    return nullptr;
  }
  redisSetTimeout(context, tv);
  return std::unique_ptr<RedisConnection>(new RedisConnection(context));
}

RedisConnection::~RedisConnection() { redisFree(context_); }

void RedisConnection::Append(const std::vector<std::string>& argv) {
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const auto& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  redisAppendCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data());
}

std::optional<RedisReply> RedisConnection::GetReply() {
  void* raw = nullptr;
  if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
    error_ = context_->errstr[0] ? context_->errstr : "no reply";
    return std::nullopt;
  }
  auto* reply = static_cast<redisReply*>(raw);
  RedisReply converted = ConvertRedisReply(reply);
  freeReplyObject(reply);
  return converted;
}

std::optional<RedisReply> RedisConnection::Command(const std::vector<std::string>& argv) {
  Append(argv);
  return GetReply();
}

// ---- RawConnection ----

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::Send(const std::string& bytes) {
  return fd_ >= 0 &&
         send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

bool RawConnection::ShutdownWrite() { return fd_ >= 0 && shutdown(fd_, SHUT_WR) == 0; }

std::string RawConnection::ReadUntil(size_t bytes, std::chrono::milliseconds timeout) {
  std::string data;
  const auto deadline = Clock::now() + timeout;
  std::vector<char> buffer(1 << 20);
  while (fd_ >= 0 && data.size() < bytes && Clock::now() < deadline) {
    pollfd entry{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&entry, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd_, buffer.data(), buffer.size(), 0);
    if (n <= 0) break;
    data.append(buffer.data(), static_cast<size_t>(n));
  }
  return data;
}

std::string RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout, bool* closed) {
  std::string data;
  *closed = false;
  const auto deadline = Clock::now() + timeout;
  while (fd_ >= 0 && Clock::now() < deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd entry{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&entry, 1, static_cast<int>(std::max<int64_t>(left.count(), 1))) <= 0) continue;
    char buffer[4096];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

// ---- ProxyTest ----

void ProxyTest::TearDown() {
  StopProxy();
  ShardctlTest::TearDown();
}

void ProxyTest::UpWithProxy(const std::vector<std::string>& proxy_flags) {
  auto up = Up(3);
  ASSERT_EQ(up.exit_code, 0) << up.Describe();
  StartProxy(proxy_flags);
}

void ProxyTest::StartProxy(const std::vector<std::string>& flags,
                           const std::function<bool()>& answers) {
  ASSERT_TRUE(fs::exists(ShardproxyBinary())) << ShardproxyBinary();
  std::vector<std::string> argv = {ShardproxyBinary(),
                                   "--cluster",
                                   "127.0.0.1:" + std::to_string(shard_port(0)),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(proxy_port()),
                                   "--threads",
                                   "2"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  proxy_ = std::make_unique<BackgroundCommand>(argv, scratch_dir() / "proxy.out",
                                               scratch_dir() / "proxy.err");
  std::optional<int> exited;
  const bool answering = WaitUntil(
      [&] {
        exited = proxy_->WaitForExit(0ms);
        if (exited) return true;
        if (answers) return answers();
        auto pong = QueryRedis(proxy_port(), {"PING"});
        return pong && pong->text == "PONG";
      },
      10s, 50ms);
  ASSERT_FALSE(exited.has_value()) << "shardproxy exited " << *exited << ": " << ProxyStderr();
  ASSERT_TRUE(answering) << "shardproxy never answered PING: " << ProxyStderr();
}

void ProxyTest::StopProxy() {
  if (!proxy_) return;
  auto proxy = std::move(proxy_);
  if (!proxy->WaitForExit(0ms)) kill(proxy->pid(), SIGTERM);
  const std::optional<int> code = proxy->WaitForExit(10s);
  EXPECT_EQ(code, std::optional<int>(0))
      << "shardproxy did not exit cleanly on SIGTERM (ASan reports land here): " << ProxyStderr();
}

std::string ProxyTest::ProxyStderr() const { return ReadFileText(scratch_dir() / "proxy.err"); }

std::vector<SlotRange> ProxyTest::SlotRanges() {
  std::vector<SlotRange> ranges;
  auto slots = QueryRedis(shard_port(0), {"CLUSTER", "SLOTS"});
  if (!slots || slots->kind != RedisReply::Kind::kArray) {
    ADD_FAILURE() << "CLUSTER SLOTS failed on shard 0";
    return ranges;
  }
  for (const RedisReply& range : slots->elements) {
    if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
    ranges.push_back({.first = static_cast<int>(range.elements[0].integer),
                      .last = static_cast<int>(range.elements[1].integer),
                      .port = static_cast<int>(range.elements[2].elements[1].integer)});
  }
  return ranges;
}

int ProxyTest::OwnerPort(int slot) {
  for (const SlotRange& range : SlotRanges()) {
    if (slot >= range.first && slot <= range.last) return range.port;
  }
  return 0;
}

std::vector<std::string> ProxyTest::KeyPerShard(int shards, const std::string& prefix) {
  std::vector<std::string> keys;
  for (int shard = 0; shard < shards; ++shard) keys.push_back(KeyOn(shard_port(shard), prefix));
  return keys;
}

std::string NodeId(int port) {
  auto id = QueryRedis(port, {"CLUSTER", "MYID"});
  return id ? id->text : "";
}

void ProxyTest::MoveSlotOf(const std::string& key, int from, int to) {
  const std::string slot = std::to_string(common::KeySlot(key));
  auto ok = [](int port, const std::vector<std::string>& command) {
    auto reply = QueryRedis(port, command);
    EXPECT_TRUE(reply && reply->text == "OK") << port << ": " << (reply ? reply->text : "none");
  };
  const std::string from_id = NodeId(from);
  const std::string to_id = NodeId(to);
  ok(to, {"CLUSTER", "SETSLOT", slot, "IMPORTING", from_id});
  ok(from, {"CLUSTER", "SETSLOT", slot, "MIGRATING", to_id});
  for (int guard = 0; guard < 100; ++guard) {
    auto keys = QueryRedis(from, {"CLUSTER", "GETKEYSINSLOT", slot, "100"});
    if (!keys || keys->elements.empty()) break;
    std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(to), "", "0",
                                        "5000",    "KEYS"};
    for (const RedisReply& name : keys->elements) migrate.push_back(name.text);
    ok(from, migrate);
  }
  // A node that loses a slot deletes the keys it still holds in it: none may be left behind.
  auto left = QueryRedis(from, {"CLUSTER", "COUNTKEYSINSLOT", slot});
  EXPECT_EQ(IntegerOf(left), 0) << "keys of slot " << slot << " still on " << from;
  std::set<int> others;
  for (const SlotRange& range : SlotRanges()) others.insert(range.port);
  others.erase(to);
  ok(to, {"CLUSTER", "SETSLOT", slot, "NODE", to_id});
  for (int port : others) ok(port, {"CLUSTER", "SETSLOT", slot, "NODE", to_id});
}

std::string ProxyTest::KeyOn(int port, const std::string& prefix) {
  const auto ranges = SlotRanges();
  for (int n = 0; n < 10000; ++n) {
    std::string key = prefix + std::to_string(n);
    const int slot = common::KeySlot(key);
    for (const SlotRange& range : ranges) {
      if (slot >= range.first && slot <= range.last && range.port == port) return key;
    }
  }
  ADD_FAILURE() << "no key " << prefix << "N is served by port " << port;
  return prefix;
}

std::map<std::string, std::string> ProxyTest::ProxyInfo() {
  std::map<std::string, std::string> fields;
  auto info = QueryRedis(proxy_port(), {"INFO", "proxy"});
  if (!info || info->kind != RedisReply::Kind::kString) return fields;
  for (const std::string& line : SplitLines(info->text)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value.back() == '\r') value.pop_back();
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

long long ProxyTest::ProxyCounter(const std::string& name) {
  auto fields = ProxyInfo();
  auto found = fields.find(name);
  if (found == fields.end()) {
    ADD_FAILURE() << "INFO proxy has no " << name;
    return -1;
  }
  return std::stoll(found->second);
}

pid_t ProxyTest::ShardPid(int index) {
  json pid = Status()["shards"][index]["pid"];
  return pid.is_number_integer() ? pid.get<pid_t>() : 0;
}

namespace {

std::vector<std::string> PythonScenarioArgv(int port, const std::string& scenario, int protocol,
                                            const std::vector<std::string>& extra) {
  const char* python = std::getenv("SHARDCTL_PYTHON");
  std::vector<std::string> argv = {python != nullptr && *python != '\0' ? python : "python3",
                                   (SourceDir() / "tests/integration/proxy_clients.py").string(),
                                   "--port",
                                   std::to_string(port),
                                   "--protocol",
                                   std::to_string(protocol)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(scenario);
  return argv;
}

}  // namespace

CommandResult ProxyTest::RunPythonScenario(const std::string& scenario, int protocol,
                                           const std::vector<std::string>& extra) {
  return RunCommand(PythonScenarioArgv(proxy_port(), scenario, protocol, extra), 60s);
}

std::unique_ptr<BackgroundCommand> ProxyTest::StartPythonScenario(
    const std::string& scenario, int protocol, const std::vector<std::string>& extra,
    const std::string& log) {
  return std::make_unique<BackgroundCommand>(
      PythonScenarioArgv(proxy_port(), scenario, protocol, extra), scratch_dir() / (log + ".out"),
      scratch_dir() / (log + ".err"));
}

}  // namespace shardctl::integration
