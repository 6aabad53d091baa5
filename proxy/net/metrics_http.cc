#include "proxy/net/metrics_http.h"

#include <algorithm>

#include "common/endpoint.h"
#include "common/http.h"

namespace shardctl::proxy {
namespace {

constexpr uint64_t kMaxConnectionAgeMs = 5000;
constexpr uint64_t kSweepIntervalMs = 1000;
constexpr size_t kMaxConnections = 32;

template <typename T>
uv_handle_t* Handle(T* handle) {
  return reinterpret_cast<uv_handle_t*>(handle);
}

}  // namespace

// One scrape: freed in its close callback, after any write callback.
struct MetricsEndpoint::Connection {
  uv_tcp_t tcp{};
  uv_write_t write{};
  char buffer[1024];
  common::MetricsRequest request;
  std::string response;
  uint64_t opened_ms = 0;
  MetricsEndpoint* endpoint = nullptr;

  void Close() {
    if (uv_is_closing(Handle(&tcp))) return;
    uv_close(Handle(&tcp), [](uv_handle_t* handle) {
      auto* connection = static_cast<Connection*>(handle->data);
      if (connection->endpoint != nullptr)
        std::erase(connection->endpoint->connections_, connection);
      delete connection;
    });
  }

  void Answer() {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp));
    response = common::MetricsResponse(request, endpoint->body_);
    uv_buf_t buf = uv_buf_init(response.data(), static_cast<unsigned>(response.size()));
    write.data = this;
    auto done = [](uv_write_t* written, int) { static_cast<Connection*>(written->data)->Close(); };
    if (uv_write(&write, reinterpret_cast<uv_stream_t*>(&tcp), &buf, 1, done) != 0) Close();
  }
};

MetricsEndpoint::MetricsEndpoint() = default;

MetricsEndpoint::~MetricsEndpoint() {
  Stop();
  if (initialized_) {
    // Never started: the handles opened by Listen() are closed here, on this thread.
    CloseAll();
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  }
}

common::Status MetricsEndpoint::Listen(const std::string& host, int port) {
  const std::string where = common::FormatEndpoint(host, port);
  sockaddr_storage address{};
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&address)) != 0 &&
      uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&address)) != 0) {
    return common::Error(where + ": not an IP address");
  }
  uv_loop_init(&loop_);
  loop_.data = this;
  initialized_ = true;
  uv_tcp_init(&loop_, &listener_);
  uv_timer_init(&loop_, &sweep_);
  uv_async_init(&loop_, &stop_, [](uv_async_t* async) {
    static_cast<MetricsEndpoint*>(async->loop->data)->CloseAll();
  });
  int error = uv_tcp_bind(&listener_, reinterpret_cast<sockaddr*>(&address), 0);
  if (error == 0) {
    error = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 64,
                      [](uv_stream_t* server, int status) {
                        if (status == 0)
                          static_cast<MetricsEndpoint*>(server->loop->data)->Accept();
                      });
  }
  if (error != 0) return common::Error(where + ": " + uv_strerror(error));
  listening_ = true;
  return common::Ok();
}

void MetricsEndpoint::Start(Body body) {
  if (!listening_) return;
  body_ = std::move(body);
  uv_timer_start(
      &sweep_, [](uv_timer_t* timer) { static_cast<MetricsEndpoint*>(timer->loop->data)->Sweep(); },
      kSweepIntervalMs, kSweepIntervalMs);
  thread_ = std::thread([this] {
    uv_run(&loop_, UV_RUN_DEFAULT);
    uv_loop_close(&loop_);
  });
  initialized_ = false;  // the thread closes the loop now
}

void MetricsEndpoint::Stop() {
  if (!thread_.joinable()) return;
  uv_async_send(&stop_);
  thread_.join();
}

void MetricsEndpoint::CloseAll() {
  for (Connection* connection : std::vector<Connection*>(connections_)) connection->Close();
  for (uv_handle_t* handle : {Handle(&listener_), Handle(&sweep_), Handle(&stop_)}) {
    if (!uv_is_closing(handle)) uv_close(handle, nullptr);
  }
}

void MetricsEndpoint::Accept() {
  auto* connection = new Connection();
  uv_tcp_init(&loop_, &connection->tcp);
  connection->tcp.data = connection;
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_),
                reinterpret_cast<uv_stream_t*>(&connection->tcp)) != 0 ||
      connections_.size() >= kMaxConnections) {
    connection->Close();  // never tracked
    return;
  }
  connection->endpoint = this;
  connection->opened_ms = uv_now(&loop_);
  connections_.push_back(connection);
  uv_read_start(
      reinterpret_cast<uv_stream_t*>(&connection->tcp),
      [](uv_handle_t* handle, size_t, uv_buf_t* buf) {
        auto* owner = static_cast<Connection*>(handle->data);
        *buf = uv_buf_init(owner->buffer, sizeof owner->buffer);
      },
      [](uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
        auto* owner = static_cast<Connection*>(stream->data);
        if (nread < 0) return owner->Close();
        auto state = owner->request.Feed(std::string_view(buf->base, static_cast<size_t>(nread)));
        if (state != common::MetricsRequest::State::kIncomplete) owner->Answer();
      });
}

void MetricsEndpoint::Sweep() {
  const uint64_t now = uv_now(&loop_);
  for (Connection* connection : std::vector<Connection*>(connections_)) {
    if (now - connection->opened_ms >= kMaxConnectionAgeMs) connection->Close();
  }
}

}  // namespace shardctl::proxy
