#include "launcher/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cstring>
#include <memory>

#include "launcher/shards.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;

constexpr auto kStopGrace = std::chrono::seconds(10);
constexpr size_t kMaxRequestBytes = 64 * 1024;

class Supervisor;

// One connection on the control socket. Freed in its close callback, as libuv requires.
struct ControlClient {
  uv_pipe_t pipe;
  std::string buffer;
  Supervisor* owner = nullptr;
};

struct PendingWrite {
  uv_write_t request;
  std::string data;
  bool stop_after = false;
};

class Supervisor {
 public:
  Supervisor(const DeploymentDir& dir, EventSink events) : dir_(dir), events_(std::move(events)) {}
  int Run();

  // Handles one request line; returns the reply and whether the supervisor must stop after it.
  json Handle(const std::string& line, bool& stop_after);
  void StopShards();
  void BeginShutdown();
  void OnChildExit();
  void RequestStop(int signal_number);

  uv_loop_t loop_;
  bool stop_requested_ = false;

 private:
  common::Status TakeLock();
  common::Status Listen();
  void InstallSignals();

  DeploymentDir dir_;
  EventSink events_;
  Deployment deployment_;
  std::vector<ProcessId> shards_;
  std::vector<std::string> last_exit_;
  std::shared_ptr<spdlog::logger> log_;
  int lock_fd_ = -1;
  uv_pipe_t server_;
  uv_signal_t signals_[3];
  bool shut_down_ = false;
};

void OnClientClosed(uv_handle_t* handle) { delete static_cast<ControlClient*>(handle->data); }

void OnWritten(uv_write_t* request, int /*status*/) {
  auto* write = static_cast<PendingWrite*>(request->data);
  auto* client = static_cast<ControlClient*>(request->handle->data);
  if (write->stop_after) client->owner->BeginShutdown();
  delete write;
}

void Reply(ControlClient* client, const json& reply, bool stop_after) {
  auto* write = new PendingWrite{.request = {}, .data = reply.dump() + "\n", .stop_after = stop_after};
  write->request.data = write;
  uv_buf_t buffer = uv_buf_init(write->data.data(), static_cast<unsigned>(write->data.size()));
  if (uv_write(&write->request, reinterpret_cast<uv_stream_t*>(&client->pipe), &buffer, 1,
               OnWritten) != 0) {
    if (stop_after) client->owner->BeginShutdown();
    delete write;
  }
}

void OnAlloc(uv_handle_t* /*handle*/, size_t suggested, uv_buf_t* buffer) {
  buffer->base = new char[suggested];
  buffer->len = suggested;
}

void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buffer) {
  auto* client = static_cast<ControlClient*>(stream->data);
  std::unique_ptr<char[]> owned(buffer->base);
  if (nread < 0 || client->buffer.size() > kMaxRequestBytes) {
    if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(stream))) {
      uv_close(reinterpret_cast<uv_handle_t*>(stream), OnClientClosed);
    }
    return;
  }
  client->buffer.append(buffer->base, static_cast<size_t>(nread));
  size_t newline;
  while ((newline = client->buffer.find('\n')) != std::string::npos) {
    std::string line = client->buffer.substr(0, newline);
    client->buffer.erase(0, newline + 1);
    bool stop_after = false;
    json reply = client->owner->Handle(line, stop_after);
    Reply(client, reply, stop_after);
  }
}

void OnConnection(uv_stream_t* server, int status) {
  if (status < 0) return;
  auto* owner = static_cast<Supervisor*>(server->data);
  auto* client = new ControlClient{.pipe = {}, .buffer = {}, .owner = owner};
  uv_pipe_init(&owner->loop_, &client->pipe, 0);
  client->pipe.data = client;
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&client->pipe)) != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&client->pipe), OnClientClosed);
    return;
  }
  uv_read_start(reinterpret_cast<uv_stream_t*>(&client->pipe), OnAlloc, OnRead);
}

void OnSignal(uv_signal_t* handle, int signal_number) {
  auto* owner = static_cast<Supervisor*>(handle->data);
  if (signal_number == SIGCHLD) {
    owner->OnChildExit();
  } else {
    owner->RequestStop(signal_number);
  }
}

common::Status Supervisor::TakeLock() {
  lock_fd_ = open(dir_.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return Error(dir_.LockFile().string() + ": " + strerror(errno));
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return Error("deployment \"" + deployment_.plan.name +
                 "\" already has a supervisor (see shardctl status)");
  }
  return common::Ok();
}

common::Status Supervisor::Listen() {
  std::string path = dir_.SocketPath().string();
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Error(path + ": socket path too long (use a shorter --state-dir)");
  }
  unlink(path.c_str());  // a stale socket of a dead supervisor; we hold the lock
  uv_pipe_init(&loop_, &server_, 0);
  server_.data = this;
  int error = uv_pipe_bind(&server_, path.c_str());
  if (error == 0) error = uv_listen(reinterpret_cast<uv_stream_t*>(&server_), 16, OnConnection);
  if (error != 0) return Error(path + ": cannot listen: " + uv_strerror(error));
  return common::Ok();
}

void Supervisor::InstallSignals() {
  const int numbers[3] = {SIGTERM, SIGINT, SIGCHLD};
  for (int i = 0; i < 3; ++i) {
    uv_signal_init(&loop_, &signals_[i]);
    signals_[i].data = this;
    uv_signal_start(&signals_[i], OnSignal, numbers[i]);
  }
}

void Supervisor::RequestStop(int signal_number) {
  if (log_) log_->info("signal {} received: stopping the deployment", signal_number);
  stop_requested_ = true;
  if (!shards_.empty()) BeginShutdown();
}

void Supervisor::OnChildExit() {
  for (size_t i = 0; i < shards_.size(); ++i) {
    if (auto how = ReapIfExited(shards_[i].pid)) {
      last_exit_[i] = *how;
      log_->warn("shard {} (pid {}) {}", i, shards_[i].pid, *how);
    }
  }
}

void Supervisor::StopShards() {
  if (shards_.empty()) return;
  log_->info("stopping {} shards", shards_.size());
  int killed = StopProcesses(shards_, kStopGrace);
  if (killed > 0) log_->warn("{} shards needed SIGKILL", killed);
  for (size_t i = 0; i < shards_.size(); ++i) {
    std::error_code ignored;
    std::filesystem::remove(dir_.ShardPidFile(static_cast<int>(i)), ignored);
  }
  shards_.clear();
}

void Supervisor::BeginShutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  StopShards();
  // Signal handles and the server carry `this` in data; clients carry their ControlClient.
  uv_walk(
      &loop_,
      [](uv_handle_t* handle, void* self) {
        if (uv_is_closing(handle)) return;
        uv_close(handle, handle->data == self ? nullptr : OnClientClosed);
      },
      this);
}

json Supervisor::Handle(const std::string& line, bool& stop_after) {
  json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string()) {
    return {{"ok", false}, {"error", "bad request: expected {\"cmd\": ...} on one line"}};
  }
  std::string command = request["cmd"];
  if (command == "ping") return {{"ok", true}, {"pid", getpid()}};
  if (command == "status") {
    json shards = json::array();
    for (size_t i = 0; i < shards_.size(); ++i) {
      shards.push_back({{"index", i},
                        {"pid", shards_[i].pid},
                        {"running", IsRunning(shards_[i])},
                        {"last_exit", last_exit_[i]}});
    }
    return {{"ok", true}, {"pid", getpid()}, {"shards", shards}};
  }
  if (command == "down") {
    log_->info("down requested over the control socket");
    size_t count = shards_.size();
    StopShards();
    stop_after = true;
    return {{"ok", true}, {"stopped", count}};
  }
  return {{"ok", false}, {"error", "unknown command \"" + command + "\" (known: ping, status, down)"}};
}

int Supervisor::Run() {
  auto deployment = ReadDeployment(dir_);
  if (!deployment.ok()) {
    events_({{"event", "failed"}, {"error", deployment.error().message()}});
    return 1;
  }
  deployment_ = std::move(deployment).value();
  log_ = spdlog::rotating_logger_mt("supervisor-" + deployment_.plan.name,
                                    dir_.SupervisorLog().string(), 10 << 20, 3);
  log_->flush_on(spdlog::level::info);
  uv_loop_init(&loop_);
  InstallSignals();
  auto fail = [&](const common::Error& error) {
    log_->error("start-up failed: {}", error.message());
    events_({{"event", "failed"}, {"error", error.message()}});
    BeginShutdown();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
    return 1;
  };
  if (auto status = TakeLock(); !status.ok()) return fail(status.error());
  if (auto status = Listen(); !status.ok()) return fail(status.error());
  log_->info("supervisor {} starting {} shards of {} {}", getpid(), deployment_.plan.shards.size(),
             deployment_.engine.Name(), deployment_.engine.version);
  auto progress = [&](const std::string& message) {
    log_->info("{}", message);
    events_({{"event", "progress"}, {"message", message}});
  };
  auto stop_check = [&]() -> common::Status {
    uv_run(&loop_, UV_RUN_NOWAIT);  // delivers SIGTERM/SIGINT that arrived during start-up
    if (stop_requested_) return Error("start-up interrupted by a stop request");
    return common::Ok();
  };
  auto report = StartDeployment(deployment_, dir_, progress, stop_check);
  if (!report.ok()) return fail(report.error());
  shards_ = report->shards;
  last_exit_.assign(shards_.size(), "");
  if (auto id = IdentifyProcess(getpid())) {
    if (auto written = WriteProcessId(dir_.SupervisorPidFile(), *id); !written.ok()) {
      log_->warn("{}", written.error().message());
    }
  }
  log_->info("cluster healthy: {} ms total", report->total.count());
  events_({{"event", "ready"},
           {"spawn_ms", report->spawn.count()},
           {"ping_ms", report->first_ping.count()},
           {"formation_ms", report->formation.count()},
           {"total_ms", report->total.count()},
           {"node_ids", report->node_ids},
           {"supervisor_pid", getpid()}});
  if (stop_requested_) BeginShutdown();
  uv_run(&loop_, UV_RUN_DEFAULT);
  int leftover = uv_loop_close(&loop_);
  std::error_code ignored;
  std::filesystem::remove(dir_.SocketPath(), ignored);
  std::filesystem::remove(dir_.SupervisorPidFile(), ignored);
  log_->info("supervisor stopped{}", leftover ? " (with open handles)" : "");
  close(lock_fd_);
  return 0;
}

}  // namespace

int RunSupervisor(const DeploymentDir& dir, const EventSink& events) {
  signal(SIGPIPE, SIG_IGN);
  Supervisor supervisor(dir, events);
  return supervisor.Run();
}

bool SupervisorRunning(const DeploymentDir& dir) {
  int fd = open(dir.LockFile().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool locked = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return locked;
}

Result<json> AskSupervisor(const DeploymentDir& dir, const json& request,
                           std::chrono::milliseconds timeout) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error(std::string("socket: ") + strerror(errno));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string path = dir.SocketPath().string();
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  timeval tv{.tv_sec = timeout.count() / 1000,
             .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return Error("no supervisor answers on " + path);
  }
  std::string line = request.dump() + "\n";
  std::string reply;
  bool sent = send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
  char buffer[4096];
  while (sent && reply.find('\n') == std::string::npos) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (reply.find('\n') == std::string::npos) return Error("the supervisor did not answer in time");
  auto parsed = json::parse(reply.substr(0, reply.find('\n')), nullptr, false);
  if (parsed.is_discarded()) return Error("the supervisor sent a malformed reply");
  return parsed;
}

}  // namespace shardctl::launcher
