// The supervisor's control socket: a unix socket in the state dir speaking JSON lines (protocol in
// supervisor.h), and the client side used by the CLI.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "launcher/cluster/control_link.h"
#include "launcher/engine/engine.h"
#include "launcher/model/plan_json.h"
#include "launcher/os/files.h"
#include "launcher/state/deployment_store.h"
#include "launcher/supervisor/shards.h"
#include "launcher/supervisor/supervisor_internal.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using nlohmann::json;

// A reshape request carries a whole plan: ~200 bytes per shard, up to 1000 shards.
constexpr size_t kMaxRequestBytes = 1024 * 1024;
constexpr auto kRestartStopGrace = std::chrono::seconds(10);

struct PendingWrite {
  uv_write_t request;
  std::string data;
  bool stop_after = false;
};

Supervisor& Of(uv_handle_t* handle) { return *static_cast<Supervisor*>(handle->loop->data); }

void CloseClient(uv_stream_t* stream) {
  common::uv::CloseOwnedHandle(common::uv::AsHandle(stream));
}

void Reply(ControlClient* client, const json& reply, bool stop_after) {
  auto* write =
      new PendingWrite{.request = {}, .data = reply.dump() + "\n", .stop_after = stop_after};
  write->request.data = write;
  uv_buf_t buffer = uv_buf_init(write->data.data(), static_cast<unsigned>(write->data.size()));
  auto done = [](uv_write_t* request, int) {
    auto* finished = static_cast<PendingWrite*>(request->data);
    if (finished->stop_after) Of(reinterpret_cast<uv_handle_t*>(request->handle)).BeginShutdown();
    delete finished;
  };
  if (uv_write(&write->request, reinterpret_cast<uv_stream_t*>(&client->pipe), &buffer, 1, done) !=
      0) {
    if (stop_after) Of(reinterpret_cast<uv_handle_t*>(&client->pipe)).BeginShutdown();
    delete write;
  }
}

void OnRead(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buffer) {
  std::unique_ptr<char[]> owned(buffer->base);
  auto* client = static_cast<ControlClient*>(stream->data);
  if (nread < 0 || client->buffer.size() > kMaxRequestBytes) {
    CloseClient(stream);
    return;
  }
  client->buffer.append(buffer->base, static_cast<size_t>(nread));
  size_t newline;
  while (!uv_is_closing(reinterpret_cast<uv_handle_t*>(stream)) &&
         (newline = client->buffer.find('\n')) != std::string::npos) {
    std::string line = client->buffer.substr(0, newline);
    client->buffer.erase(0, newline + 1);
    bool stop_after = false;
    json reply = Of(reinterpret_cast<uv_handle_t*>(stream)).Handle(line, stop_after);
    Reply(client, reply, stop_after);
    if (stop_after) break;
  }
}

void OnConnection(uv_stream_t* server, int status) {
  if (status < 0) return;
  auto* client = new ControlClient();
  uv_pipe_init(server->loop, &client->pipe, 0);
  client->pipe.data = client;
  auto* stream = reinterpret_cast<uv_stream_t*>(&client->pipe);
  if (uv_accept(server, stream) != 0) {
    CloseClient(stream);
    return;
  }
  uv_read_start(
      stream,
      [](uv_handle_t*, size_t suggested, uv_buf_t* buffer) {
        buffer->base = new char[suggested];
        buffer->len = suggested;
      },
      OnRead);
}

}  // namespace

common::Status Supervisor::Listen() {
  std::string path = dir_.SocketPath().string();
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return Error(path + ": socket path too long (use a shorter --state-dir)");
  }
  unlink(path.c_str());  // a stale socket of a dead supervisor; we hold the lock
  uv_pipe_init(&loop_, &server_, 0);
  int error = uv_pipe_bind(&server_, path.c_str());
  if (error == 0) error = uv_listen(reinterpret_cast<uv_stream_t*>(&server_), 16, OnConnection);
  if (error != 0) return Error(path + ": cannot listen: " + uv_strerror(error));
  return common::Ok();
}

json Supervisor::StatusReply() const {
  json shards = json::array();
  auto now = SteadyClock::now();
  // Load shares and hot slots come from the /metrics poller's last round, when it runs.
  std::vector<MetricsPoller::Sample> polled;
  if (metrics_poller_) polled = metrics_poller_->Latest();
  for (const auto& slot : slots_) {
    const ProcessWatcher& watcher = slot->watcher;
    const bool looping = watcher.CrashLooping(now);
    json shard = {{"index", slot->index},
                  {"pid", watcher.running() ? json(watcher.process().pid) : json(nullptr)},
                  {"state", looping && slot->state != "disk-full" ? "crashloop" : slot->state},
                  {"restarts", watcher.restarts()},
                  {"adopted", watcher.running() && !watcher.is_child()},
                  {"last_exit", watcher.last_exit()},
                  {"last_exit_unix_ms", watcher.last_exit_unix_ms()}};
    if (watcher.running()) {
      shard["uptime_ms"] =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - watcher.started()).count();
    }
    if (looping) shard["log_tail"] = TailOfFile(dir_.ShardLog(slot->index), 5);
    const auto position = static_cast<size_t>(slot->position);
    if (position < polled.size() && polled[position].load_share) {
      shard["load_share"] = *polled[position].load_share;
    }
    shards.push_back(shard);
  }
  // "shard_engines": this supervisor records each shard's engine (a restart --engine of one shard
  // switches it alone); one started by an older shardctl records one engine for all.
  json reply = {{"ok", true}, {"pid", getpid()}, {"shards", shards}, {"shard_engines", true}};
  if (proxy_) reply["proxy"] = proxy_->Status();
  if (metrics_poller_) {
    const MetricsPoller::Slots slots = metrics_poller_->LatestSlots();
    reply["slots"] = SlotsStatusJson(slots.slot_stats, slots.hot);
  }
  return reply;
}

json Supervisor::RestartReply(const json& request) {
  if (!request.contains("shard") || !request["shard"].is_number_integer()) {
    return {{"ok", false}, {"error", "restart needs \"shard\": <index>"}};
  }
  int index = request["shard"].get<int>();
  if (SlotOf(index) == nullptr) {
    return {{"ok", false},
            {"error", "no shard " + std::to_string(index) + " (shardctl status lists the shards)"}};
  }
  std::optional<Engine> engine;
  if (request.contains("engine")) {
    auto given = EngineFromJson(request["engine"]);
    if (!given.ok()) return {{"ok", false}, {"error", "restart: " + given.error().message()}};
    engine = std::move(given).value();
  }
  // This shard's engine from now on (the others keep theirs: one that crashes comes back on its
  // own), recorded once the shard is sure to be started again: not for a refused handover.
  const auto record_engine = [&]() -> std::optional<std::string> {
    if (!engine) return std::nullopt;
    RecordShardEngine(deployment_, index, *engine);
    if (auto written = WriteDeployment(dir_, deployment_); !written.ok()) {
      return written.error().message();
    }
    return std::nullopt;
  };
  ShardSlot& slot = *SlotOf(index);
  json reply = {{"ok", true}, {"shard", index}};
  if (!slot.watcher.running()) {  // waiting for a backoff timer: start it now
    slot.watcher.CancelRestart();
    slot.watcher.policy().Reset();
    if (request.value("discard_data", false)) DiscardShardData(index);
    if (request.value("load_placed", false)) LoadPlacedSnapshot(index);
    if (auto failed = record_engine()) return {{"ok", false}, {"error", *failed}};
    Respawn(slot);
    reply["old_pid"] = nullptr;
    return reply;
  }
  const pid_t pid = slot.watcher.process().pid;
  log_->info("restart of shard {} (pid {}) requested", index, pid);
  // A primary with a replica hands its slots over first, so no write is refused while it is down.
  // Not when it is to load a backup: the data must come back on this node, and its replicas
  // (kept from taking over by restore) copy it from there.
  const bool load_placed = request.value("load_placed", false);
  const bool handed_over = !load_placed && HandOverPrimary(slot, FailoverMode::kGraceful);
  if (!handed_over && request.value("require_handover", false)) {
    // The caller keeps the keys another way (a snapshot) and asks again; nothing is stopped.
    return {{"ok", false},
            {"handover_failed", true},
            {"error", "no replica of shard " + std::to_string(index) + " took over its slots"}};
  }
  if (auto failed = record_engine()) return {{"ok", false}, {"error", *failed}};
  reply["handed_over"] = handed_over;
  reply["old_pid"] = pid;
  slot.restart_requested = true;
  slot.discard_data = request.value("discard_data", false);
  slot.load_placed = load_placed;
  slot.restart_kill_deadline = SteadyClock::now() + kRestartStopGrace;
  ArmSaveOnShutdown(*access_.Current(), deployment_, deployment_.plan.shards[slot.position]);
  kill(pid, SIGTERM);  // Redis shuts down cleanly on SIGTERM
  return reply;
}

json Supervisor::Handle(const std::string& line, bool& stop_after) {
  json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string()) {
    return {{"ok", false}, {"error", "bad request: expected {\"cmd\": ...} on one line"}};
  }
  std::string command = request["cmd"];
  if (shutting_down_) return {{"ok", false}, {"error", "the supervisor is stopping"}};
  if (command == "ping") return {{"ok", true}, {"pid", getpid()}};
  if (command == "status") return StatusReply();
  if (command == "restart") return RestartReply(request);
  if (command == "reshape") return ReshapeReply(request);
  if (command == "save") {
    if (!forks_) {
      return {{"ok", false},
              {"error",
               "persistence is none: this deployment keeps nothing on disk (start it "
               "with --persistence rdb or aof)"}};
    }
    forks_->RequestSaveAll();
    log_->info("save of every shard requested (at most {} forks at once)",
               deployment_.durability.fork_limit);
    return {{"ok", true}, {"fork_limit", deployment_.durability.fork_limit}};
  }
  if (command == "reload-tls") {
    // Renewed certificates on disk: this process's links to the shards present the new one
    // from now on (shards with tls-auth-clients yes check it).
    if (!deployment_.tls.enabled()) {
      return {{"ok", false}, {"error", "this deployment runs without TLS"}};
    }
    // The health, metrics and fork threads pick the new access up at their next connect.
    auto reloaded = AccessFor(deployment_);
    if (!reloaded.ok()) return {{"ok", false}, {"error", reloaded.error().message()}};
    access_.Replace(std::move(reloaded).value());
    log_->info("TLS files reloaded: {}", deployment_.tls.cert);
    return {{"ok", true}};
  }
  if (command == "down") {
    log_->info("down requested over the control socket");
    size_t count = 0;
    for (const auto& slot : slots_) count += slot->watcher.running();
    save_at_shutdown_ = request.value("save", true);
    StopAll();
    stop_after = true;
    return {{"ok", true}, {"stopped", count}};
  }
  return {{"ok", false},
          {"error", "unknown command \"" + command +
                        "\" (known: ping, status, restart, reshape, save, reload-tls, down)"}};
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
    // Mostly seen when the supervisor died while a command ran: say how to go on.
    return Error("no supervisor answers on " + path +
                 " (shardctl up of this deployment starts it again, adopting the running shards; "
                 "then run the command again)");
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
