#include "common/uv/http_server.h"

#include <algorithm>

#include "common/endpoint.h"
#include "common/http.h"
#include "common/uv/address.h"

namespace shardctl::common::uv {
namespace {

constexpr uint64_t kMaxConnectionAgeMs = 5000;
constexpr uint64_t kSweepIntervalMs = 1000;
constexpr size_t kMaxConnections = 32;

}  // namespace

struct MetricsHttpServer::Listener : OwnedHandle {
  ~Listener() override {
    if (server != nullptr) server->listener_ = nullptr;
  }
  uv_tcp_t tcp{};
  MetricsHttpServer* server = nullptr;
};

struct MetricsHttpServer::Sweeper : OwnedHandle {
  ~Sweeper() override {
    if (server != nullptr) server->sweeper_ = nullptr;
  }
  uv_timer_t timer{};
  MetricsHttpServer* server = nullptr;
};

struct MetricsHttpServer::Connection : OwnedHandle {
  ~Connection() override {
    if (server != nullptr) server->Forget(this);
  }
  uv_tcp_t tcp{};
  uv_write_t write{};
  char buffer[1024];
  MetricsRequest request;
  std::string response;
  uint64_t opened_ms = 0;
  MetricsHttpServer* server = nullptr;

  uv_handle_t* handle() { return reinterpret_cast<uv_handle_t*>(&tcp); }
  uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp); }
  void Close() { CloseOwnedHandle(handle()); }
  void Answer();
};

void MetricsHttpServer::Connection::Answer() {
  uv_read_stop(stream());
  response = MetricsResponse(request, server->body_);
  uv_buf_t buf = uv_buf_init(response.data(), static_cast<unsigned>(response.size()));
  write.data = this;
  auto done = [](uv_write_t* written, int) {
    static_cast<Connection*>(written->data)->Close();  // one request per connection
  };
  if (uv_write(&write, stream(), &buf, 1, done) != 0) Close();
}

MetricsHttpServer::MetricsHttpServer(uv_loop_t* loop, Body body)
    : loop_(loop), body_(std::move(body)) {}

MetricsHttpServer::~MetricsHttpServer() {
  for (Connection* connection : std::vector<Connection*>(connections_)) {
    connection->server = nullptr;
    connection->Close();
  }
  connections_.clear();
  if (listener_ != nullptr) {
    listener_->server = nullptr;
    CloseOwnedHandle(reinterpret_cast<uv_handle_t*>(&listener_->tcp));
  }
  if (sweeper_ != nullptr) {
    sweeper_->server = nullptr;
    CloseOwnedHandle(reinterpret_cast<uv_handle_t*>(&sweeper_->timer));
  }
}

Status MetricsHttpServer::Listen(const std::string& host, int port) {
  const std::string where = FormatEndpoint(host, port);
  sockaddr_storage address{};
  if (!ParseIpAddress(host, port, address)) return Error(where + ": not an IP address");
  listener_ = new Listener();
  listener_->server = this;
  uv_tcp_init(loop_, &listener_->tcp);
  listener_->tcp.data = listener_;
  int error = uv_tcp_bind(&listener_->tcp, reinterpret_cast<sockaddr*>(&address), 0);
  if (error == 0) {
    error = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_->tcp), 64,
                      [](uv_stream_t* stream, int status) {
                        auto* listener = static_cast<Listener*>(stream->data);
                        if (status == 0 && listener->server != nullptr) listener->server->Accept();
                      });
  }
  if (error != 0) {
    listener_->server = nullptr;
    CloseOwnedHandle(reinterpret_cast<uv_handle_t*>(&listener_->tcp));
    listener_ = nullptr;
    return Error(where + ": " + uv_strerror(error));
  }
  sweeper_ = new Sweeper();
  sweeper_->server = this;
  uv_timer_init(loop_, &sweeper_->timer);
  sweeper_->timer.data = sweeper_;
  uv_timer_start(
      &sweeper_->timer,
      [](uv_timer_t* timer) {
        auto* sweeper = static_cast<Sweeper*>(timer->data);
        if (sweeper->server != nullptr) sweeper->server->Sweep();
      },
      kSweepIntervalMs, kSweepIntervalMs);
  return Ok();
}

int MetricsHttpServer::port() const {
  return listener_ != nullptr ? LocalPort(&listener_->tcp) : 0;
}

void MetricsHttpServer::Accept() {
  auto* connection = new Connection();
  uv_tcp_init(loop_, &connection->tcp);
  connection->tcp.data = connection;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_->tcp), connection->stream()) != 0 ||
      connections_.size() >= kMaxConnections) {
    connection->Close();  // never tracked: its destructor has no server to tell
    return;
  }
  connection->server = this;
  connection->opened_ms = uv_now(loop_);
  connections_.push_back(connection);
  uv_read_start(
      connection->stream(),
      [](uv_handle_t* handle, size_t, uv_buf_t* buf) {
        auto* owner = static_cast<Connection*>(handle->data);
        *buf = uv_buf_init(owner->buffer, sizeof owner->buffer);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        auto* owner = static_cast<Connection*>(stream->data);
        if (nread < 0 || owner->server == nullptr) return owner->Close();
        auto state = owner->request.Feed(std::string_view(buf->base, static_cast<size_t>(nread)));
        if (state != MetricsRequest::State::kIncomplete) owner->Answer();
      });
}

void MetricsHttpServer::Sweep() {
  const uint64_t now = uv_now(loop_);
  for (Connection* connection : std::vector<Connection*>(connections_)) {
    if (now - connection->opened_ms >= kMaxConnectionAgeMs) connection->Close();
  }
}

void MetricsHttpServer::Forget(Connection* connection) { std::erase(connections_, connection); }

}  // namespace shardctl::common::uv
